"""One strict reading of judge answers, shared by every judge kind (built-in, custom ``.prompty``, span judges).

Why: the readers grew apart. The built-in judges took ``3.5``, ``true`` and ``"4"`` as scores (``float()``
of whatever came), Python's ``json`` kept the last of two ``"score"`` keys (``{"score": 5, "score": 1}``
scored 1, silently) and a 100 MB answer was stored whole in results.json and results.csv. Here:

- ``answer_limit()``: the most characters a judge's answer (the message content) may have,
  ``EVALKIT_JUDGE_ANSWER_LIMIT`` (default 4,194,304, about 4 MB). A longer answer is refused before it is
  read (``check_answer``): an error result saying how long it was and the limit; nothing of it is kept.
- ``loads``: the answer read by evalkit's one bounded JSON parser (``evalkit.documents.json_input``): an
  object with a repeated key, at any depth, is a ``DuplicateKey``; anything else it refuses (not JSON, nested
  too deeply, NaN) a ``JsonInputError``; both are ``ValueError``s.
- ``check_answer``: both checks on a raw answer, raised as ``JudgeFailure`` (``judgeOutputUnparseable``,
  "could not parse score: ..."); the duplicate check only when the answer is a JSON object (a text answer is
  the reader's to read).
- ``integer_score``: a score is an integer on the judge's scale: a JSON integer, or a float with no fraction
  (``4.0``); never a bool, a string or a fraction.
- ``cut_reason``: a stored reason keeps at most ``reason_limit()`` characters (``EVALKIT_REASON_LIMIT``,
  default 20,000), ending in a marker that says how much was cut.

May import: ``evalkit.judges.failures``, ``evalkit.documents.json_input``.
"""

from __future__ import annotations

import math
import os
from typing import Any

from evalkit.documents.json_input import JsonInputError, parse_json_text
from evalkit.judges.failures import JudgeFailure

ANSWER_LIMIT_VARIABLE = "EVALKIT_JUDGE_ANSWER_LIMIT"
REASON_LIMIT_VARIABLE = "EVALKIT_REASON_LIMIT"
DEFAULT_ANSWER_LIMIT = 4 * 1024 * 1024
DEFAULT_REASON_LIMIT = 20_000
UNPARSEABLE = "judgeOutputUnparseable"
_QUOTE = 200


class DuplicateKey(ValueError):
    """A JSON object that names one key twice."""

    def __init__(self, key: str):
        super().__init__(f"the key {key!r} appears more than once in one object")
        self.key = key


def _limit(variable: str, default: int) -> int:
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise JudgeFailure(
            f"{variable}={raw!r} is not a whole number of characters; unset it or give e.g. {default}",
            "evaluatorConfigurationError",
        ) from None
    return max(1, value)


def answer_limit() -> int:
    """The most characters a judge's answer may have (``EVALKIT_JUDGE_ANSWER_LIMIT``)."""
    return _limit(ANSWER_LIMIT_VARIABLE, DEFAULT_ANSWER_LIMIT)


def reason_limit() -> int:
    """The most characters of a judge's reason kept in results (``EVALKIT_REASON_LIMIT``)."""
    return _limit(REASON_LIMIT_VARIABLE, DEFAULT_REASON_LIMIT)


def loads(text: str | bytes) -> Any:
    """The answer parsed by the one bounded parser: a repeated key raises ``DuplicateKey``, anything else it
    refuses a ``JsonInputError`` (both ``ValueError``s; the answer's size is ``check_answer``'s to limit)."""
    try:
        return parse_json_text(text, limit=None)
    except JsonInputError as exc:
        if exc.duplicate_key is not None:
            raise DuplicateKey(exc.duplicate_key) from None
        raise


def quote(text: str) -> str:
    """The start of an answer for a message (at most 200 characters)."""
    return repr(text if len(text) <= _QUOTE else text[: _QUOTE - 1] + "…")


def too_long(length: int, limit: int, start: str) -> JudgeFailure:
    return JudgeFailure(
        f"could not parse score: the judge's answer is {length:,} characters, over the limit of {limit:,} "
        f"({ANSWER_LIMIT_VARIABLE}); it was not read and none of it is kept. It starts {quote(start)}",
        UNPARSEABLE,
    )


def duplicate(exc: DuplicateKey, text: str) -> JudgeFailure:
    return JudgeFailure(
        f"could not parse score: the judge's answer names {exc.key!r} more than once, so which value is meant "
        f"cannot be told: {quote(text)}",
        UNPARSEABLE,
    )


def json_answer(content: str | None, what: str = "score") -> Any:
    """The judge's answer text read as JSON, repeated keys refused; ``JudgeFailure`` (``judgeOutputUnparseable``)
    saying that ``what`` could not be parsed when it is not JSON."""
    try:
        return loads(content or "")
    except DuplicateKey as exc:
        raise duplicate(exc, content or "") from None
    except ValueError:
        raise JudgeFailure(
            f"could not parse {what}: the judge's answer is not JSON: {str(content)[:200]!r}", UNPARSEABLE
        ) from None


def check_answer(content: Any) -> None:
    """Refuse an answer over the size limit, or a JSON-object answer with a repeated key (``JudgeFailure``)."""
    if not isinstance(content, str):
        return
    limit = answer_limit()
    if len(content) > limit:
        raise too_long(len(content), limit, content)
    if not content.lstrip().startswith("{"):
        return
    try:
        loads(content)
    except DuplicateKey as exc:
        raise duplicate(exc, content) from None
    except ValueError:
        return  # not well-formed JSON: the judge's own reader says so, in its words


def integer_score(value: Any, low: int = 1, high: int = 5) -> int | None:
    """``value`` as an integer on ``low``-``high``, or None: a bool, a string, a fraction, NaN or a number off
    the scale is not a score."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    number = int(value)
    return number if low <= number <= high else None


def not_a_score(value: Any, low: int = 1, high: int = 5) -> JudgeFailure:
    """The error for a score ``integer_score`` refused, naming what it was."""
    kind = "a string" if isinstance(value, str) else "a boolean" if isinstance(value, bool) else None
    shown = quote(value) if isinstance(value, str) else repr(value)
    what = f" ({kind})" if kind else ""
    return JudgeFailure(
        f"could not parse score: the judge answered {shown}{what}, not an integer from {low} to {high}",
        UNPARSEABLE,
    )


def cut_reason(reason: Any) -> Any:
    """``reason`` cut to ``reason_limit()`` characters, with a marker saying how many were cut."""
    if not isinstance(reason, str):
        return reason
    limit = reason_limit()
    if len(reason) <= limit:
        return reason
    return (
        f"{reason[:limit]}… [cut by evalkit: {len(reason) - limit:,} of {len(reason):,} characters not kept; "
        f"{REASON_LIMIT_VARIABLE}={limit}]"
    )
