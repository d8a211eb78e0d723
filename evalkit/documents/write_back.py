"""The case table back to an eval document: everything that was read (metadata, extensions, unknown root
fields, per-item fields evalkit does not act on such as ``tags``) enriched with what the case table gained:
responses, scores, statuses, errors and thread summaries. Items stream one at a time, so large results
never sit in memory as one document.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from evalkit.documents import results
from evalkit.documents.encoding import json_rows, json_scores
from evalkit.documents.evaluator_maps import upstream_evaluator_map
from evalkit.documents.statuses import thread_summary


def to_document(df: pd.DataFrame) -> dict[str, Any]:
    """Write the case table back as an eval document, enriched with what scoring added."""
    root = document_root(df)
    root["items"] = list(iter_items(df))
    return root


def document_root(df: pd.DataFrame) -> dict[str, Any]:
    """The document's fields other than ``items`` (schemaVersion, metadata, defaults, root extras)."""
    meta = df.attrs.get("evalkit", {})
    root = copy.deepcopy(meta.get("document") or {"schemaVersion": "1.11.0"})
    if "default_evaluators" in root:
        root["default_evaluators"] = upstream_evaluator_map(root["default_evaluators"])
    return root


def iter_items(df: pd.DataFrame, *, encoded: bool = False) -> Iterator[dict | bytes]:
    """The document's items one at a time, in document order, so large results stream to disk.

    Rows are written back in (item, turn) order whatever order the table is in; the turns of a thread are
    gathered under their thread, which gets a ``summary`` once its turns have statuses. ``encoded=True``
    (results.json's writer) gives a plain row's item as its JSON bytes instead, encoded column by column
    (:mod:`evalkit.documents.encoding.json_rows`: the same bytes as the item's, at a fraction of the time).
    """
    meta = df.attrs.get("evalkit", {})
    scored = bool(meta.get("scored")) or "status" in df.columns
    order = np.lexsort((df["turn"].fillna(-1).to_numpy(dtype=np.int64), df["item"].to_numpy(dtype=np.int64)))
    if (np.diff(order) == 1).all():
        order = None  # already in document order: skip the reindexing
    arrays = [objects(df[name]) if name in df.columns else None for name in _ALL_COLUMNS]
    score_chunks = results.score_chunks(df, order) if scored else None
    thread: dict | None = None
    thread_item = None
    for start in range(0, len(df), results.CHUNK_ROWS):
        picked = (
            slice(start, start + results.CHUNK_ROWS)
            if order is None
            else order[start : start + results.CHUNK_ROWS]
        )
        count = min(results.CHUNK_ROWS, len(df) - start)
        columns = [[None] * count if array is None else array[picked].tolist() for array in arrays]
        chunk = next(score_chunks) if score_chunks is not None else None
        plain = _plain(columns, chunk) if encoded else [None] * count
        if thread is None and None not in plain:
            yield from plain
            continue
        for row, (item, turn, *values) in enumerate(zip(*columns)):
            if plain[row] is not None:
                if thread is not None:
                    yield _finish_thread(thread, scored)
                    thread = None
                yield plain[row]
                continue
            sc = None if chunk is None else results.collection(chunk[0], row, chunk[2])
            entry = _entry(*values, sc)
            is_turn = not (turn is None or turn is pd.NA)
            if thread is not None and (not is_turn or item != thread_item):
                yield _finish_thread(thread, scored)
                thread = None
            if not is_turn:
                yield entry
                continue
            if thread is None:
                thread, thread_item = dict(values[9] or {}), item
                thread["turns"] = []
            thread["turns"].append(entry)
    if thread is not None:
        yield _finish_thread(thread, scored)


def _plain(columns: list[list], chunk) -> list[bytes | None]:
    """The chunk's plain rows as bytes (None for the others): :func:`json_rows.encoded_rows`, scores by :mod:`json_scores`."""
    rows = dict(zip(_ALL_COLUMNS, columns))
    if json_rows.plain_share(rows) < PLAIN_SHARE:  # mostly turns or items with more fields: dicts, as before
        return [None] * len(columns[0])
    collections = None if chunk is None else json_scores.encoded_collections(*chunk)
    return json_rows.encoded_rows(rows, collections)


def _entry(
    prompt, expected, context, response, citations, executions, calls, ext, src, tsrc, st, code, msg, sc
):
    """One row's item (a thread's turn: one turn), from its cells and its ``scores`` object."""
    src = src if isinstance(src, dict) else {}
    entry = dict(src)
    if "evaluators" in entry:
        entry["evaluators"] = upstream_evaluator_map(entry["evaluators"])
    entry["prompt"] = prompt
    _put_text(entry, src, "expected_response", expected)
    _put_text(entry, src, "context", context)
    if isinstance(response, str):
        entry["response"] = response
    _put_list(entry, src, "citations", citations)
    if executions or isinstance(calls, dict) or "diagnostics" in entry:
        diagnostics = dict(entry.get("diagnostics") or {})
        if executions:
            diagnostics["retrieval_executions"] = executions
        if isinstance(calls, dict):
            diagnostics["tool_calls"] = calls
        entry["diagnostics"] = diagnostics
    if ext or "extensions" in entry:
        entry["extensions"] = ext
    if isinstance(st, str):
        entry["scores"] = sc if sc is not None else {}
        entry["status"] = st
        if isinstance(code, str) and code:
            entry["error"] = {"code": code, "message": msg}
        else:
            entry.pop("error", None)
    return entry


_ROW_COLUMNS = (
    "item",
    "turn",
    "prompt",
    "expected_response",
    "context",
    "response",
    "citations",
    "retrieval_executions",
    "tool_calls",
    "extensions",
    "source",
    "thread_source",
)
#: The share of a chunk's rows that must be plain (:func:`json_rows.plain_share`) for the chunk to be encoded
#: column by column: below it, encoding the columns first and then building the other rows as dicts costs
#: more than it saves (a quarter of odd rows made results.json 25% slower than dicts alone).
PLAIN_SHARE = 0.9
_ALL_COLUMNS = (*_ROW_COLUMNS, "status", "error_code", "error_message")


def objects(column: pd.Series) -> np.ndarray:
    """The column's values as ``Series.tolist`` gives them, as an array (``<NA>`` stays ``pd.NA``: pandas'
    ``to_numpy`` would make a nullable integer column's missing values NaN)."""
    return column.to_numpy() if isinstance(column.dtype, np.dtype) else column.astype(object).to_numpy()


def _finish_thread(thread: dict, scored: bool) -> dict:
    if scored and all("status" in t for t in thread["turns"]):
        thread["summary"] = thread_summary([t["status"] for t in thread["turns"]])
    return thread


def _put_text(entry: dict, src: dict, key: str, value: Any) -> None:
    if value.__class__ is str:
        if value or key in src:
            entry[key] = value
    elif key in src:
        entry[key] = ""


def _put_list(entry: dict, src: dict, key: str, value: Any) -> None:
    if isinstance(value, list):
        if value or key in src:
            entry[key] = list(value)
    elif key in src:
        entry[key] = []
