"""A code-only evaluator for the golden result set: the score is the item's ``options.value`` (default -0.5),
so results.json and results.csv get negative, tiny, huge and integral numbers from a real custom evaluator."""


class SignedScore:
    def __init__(self, *, threshold, options=None, **_):
        self.threshold = threshold
        self.value = (options or {}).get("value", -0.5)

    def __call__(self, *, response="", **_):
        return {
            "score": self.value,
            "reason": f"value {self.value!r} for a response of {len(response)} chars",
        }
