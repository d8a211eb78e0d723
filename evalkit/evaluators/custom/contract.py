"""The result contract of custom evaluators (seed: "Add custom evaluators").

An evaluator returns ``{"score", "reason"}``; the framework derives ``result`` (score >= threshold) and
attaches ``threshold``; a returned ``result`` / ``threshold`` is ignored. ``{"error": msg}`` keeps only the
message; the legacy ``{"result": "error", "error": ...}`` is accepted. Anything else that cannot be read
as a finite number becomes an error result for that evaluator on that row, with a message saying why.
One bad row is one error: a score beyond the float range (``10**400``) or a ``reason`` / ``error`` / exception
whose ``str()`` raises is reported on that row alone, never as a crash of the evaluator's whole column.
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
        if message in (None, ""):
            raise ContractError("evaluator reported an error", "evaluatorError")
        raise ContractError(
            _text(message, "evaluator reported an error, but its 'error' value cannot be turned into text"),
            "evaluatorError",
        )
    if "score" not in out:
        raise ContractError("could not parse score: the result has no 'score' key")
    score = _number(out["score"])
    if llm:
        score = _judge_score(score, out["score"])
    reason = out.get("reason")
    if reason is None or type(reason) is str:
        return score, reason or ""
    try:
        return score, str(reason)
    except Exception as exc:  # noqa: BLE001 - user object: its __str__ may do anything
        raise ContractError(
            f"the 'reason' ({type(reason).__name__}) cannot be turned into text: {describe_exception(exc)}; "
            "return a string"
        ) from None


def _text(value: Any, fallback: str) -> str:
    try:
        return str(value)
    except Exception as exc:  # noqa: BLE001 - user object: its __str__ may do anything
        return f"{fallback} ({describe_exception(exc)})"


def describe_exception(exc: BaseException) -> str:
    """``"Type: message"`` for an exception raised by user code, even when its own ``__str__`` raises."""
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - the exception's __str__ failed too
        return f"{type(exc).__name__} (its message cannot be turned into text)"


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ContractError(f"could not parse score: {_short(value)} is not a number")
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range, e.g. 10**400
        raise ContractError(f"could not parse score: {_short(value)} is not a finite number") from None
    if not math.isfinite(number):
        raise ContractError(f"could not parse score: {_short(value)} is not a finite number")
    return number


def _short(value: Any) -> str:
    """A score for a message: huge integers shortened (repr of 10**400 is 401 digits)."""
    if isinstance(value, int) and abs(value) > 10**30:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 - user object: its __repr__ may do anything
        return f"a {type(value).__name__}"


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
