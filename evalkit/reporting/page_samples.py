"""The flaky marks of report.html: each sampled judgment's pass share, for the items table and the item view.

``evaluate(samples=K)`` / ``evalkit run --samples K`` keep in each LLM judge's ``<key>_details`` the row's
``samples`` (K), ``passShare``, ``flipped``, ``scores`` and ``passRule`` (:mod:`evalkit.evaluators.llm_judges.samples`).
The page embeds them per evaluator as the column ``e<k>.samples`` (beside ``e<k>.result``), one entry per row:
``{"p": pass share, "n": K, "f": 1 when the judgments flipped between pass and fail, "s": the scores in sample
order, "v": each judgment's verdict (1 pass, 0 fail, beside its score), "m": each judgment's reason, "r": the
pass rule}``, or ``null`` for a row judged once (or not at all). ``v`` and ``m`` are left out when the details do
not carry them (a run written before they were kept) or do not match the scores one for one. The column is left out when no
row of the evaluator was sampled, so a run without ``--samples`` pays nothing. The page's script marks a
flipped row's chip (``flaky 67%``), lists ``<evaluator>: flaky`` in the evaluator filter, makes ``flaky``
findable by the search, and shows the judgments in the item view. Values are data only: the script inserts
them with ``textContent``.

A page written chunk by chunk (``--engine spark``, :mod:`evalkit.reporting.page_stream`) never has samples:
that engine refuses ``--samples``.

May import: ``pandas`` and the standard library.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

#: At most this many scores per row are embedded (a run with more samples shows the first ones).
SCORES_LIMIT = 50
#: Each judgment's reason is embedded up to this many characters.
REASON_LIMIT = 500


def sample_column(df: pd.DataFrame, key: str) -> list[dict[str, Any] | None] | None:
    """The ``e<k>.samples`` column of evaluator ``key``, or None when none of its rows was judged K times."""
    column = df.get(f"{key}_details")
    if column is None:
        return None
    values = column.tolist()
    if not any(
        d.__class__ is dict and "samples" in d for d in values
    ):  # judged once (the usual run): no column
        return None
    entries = [_entry(d) for d in values]
    return entries if any(e is not None for e in entries) else None


def _entry(details: Any) -> dict[str, Any] | None:
    if type(details) is not dict or "samples" not in details:  # noqa: E721 (the common row, fast)
        return None
    share = _number(details.get("passShare"))
    samples = _number(details.get("samples"))
    if share is None or samples is None:
        return None
    scores = details.get("scores")
    rule = details.get("passRule")
    entry = {
        "p": round(share, 4),
        "n": int(samples),
        "f": 1 if details.get("flipped") is True else 0,
        "s": [_number(s) for s in scores[:SCORES_LIMIT]] if isinstance(scores, list) else [],
        "r": rule[:20] if isinstance(rule, str) else None,
    }
    verdicts, reasons = details.get("verdicts"), details.get("reasons")
    if isinstance(verdicts, list) and isinstance(scores, list) and len(verdicts) == len(scores):
        entry["v"] = [1 if v == "pass" else 0 for v in verdicts[:SCORES_LIMIT]]
        if isinstance(reasons, list) and len(reasons) == len(scores):
            entry["m"] = [r[:REASON_LIMIT] if isinstance(r, str) else "" for r in reasons[:SCORES_LIMIT]]
    return entry


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else None
    return value
