"""forbidden_terms: fail when the response uses any configured term (code-only; 1 = clean, 0 = found).

Options: ``terms`` (list of strings), ``case_sensitive`` (default false).
"""


class ForbiddenTermsEvaluator:
    def __init__(self, *, threshold=1, options=None, **_):
        options = options or {}
        self.case_sensitive = bool(options.get("case_sensitive", False))
        terms = [str(t) for t in options.get("terms", [])]
        self.terms = terms if self.case_sensitive else [t.lower() for t in terms]

    def __call__(self, *, response: str = "", **_) -> dict:
        text = response if self.case_sensitive else response.lower()
        found = [t for t in self.terms if t in text]
        if found:
            return {"score": 0, "reason": "Found forbidden term(s): " + ", ".join(found)}
        return {"score": 1, "reason": "No forbidden terms"}
