"""answer_length: the response has between ``min_words`` and ``max_words`` words (code-only; 1 or 0)."""


class AnswerLengthEvaluator:
    def __init__(self, *, threshold=1, options=None, **_):
        options = options or {}
        self.min_words = int(options.get("min_words", 1))
        self.max_words = int(options.get("max_words", 150))

    def __call__(self, *, response: str = "", **_) -> dict:
        words = len(response.split())
        if words < self.min_words:
            return {"score": 0, "reason": f"{words} words; at least {self.min_words} expected"}
        if words > self.max_words:
            return {"score": 0, "reason": f"{words} words; at most {self.max_words} expected"}
        return {"score": 1, "reason": f"{words} words, within {self.min_words}-{self.max_words}"}
