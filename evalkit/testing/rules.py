"""The model server's rule-following mode: a judge that obeys guideline lines in its prompt, and an optimiser.

Why: aligning a judge to human labels (``evalkit.align``) rewrites the judge's prompt; an offline test of it needs a
judge whose scores change, deterministically, with what the prompt says, and an optimiser that proposes such prompt
changes from the disagreements it is shown. The heuristic judge (``evalkit.testing.answers``) reads no instructions,
so a rewritten prompt would change nothing. This module adds both behaviours; ``ModelServer(rules=True)`` (the
default) asks it first and falls back to the heuristic judge when it has nothing to say.

**The judge.** A guideline is a line of the prompt's own text (the system and user messages with the substituted
field values taken out, so an agent's response cannot write rules for its judge) of one of these forms::

    - When the response contains "refund", the score is at most 2.
    - When the response contains "step", the score is at least 4.
    - When the response has fewer than 12 words, the score is at most 2.
    - When the response has more than 80 words, the score is at least 4.

A prompt with at least one such line is answered like the heuristic judge (same fields, same format), but its
1-5 score is the heuristic score with every matching rule applied in order (``at most N``: ``min(score, N)``,
``at least N``: ``max(score, N)``), and the reason names the rules that fired. "Contains" compares content words
(lower case, a plural "s" off), so ``"refunds"`` in a response matches ``"refund"``. Prompts without a rule are
not answered here (the heuristic judge answers them unchanged).

**The optimiser.** A request whose system message says ``revise the prompt of an LLM judge`` (the words of
``evalkit.analysis.alignment.proposals``) and whose user message carries example lines ``EXAMPLE {json}`` (each
with ``response``, ``judge_score`` and ``human_score``, or ``judge_verdict`` and ``human_verdict``: a pass counts
as 4, a fail as 2) is answered with ``{"guidelines": [...], "criteria": ...}``:
up to three rules of the forms above, chosen greedily, each the candidate (a content word of the shown
responses, or a length threshold) that brings the most shown judge scores closer to the human scores and none
farther than it brings closer; ``criteria`` a one-paragraph rewrite of the judge's instruction. Deterministic:
ties go to the shorter word, then alphabetical order.

May import: ``evalkit.testing.answers``, ``evalkit.testing.protocol``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from evalkit.testing.answers import _terms, _wanted_format, extract_fields, judge_score
from evalkit.testing.protocol import message_text

__all__ = ["OPTIMISER_MARK", "parse_rules", "propose_rules", "rule_answer"]

#: The words in an optimiser request's system message that select the optimiser behaviour.
OPTIMISER_MARK = "revise the prompt of an LLM judge"
_RULE = re.compile(
    r"^\s*[-*]?\s*When the response (?:(?P<contains>contains) \"(?P<word>[^\"]+)\"|has (?P<side>fewer|more) than "
    r"(?P<count>\d+) words), the score is (?P<bound>at most|at least) (?P<score>[1-5])\.?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_EXAMPLE = re.compile(r"^EXAMPLE (\{.*\})\s*$", re.MULTILINE)
MAX_RULES = 3


def parse_rules(text: str) -> list[dict]:
    """The guideline lines of ``text`` (module docs), in order, as ``{"kind", "value", "bound", "score"}``."""
    rules = []
    for m in _RULE.finditer(text):
        if m.group("contains"):
            terms = sorted(_terms(m.group("word")))
            if not terms:
                continue
            rule = {"kind": "contains", "value": terms[0]}
        else:
            rule = {"kind": m.group("side").lower(), "value": int(m.group("count"))}
        rules.append(
            {**rule, "bound": m.group("bound").lower(), "score": int(m.group("score")), "line": m.group(0)}
        )
    return rules


def _fires(rule: dict, response: str) -> bool:
    if rule["kind"] == "contains":
        return rule["value"] in _terms(response)
    words = len(response.split())
    return words < rule["value"] if rule["kind"] == "fewer" else words > rule["value"]


def _apply(rules: list[dict], response: str, score: int) -> tuple[int, list[str]]:
    fired = []
    for rule in rules:
        if _fires(rule, response):
            new = min(score, rule["score"]) if rule["bound"] == "at most" else max(score, rule["score"])
            fired.append(rule["line"].strip(" -*"))
            score = new
    return score, fired


def rule_answer(request: Mapping[str, Any]) -> str | None:
    """The rule-following answer to a chat-completions request record, or None (not a rule prompt)."""
    body = request.get("body", request) if isinstance(request, Mapping) else {}
    messages = (
        [m for m in (body.get("messages") or []) if isinstance(m, Mapping)]
        if isinstance(body, Mapping)
        else []
    )
    system = "\n".join(
        message_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    users = [message_text(m.get("content")) for m in messages if m.get("role") == "user"]
    if OPTIMISER_MARK in system:
        return json.dumps(propose_rules("\n".join(users)))
    last_user = users[-1] if users else ""
    fields = extract_fields(last_user) or extract_fields(
        "\n".join(message_text(m.get("content")) for m in messages)
    )
    template = system + "\n" + "\n".join(users)
    for value in sorted(filter(None, fields.values()), key=len, reverse=True):
        template = template.replace(value, " ")
    rules = parse_rules(template)
    if not rules:
        return None
    wanted = _wanted_format(template, body)
    score, reason = judge_score(fields)
    score, fired = _apply(rules, fields.get("response", ""), score)
    if fired:
        reason += " Guidelines applied: " + "; ".join(fired) + f"; the score is {score}."
    if wanted == "number":
        return str(score)
    if wanted == "tags":
        return f"<S0>{reason}</S0><S1>{reason}</S1><S2>{score}</S2>"
    if re.search(r"[\"']?\bstatus\b[\"']?\s*:", template):
        return json.dumps({"reason": reason, "score": score, "status": "completed"})
    return json.dumps({"score": score, "reason": reason})


# The optimiser -----------------------------------------------------------------------------------------------
def _examples(text: str) -> list[dict]:
    out = []
    for raw in _EXAMPLE.findall(text):
        try:
            example = json.loads(raw)
        except ValueError:
            continue
        if "judge_verdict" in example and "human_verdict" in example:
            # Verdict labels: a pass counts as 4, a fail as 2 (either side of the usual threshold of 3).
            example["judge_score"] = 4 if example["judge_verdict"] == "pass" else 2
            example["human_score"] = 4 if example["human_verdict"] == "pass" else 2
        judge, human = example.get("judge_score"), example.get("human_score")
        if isinstance(judge, int) and isinstance(human, int) and isinstance(example.get("response"), str):
            out.append(example)
    return out


def _line(rule: dict) -> str:
    if rule["kind"] == "contains":
        return (
            f'- When the response contains "{rule["value"]}", the score is {rule["bound"]} {rule["score"]}.'
        )
    side = "fewer" if rule["kind"] == "fewer" else "more"
    return f"- When the response has {side} than {rule['value']} words, the score is {rule['bound']} {rule['score']}."


def _gain(rule: dict, examples: list[dict], scores: list[int]) -> tuple[int, int]:
    """(closer, farther): how many shown scores the rule brings closer to / farther from the human score."""
    closer = farther = 0
    for example, score in zip(examples, scores):
        if not _fires(rule, example["response"]):
            continue
        new = min(score, rule["score"]) if rule["bound"] == "at most" else max(score, rule["score"])
        before, after = abs(score - example["human_score"]), abs(new - example["human_score"])
        closer += after < before
        farther += after > before
    return closer, farther


def _candidates(examples: list[dict], scores: list[int]) -> list[dict]:
    """Rules suggested by the disagreements: each content word of a response the judge over- (under-) scored,
    capped (floored) at that example's human score; length thresholds from the shown response lengths."""
    found: dict[tuple, dict] = {}
    for example, score in zip(examples, scores):
        human = example["human_score"]
        if score == human:
            continue
        bound = "at most" if score > human else "at least"
        for word in _terms(example["response"]):
            found.setdefault(("contains", word, bound, human), {"kind": "contains", "value": word})
        words = len(example["response"].split())
        side = "fewer" if bound == "at most" else "more"
        threshold = words + 1 if side == "fewer" else max(words - 1, 0)
        found.setdefault((side, threshold, bound, human), {"kind": side, "value": threshold})
    return [{**rule, "bound": key[2], "score": key[3]} for key, rule in found.items()]


def propose_rules(text: str) -> dict:
    """The optimiser's answer to the user text of an optimiser request (module docs)."""
    examples = _examples(text)
    scores = [int(e["judge_score"]) for e in examples]
    chosen: list[dict] = []
    for _ in range(MAX_RULES):
        best, best_key = None, None
        for rule in _candidates(examples, scores):
            closer, farther = _gain(rule, examples, scores)
            if closer < 2 or farther * 2 >= closer:
                continue
            key = (
                -(closer - farther),
                len(str(rule["value"])),
                str(rule["value"]),
                rule["bound"],
                rule["score"],
            )
            if best_key is None or key < best_key:
                best, best_key = rule, key
        if best is None:
            break
        chosen.append(best)
        scores = [_apply([{**best, "line": ""}], e["response"], s)[0] for e, s in zip(examples, scores)]
    return {
        "guidelines": [_line(rule) for rule in chosen],
        "criteria": "Score how well the response answers the user's request, from 1 to 5, and follow the "
        "guidelines distilled from human labels wherever one applies.",
    }
