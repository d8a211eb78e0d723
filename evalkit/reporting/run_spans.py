"""A saved run's captured spans (``spans.jsonl`` beside results.json) back on its rows, for the item view.

``evalkit run --agent`` writes every row's spans to ``spans.jsonl`` (:func:`evalkit.agents.span_capture.
write_spans_jsonl`), stamped with the ``session.id`` ``evalkit-<run id>-<item>``: one session per item, shared
by the turns of a thread, one trace per agent call. results.json does not keep them, so a report made later
from the folder (``evalkit report``) reads them here: spans go to the rows of their item; in a thread the
traces, in the order they were written (turn order), go to the turns one by one (when an item has more traces
than turns, from retries, the extra ones join the last turn).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from evalkit.documents.json_input import JsonInputError, parse_json_text

__all__ = ["attach_spans"]


def _item_of(span: dict) -> str | None:
    attributes = span.get("attributes") if isinstance(span.get("attributes"), dict) else {}
    session = attributes.get("session.id")
    if not isinstance(session, str) or not session.startswith("evalkit-"):
        return None
    return session.rsplit("-", 1)[-1]


def attach_spans(df: pd.DataFrame, run_dir: str | os.PathLike) -> pd.DataFrame:
    """``df`` with its ``spans`` column filled from ``run_dir/spans.jsonl`` (unchanged when there is none, or
    when the table already holds spans). Lines that are not JSON objects are skipped."""
    path = Path(run_dir) / "spans.jsonl"
    if not path.is_file() or "item" not in df.columns:
        return df
    if "spans" in df.columns and any(isinstance(v, list) and v for v in df["spans"].tolist()):
        return df
    by_item: dict[str, dict[str, list[dict]]] = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                span = parse_json_text(line)
            except JsonInputError:
                continue
            item = _item_of(span) if isinstance(span, dict) else None
            if item is not None:
                by_item.setdefault(item, {}).setdefault(str(span.get("traceId")), []).append(span)
    if not by_item:
        return df
    spans: list[list[dict]] = [[] for _ in range(len(df))]
    turns = df["turn"].tolist() if "turn" in df.columns else [None] * len(df)
    rows_of: dict[str, list[int]] = {}
    for position, item in enumerate(df["item"].tolist()):
        rows_of.setdefault(str(item), []).append(position)
    for item, traces in by_item.items():
        rows = sorted(
            rows_of.get(item, []), key=lambda p: (pd.isna(turns[p]), turns[p] if not pd.isna(turns[p]) else 0)
        )
        if not rows:
            continue
        for index, trace in enumerate(traces.values()):
            spans[rows[min(index, len(rows) - 1)] if len(rows) > 1 else rows[0]].extend(trace)
    out = df.copy()
    out["spans"] = pd.Series(spans, index=out.index, dtype=object)
    return out
