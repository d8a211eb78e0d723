"""What ``ModelServer`` answers for juries and pairwise judges: jurors that disagree by model name, and a
deterministic pairwise judge.

Jurors. A model (or Azure deployment) whose name ends in ``~+N`` or ``~-N`` (``judge~+1``, ``strict~-2``)
answers as the heuristic judge does with its 1-5 score moved by N (kept within 1-5), whatever the answer's
format (JSON ``score``, ``<S2>`` tags, a bare number); so a jury of ``judge``, ``judge~+1`` and ``judge~-2``
disagrees the same way on every run. Other names answer unchanged.

Pairwise. A prompt asking for a ``"winner"`` whose user message has ``Response A`` and ``Response B`` sections
(``# Response A`` headings or ``Response A:`` labels; the question under ``Question`` / ``Query``) is answered
``{"winner": "A" | "B" | "tie", "reason"}``: the response sharing the larger part of the question's content
words wins (the heuristic judge's overlap, unrounded), equal shares tie. A model whose name contains
``~first`` always prefers the response shown first (a judge with pure position bias); ``~second`` the other.

May import: ``evalkit.testing.answers``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from evalkit.testing.answers import _terms

_SHIFT = re.compile(r"~([+-]\d+)$")
_SECTION = re.compile(
    r"^\s*(?:#{1,6}\s*(?P<heading>[A-Za-z][A-Za-z ]*?)\s*#*\s*|(?P<label>question|query|response a|response b)\s*:\s*(?P<rest>.*))$",
    re.IGNORECASE,
)


def answer(record: Mapping[str, Any], heuristic: Callable[[Mapping[str, Any]], str]) -> str:
    """The server's answer to ``record`` when no script gives one: pairwise, shifted, or the heuristic's."""
    model = str(record.get("model") or "")
    body = record.get("body") if isinstance(record.get("body"), Mapping) else {}
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    texts = [m.get("content") if isinstance(m.get("content"), str) else "" for m in messages]
    users = [t for m, t in zip(messages, texts) if m.get("role") == "user"]
    if users and '"winner"' in "\n".join(texts):
        sections = _sections(users[-1])
        if "response a" in sections and "response b" in sections:
            return _pairwise(sections, model)
    content = heuristic(record)
    shift = _SHIFT.search(model)
    return _shifted(content, int(shift.group(1))) if shift else content


def _sections(text: str) -> dict[str, str]:
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        match = _SECTION.match(line)
        name = match and (match.group("heading") or match.group("label"))
        if name:
            current = " ".join(name.lower().split())
            found[current] = [match.group("rest") or ""] if match.group("label") else []
        elif current is not None:
            found[current].append(line)
    return {name: "\n".join(lines).strip() for name, lines in found.items()}


def _pairwise(sections: dict[str, str], model: str) -> str:
    if "~first" in model or "~second" in model:
        winner = "A" if "~first" in model else "B"
        return json.dumps(
            {"winner": winner, "reason": f"Position-biased test judge: always response {winner}."}
        )
    question = _terms(sections.get("question") or sections.get("query") or "")
    shares = [
        len(question & _terms(sections[side])) / len(question) if question else 0.0
        for side in ("response a", "response b")
    ]
    if shares[0] == shares[1]:
        winner, why = "tie", "Both responses share as much of the question's words"
    else:
        winner = "A" if shares[0] > shares[1] else "B"
        why = f"Response {winner} shares more of the question's words"
    return json.dumps({"winner": winner, "reason": f"{why} ({shares[0]:.2f} vs {shares[1]:.2f})."})


def _shifted(content: str, shift: int) -> str:
    """``content`` with its 1-5 score moved by ``shift`` (JSON ``score``, ``<S2>`` tags, or a bare number)."""

    def moved(score: Any) -> Any:
        try:
            return min(5, max(1, int(score) + shift))
        except (TypeError, ValueError):
            return score

    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and "score" in data:
        data["score"] = moved(data["score"])
        return json.dumps(data)
    if "<S2>" in content:
        return re.sub(r"<S2>\s*(\d+)\s*</S2>", lambda m: f"<S2>{moved(m.group(1))}</S2>", content)
    if content.strip().isdigit():
        return str(moved(content.strip()))
    return content
