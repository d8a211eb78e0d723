"""The result contract of custom evaluators (seed: "Add custom evaluators").

An evaluator returns ``{"score", "reason"}``; the framework derives ``result`` (score >= threshold) and
attaches ``threshold``; a returned ``result`` / ``threshold`` is ignored. ``{"error": msg}`` keeps only the
message; the legacy ``{"result": "error", "error": ...}`` is accepted. Anything else that cannot be read
as a finite number becomes an error result for that evaluator on that row, with a message saying why.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

#: Hint added to TypeErrors that come from a signature that does not accept the framework's keywords.
SIGNATURE_HINT = (
    "accept the keywords you do not use with a **_ catch-all, e.g. def __call__(self, *, response='', **_)"
)


class ContractError(Exception):
    """A returned value that breaks the result contract; carries the upstream error code."""

    def __init__(self, message: str, code: str = "invalidEvaluatorResult"):
        super().__init__(message)
        self.code = code


def read_score(out: Any, *, llm: bool) -> tuple[float, str]:
    """Return ``(score, reason)`` from an evaluator's return value, or raise ``ContractError``."""
    if not isinstance(out, dict):
        raise ContractError(
            f"returned {type(out).__name__}, expected a dict like {{'score': 1, 'reason': '...'}}"
        )
    if out.get("error") not in (None, "") or out.get("result") == "error":
        message = out.get("error")
        raise ContractError(
            str(message) if message not in (None, "") else "evaluator reported an error", "evaluatorError"
        )
    if "score" not in out:
        raise ContractError("could not parse score: the result has no 'score' key")
    score = _number(out["score"])
    if llm:
        score = _judge_score(score, out["score"])
    reason = out.get("reason")
    return score, "" if reason is None else str(reason)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ContractError(f"could not parse score: {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise ContractError(f"could not parse score: {value!r} is not a finite number")
    return number


def _judge_score(number: float, raw: Any) -> float:
    if number != int(number) or not 1 <= number <= 5:
        raise ContractError(f"could not parse score: {raw!r} is not an integer from 1 to 5")
    return float(int(number))


def signature_message(exc: TypeError) -> str:
    """The message for a TypeError, with the ``**_`` hint when it comes from a call signature."""
    text = str(exc)
    if "keyword argument" in text or "positional argument" in text:
        return f"TypeError: {text} ({SIGNATURE_HINT})"
    return f"TypeError: {text}"
