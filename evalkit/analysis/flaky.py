"""The flaky items of a run with ``samples=K``: the rows whose K judgments flipped between pass and fail.

    scored = evalkit.evaluate(df, samples=5)
    evalkit.flaky_items(scored)      # one row per (row, LLM judge) that flipped, least settled first

``evaluate(samples=K)`` / ``evalkit run --samples K`` keep each judged row's ``samples``, ``passShare``,
``flipped``, ``scores`` and ``passRule`` in ``<key>_details`` (:mod:`evalkit.evaluators.llm_judges.samples`); this lists
those that flipped, with the item, turn and prompt, the verdict the pass rule gave, the pass share and every
judgment's score. The report page marks the same rows (``flaky 3/5 pass``); a run read back with
:func:`evalkit.read_run` has them too.

May import: ``evalkit.analysis.summaries`` and what it imports.
"""

from __future__ import annotations

import pandas as pd

from evalkit.analysis.summaries import scored_evaluators

__all__ = ["FLAKY_COLUMNS", "flaky_items"]

FLAKY_COLUMNS = (
    "item",
    "turn",
    "prompt",
    "evaluator",
    "result",
    "pass_share",
    "scores",
    "samples",
    "pass_rule",
)


def flaky_items(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (case-table row, evaluator) whose judgments flipped, columns :data:`FLAKY_COLUMNS`, the most
    evenly split first (pass share nearest 0.5), then in table order. Empty (same columns) for a run without
    ``samples`` or without flips."""
    found = []
    for ev in scored_evaluators(df):
        column = df.get(f"{ev['key']}_details")
        if column is None:
            continue
        for position, details in enumerate(column.tolist()):
            if isinstance(details, dict) and details.get("flipped") is True:
                found.append(_row(df, position, ev, details))
    table = pd.DataFrame(found, columns=list(FLAKY_COLUMNS) + ["_order"])
    table["_split"] = (table["pass_share"].astype(float) - 0.5).abs()
    table = table.sort_values(["_split", "_order"], kind="stable")
    return table.drop(columns=["_split", "_order"]).reset_index(drop=True)


def _row(df: pd.DataFrame, position: int, ev: dict, details: dict) -> dict:
    record = df.iloc[position]
    return {
        "item": record.get("item"),
        "turn": record.get("turn"),
        "prompt": record.get("prompt"),
        "evaluator": str(ev.get("name", ev["key"])),
        "result": record.get(f"{ev['key']}_result"),
        "pass_share": details.get("passShare"),
        "scores": list(details.get("scores") or []),
        "samples": details.get("samples"),
        "pass_rule": details.get("passRule"),
        "_order": position,
    }


def flip_notes(df: pd.DataFrame, key: str, positions) -> list[str | None]:
    """For the rows at ``positions`` of ``df``: ``"flaky: 2 of 3 judgments passed"`` where evaluator ``key``'s
    judgments flipped, else None (a comparison's "what changed" line says so: such a change may be the judge's
    noise, not the run's)."""
    column = df.get(f"{key}_details")
    if column is None:
        return [None] * len(positions)
    values = column.tolist()
    return [_note(values[p]) for p in positions]


def _note(details) -> str | None:
    if not isinstance(details, dict) or details.get("flipped") is not True:
        return None
    scores, share = details.get("scores"), details.get("passShare")
    if not isinstance(scores, list) or not scores or not isinstance(share, (int, float)):
        return "flaky"
    return f"flaky: {round(share * len(scores))} of {len(scores)} judgments passed"
