"""What a custom ``.prompty`` judge's wrapper returns, and how it reads the judge's answer into that.

The wrapper contract (``<name>.py``'s ``__call__``): return ``{"score": <integer 1-5>, "reason": "<text>"}``,
the score a number (an int, or a float such as 4.0), or ``{"error": "<message>"}``. evalkit reads nothing
else: a score that is a string ("5"), a bool, a fraction, off the 1-5 scale, or under another key is an error
result whose message says this contract and what to change in the wrapper (``refusal``). Conversions belong
in the wrapper, where the judge's own answer shape is known.

``read_judge_answer`` is that conversion for the answer shapes judges written for promptflow and
azure-ai-evaluation give, so a wrapper can be one line (the one ``evalkit new --llm`` writes uses it):

- a JSON object (promptflow parses ``response_format: json_object`` answers; a text answer holding JSON is
  parsed here), its score under ``score`` or the key named (``score="correctness"`` for
  ``{"correctness": 4, "readability": 5, "explanation": ...}``); a score written as a whole number in a string
  (``"score": "5"``, promptflow's eval-basic sample) is converted: that is the wrapper converting it;
- azure-ai-evaluation's answers: ``{"reason" | "explanation" | "chain_of_thought", "score", "status"}``, where
  ``"status": "skipped"`` with ``"score": null`` means the judge declined (an error result saying why), and
  the older tagged form ``<S0>thoughts</S0><S1>reason</S1><S2>score</S2>``;
- a bare integer (``max_tokens: 1`` judges such as promptflow-evals' relevance.prompty).

Anything else raises a ``JudgeFailure`` (``judgeOutputUnparseable``) that names the answer's keys and the fix.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalkit.judges.pool import JudgeFailure
from evalkit.judges.strict_answers import DuplicateKey, duplicate, loads

#: The contract, as every refusal states it (``{name}``: the evaluator).
CONTRACT = (
    '{name}.py must return {{"score": <integer 1-5>, "reason": "<text>"}} (or {{"error": "<message>"}})'
)
#: Where a judge's explanation is, in the answer shapes above, first found wins.
REASON_KEYS = ("reason", "explanation", "chain_of_thought", "rationale")
#: At most this many characters of an answer are quoted in a message.
_QUOTE_LIMIT = 200

_WHOLE_NUMBER = re.compile(r"^\s*[+-]?\d+\s*$")
_TAG = re.compile(r"<(S[0-9])>(.*?)</\1>", re.DOTALL)


def read_judge_answer(answer: Any, *, score: str = "score", reason: str | None = None) -> dict:
    """``{"score", "reason"}`` from a ``.prompty`` judge's answer (a dict, or the text of the answer).

    ``score`` / ``reason`` name the answer's fields when they are not ``score`` / one of ``REASON_KEYS``.
    The 1-5 range is checked by evalkit on what the wrapper returns, not here.
    """
    if isinstance(answer, str):
        answer = _from_text(answer)
    if not isinstance(answer, dict):
        raise _unreadable(f"the judge's answer is {_quote(answer)}, not a JSON object")
    if score not in answer:
        raise _unreadable(
            f"the judge's answer has no {score!r} field ({_keys(answer)}){_naming_hint(answer, score)}"
        )
    value = answer[score]
    explanation = _reason(answer, reason)
    if value is None and str(answer.get("status", "")).lower() == "skipped":
        raise JudgeFailure(
            f"the judge skipped this item (status 'skipped'): {explanation or 'it gave no reason'}",
            "judgeOutputUnparseable",
        )
    if isinstance(value, str) and _WHOLE_NUMBER.match(value):
        value = int(value)
    return {"score": value, "reason": explanation}


def _from_text(text: str) -> Any:
    stripped = text.strip()
    if _WHOLE_NUMBER.match(stripped):
        return {"score": int(stripped)}
    tags = dict(_TAG.findall(stripped))
    if "S2" in tags:
        found = re.search(r"\d+(?:\.\d+)?", tags["S2"])
        number = found.group(0) if found else tags["S2"].strip()
        return {"score": number, "reason": tags.get("S1", "").strip()}
    try:
        return loads(stripped)
    except DuplicateKey as exc:
        raise duplicate(exc, stripped) from None
    except ValueError as exc:
        raise _unreadable(f"the judge's answer is not well-formed JSON ({exc}): {_quote(text)}") from None


def _reason(answer: dict, key: str | None) -> str:
    keys = (key,) if key else REASON_KEYS
    for name in keys:
        value = answer.get(name)
        if value not in (None, ""):
            return value if isinstance(value, str) else json.dumps(value, default=str)
    return ""


def _naming_hint(answer: dict, score: str) -> str:
    """``; name it: read_judge_answer(answer, score="correctness")`` when one field looks like the score."""
    numeric = [k for k, v in answer.items() if _looks_numeric(v) and k != "status"]
    if score == "score" and numeric:
        return f'; name the score\'s field: read_judge_answer(answer, score="{numeric[0]}")'
    return ""


def _looks_numeric(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float)) or (isinstance(value, str) and bool(_WHOLE_NUMBER.match(value)))


def _keys(answer: dict) -> str:
    return "its fields: " + ", ".join(map(str, answer)) if answer else "it is an empty object"


def _quote(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return repr(text if len(text) <= _QUOTE_LIMIT else text[: _QUOTE_LIMIT - 1] + "…")


def _unreadable(message: str) -> JudgeFailure:
    return JudgeFailure(f"could not parse score: {message}", "judgeOutputUnparseable")


def refusal(name: str, returned: Any, problem: str) -> str:
    """The message for a wrapper's return value evalkit cannot read: the problem, the contract, the fix."""
    contract = CONTRACT.format(name=name)
    fix = _fix(name, returned)
    return f"{problem}. {contract}{fix}"


def _fix(name: str, returned: Any) -> str:
    if not isinstance(returned, dict):
        return "."
    value = returned.get("score")
    if "score" not in returned:
        numeric = [k for k, v in returned.items() if _looks_numeric(v)]
        field = numeric[0] if numeric else "<field>"
        return (
            f"; {name}.py returned the fields {', '.join(map(str, returned)) or '(none)'}: map the judge's answer "
            f'there, e.g. return read_judge_answer(answer, score="{field}") '
            "(from evalkit.judges.judge_answers import read_judge_answer)."
        )
    if isinstance(value, str):
        return (
            f"; the score is a string ({_quote(value)}): convert it in {name}.py, e.g. int(...), or return "
            "read_judge_answer(answer), which converts whole numbers written as text."
        )
    return "; a judge on another scale needs its score mapped to 1-5 in the wrapper."


def unread_answer(name: str, answers: list, hint: str) -> str:
    """What a wrapper failed to read, for its error message: the judge's answer and, when that was a JSON
    object, the contract and the field to name; then ``hint`` (what to check in the ``.prompty``)."""
    if not answers:
        return f". {hint}"
    answer = answers[-1]
    shown = f"; the judge answered {_quote(answer)}"
    if isinstance(answer, str):
        try:
            answer = loads(answer)
        except ValueError:
            pass
    if not isinstance(answer, dict):
        return f"{shown}. {hint}"
    numeric = [k for k, v in answer.items() if _looks_numeric(v) and k != "status"]
    field = f', score="{numeric[0]}"' if numeric and "score" not in answer else ""
    return (
        f"{shown}. {CONTRACT.format(name=name)}: read the answer's own fields there, e.g. "
        f"return read_judge_answer(answer{field}) (from evalkit.judges.judge_answers import read_judge_answer). "
        f"{hint}"
    )
