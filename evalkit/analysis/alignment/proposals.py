"""Revised judge prompts proposed from the disagreements on the optimisation set.

One round: the optimiser model (``optimizer_model``, by default the judge's own model) is shown the current
prompt and the optimisation set's labelled rows, the largest disagreements and then some agreements
(``EXAMPLE {json}`` lines: prompt,
response, judge score, human score, the labeller's note), and asked for JSON ``{"guidelines": [...],
"criteria": "..."}``: short checkable guideline lines distilled from what the humans reward or penalise, and a
rewritten instruction. From its answer come three variants (:func:`variants`):

* ``guidelines``: the current prompt with the new guideline lines added to the rubric;
* ``guidelines+examples``: the same with few-shot examples chosen from the labelled optimisation rows (one
  per human value, the largest disagreements first, at most ``shots``);
* ``criteria``: the system instruction rewritten by the optimiser, with the guidelines.

Only optimisation rows are ever given to this module: the held-out rows never reach a prompt.

May import: ``evalkit.judges`` (the openai client), ``evalkit.errors`` and this package's ``prompts``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evalkit.analysis.alignment.prompts import PromptSpec
from evalkit.documents.json_input import JsonInputError, parse_json_text
from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OPTIMISER_SYSTEM", "ask_optimiser", "optimiser_messages", "variants"]

OPTIMISER_SYSTEM = (
    "You revise the prompt of an LLM judge so that its scores agree with human labels. You are shown the judge's "
    "prompt and labelled examples, the ones where the judge and the humans disagree first. Distil what the humans "
    "reward or penalise into at most three short guidelines, each a line a reader can check on a response, in one "
    'of these forms: - When the response contains "WORD", the score is at most N. / - When the response contains '
    '"WORD", the score is at least N. / - When the response has fewer than K words, the score is at most N. / - '
    "When the response has more than K words, the score is at least N. Also rewrite the judge's instruction "
    '(its criteria) in one paragraph. Reply with JSON only: {"guidelines": ["- ..."], "criteria": "..."}'
)
#: Most disagreeing and most agreeing labelled rows shown to the optimiser in one request: the agreements give
#: it the contrast (a guideline that would also change rows the judge already gets right is a bad one).
MAX_DISAGREEMENTS = 25
MAX_AGREEMENTS = 15


def optimiser_messages(prompt_text: str, pairs: pd.DataFrame) -> list[dict]:
    """The optimiser request for the current ``prompt_text`` and the optimisation ``pairs`` (calibration pairs:
    ``prompt``, ``response``, ``judge_value``, ``human_value``, ``difference``, ``human_note``): the largest
    disagreements (at most ``MAX_DISAGREEMENTS``), then agreements (at most ``MAX_AGREEMENTS``)."""
    import pandas as pd

    ordered = pairs.assign(_gap=pairs["difference"].abs()).sort_values("_gap", ascending=False, kind="stable")
    shown = ordered[ordered["_gap"] > 0].head(MAX_DISAGREEMENTS)
    shown = pd.concat([shown, ordered[ordered["_gap"] == 0].head(MAX_AGREEMENTS)])
    lines = []
    for _, row in shown.iterrows():
        example = {"prompt": str(row["prompt"] or ""), "response": str(row["response"] or "")}
        if row["on"] == "verdict":  # pass / fail labels: the judge's result against the human verdict
            example.update(judge_verdict=str(row["judge_value"]), human_verdict=str(row["human_value"]))
        else:
            example.update(judge_score=_value(row["judge_value"]), human_score=_value(row["human_value"]))
        if isinstance(row.get("human_note"), str) and row["human_note"]:
            example["human_note"] = row["human_note"]
        lines.append("EXAMPLE " + json.dumps(example, ensure_ascii=False))
    user = "# The judge's prompt\n" + prompt_text + "\n\n# Labelled examples (one JSON object per line)\n"
    return [
        {"role": "system", "content": OPTIMISER_SYSTEM},
        {"role": "user", "content": user + "\n".join(lines)},
    ]


def _value(value: Any) -> Any:
    if isinstance(value, str):
        return value
    number = float(value)
    return int(number) if number.is_integer() else number


def ask_optimiser(config: dict, messages: list[dict], *, timeout: float = 120.0) -> tuple[dict, dict]:
    """The optimiser's parsed answer ``{"guidelines": [str], "criteria": str | None}`` and its usage
    ``{"prompt_tokens", "completion_tokens"}``; an answer that is not that JSON is an :class:`EvalkitError`."""
    from evalkit.judges.models import judge_client

    client, model = judge_client(config, timeout=timeout)
    reply = client.chat.completions.create(
        model=model, messages=messages, temperature=0, response_format={"type": "json_object"}
    )
    usage = {
        "prompt_tokens": int(getattr(reply.usage, "prompt_tokens", 0) or 0),
        "completion_tokens": int(getattr(reply.usage, "completion_tokens", 0) or 0),
    }
    text = (reply.choices[0].message.content or "").strip()
    try:
        answer = parse_json_text(text)
    except JsonInputError:
        answer = None
    if not isinstance(answer, dict):
        raise EvalkitError(
            f"the optimiser model {model!r} did not answer with a JSON object (it said {text[:120]!r}); "
            "choose a model that follows JSON instructions (optimizer_model=...)"
        )
    guidelines = answer.get("guidelines") or []
    if isinstance(guidelines, str):
        guidelines = [guidelines]
    lines = [g.strip() for g in guidelines if isinstance(g, str) and g.strip()]
    lines = [g if g.startswith(("-", "*")) else f"- {g}" for g in lines]
    criteria = answer.get("criteria")
    return {
        "guidelines": lines,
        "criteria": criteria if isinstance(criteria, str) and criteria.strip() else None,
    }, usage


def few_shot(pairs: pd.DataFrame, shots: int) -> tuple[dict, ...]:
    """Up to ``shots`` labelled optimisation rows as examples: one per human value, largest disagreement first."""
    ordered = pairs.assign(_gap=pairs["difference"].abs()).sort_values("_gap", ascending=False, kind="stable")
    chosen, seen = [], set()
    for _, row in ordered.iterrows():
        human = _value(row["human_value"])
        if human in seen or len(chosen) >= shots:
            continue
        seen.add(human)
        chosen.append({"prompt": row["prompt"], "response": row["response"], "human": human})
    return tuple(chosen)


def variants(current: PromptSpec, answer: dict, pairs: pd.DataFrame, *, shots: int) -> list[PromptSpec]:
    """The variants of one round (module docs) on top of ``current``; new guideline lines only."""
    new = tuple(g for g in answer["guidelines"] if g not in current.guidelines)
    if not new and answer["criteria"] is None:
        return []
    guidelines = current.guidelines + new
    out = []
    if new:
        out.append(replace(current, kind="guidelines", guidelines=guidelines))
        if shots > 0:
            out.append(
                replace(
                    current,
                    kind="guidelines+examples",
                    guidelines=guidelines,
                    examples=few_shot(pairs, shots),
                )
            )
    if answer["criteria"] is not None:
        out.append(replace(current, kind="criteria", guidelines=guidelines, criteria=answer["criteria"]))
    return out
