"""keyword_coverage: share of the configured ``keywords`` found in the response (code-only; 0.0-1.0).

A graded score: set a fractional threshold in the document, e.g. ``{"threshold": 0.75}``.
Without keywords there is nothing to check, which is reported through the error channel.
"""


class KeywordCoverageEvaluator:
    def __init__(self, *, threshold=1, options=None, **_):
        self.keywords = [str(k).lower() for k in (options or {}).get("keywords", [])]

    def __call__(self, *, response: str = "", **_) -> dict:
        if not self.keywords:
            return {"error": "no keywords configured: set options.keywords to a list of words"}
        text = response.lower()
        found = [k for k in self.keywords if k in text]
        missing = [k for k in self.keywords if k not in text]
        score = round(len(found) / len(self.keywords), 2)
        reason = f"{len(found)} of {len(self.keywords)} keywords"
        return {"score": score, "reason": reason + (f"; missing: {', '.join(missing)}" if missing else "")}
