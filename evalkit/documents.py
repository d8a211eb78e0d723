"""Eval documents <-> the case table: one DataFrame row per single-turn item or per turn of a thread.

``load`` reads schema-v1 documents (and upgrades legacy forms in memory); ``to_document`` writes back
everything that was read (metadata, extensions, unknown root fields, per-item fields evalkit does not act
on yet such as ``tags`` and ``allowed_tools``) enriched with whatever the case table gained: responses,
scores, statuses, errors and thread summaries.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .evaluators.registry import resolve_row_evaluators
from .validation import read_json, validate_document
from .versions import upgrade

#: Case-table columns, in order. ``source`` is the item's (or turn's) own dict as read and
#: ``thread_source`` the enclosing thread without its turns: they make the round trip exact.
CASE_COLUMNS = (
    "item",
    "turn",
    "thread",
    "prompt",
    "expected_response",
    "context",
    "response",
    "citations",
    "retrieval_executions",
    "spans",
    "evaluators",
    "extensions",
    "source",
    "thread_source",
)

_TEXT_INPUTS = ("prompt", "expected_response", "context")


def load(doc: str | os.PathLike | dict | list, *, validate: bool = True) -> pd.DataFrame:
    """Read an eval document (a path, or an already parsed dict / legacy list) into a case table.

    The document-level fields live in ``df.attrs["evalkit"]["document"]`` (the root without ``items``);
    each row's ``evaluators`` holds its resolved evaluator map (defaults plus the item's own map under
    ``evaluators_mode`` extend / replace).
    """
    if isinstance(doc, (str, os.PathLike)):
        source = str(doc)
        raw = read_json(doc)
    else:
        source = "<document>"
        raw = copy.deepcopy(doc)
    data = upgrade(raw, source)
    if validate:
        validate_document(data, source)
    return _case_table(data, source)


def _case_table(data: dict, source: str) -> pd.DataFrame:
    root = {k: v for k, v in data.items() if k != "items"}
    defaults = root.get("default_evaluators")
    columns: dict[str, list] = {name: [] for name in CASE_COLUMNS}

    def add(item_index, turn_index, thread, entry, thread_source):
        columns["item"].append(item_index)
        columns["turn"].append(turn_index)
        columns["thread"].append(thread)
        for name in _TEXT_INPUTS:
            columns[name].append(entry.get(name, ""))
        columns["response"].append(entry.get("response"))
        columns["citations"].append(entry.get("citations") or [])
        diagnostics = entry.get("diagnostics") or {}
        columns["retrieval_executions"].append(diagnostics.get("retrieval_executions") or [])
        columns["spans"].append([])
        columns["evaluators"].append(
            resolve_row_evaluators(defaults, entry.get("evaluators"), entry.get("evaluators_mode", "extend"))
        )
        columns["extensions"].append(entry.get("extensions") or {})
        columns["source"].append(entry)
        columns["thread_source"].append(thread_source)

    for index, item in enumerate(data["items"]):
        if "turns" in item:
            thread_source = {k: v for k, v in item.items() if k != "turns"}
            thread = item.get("conversation_id") or item.get("name")
            for turn_index, turn in enumerate(item["turns"]):
                add(index, turn_index, thread, turn, thread_source)
        else:
            add(index, None, None, item, None)

    frame = pd.DataFrame(columns, columns=list(CASE_COLUMNS))
    frame["turn"] = frame["turn"].astype("Int64")
    frame.attrs["evalkit"] = {"document": root, "source": source}
    return frame


def to_document(df: pd.DataFrame) -> dict[str, Any]:
    """Write the case table back as an eval document, enriched with what scoring added."""
    root = document_root(df)
    root["items"] = list(iter_items(df))
    return root


def document_root(df: pd.DataFrame) -> dict[str, Any]:
    """The document's fields other than ``items`` (schemaVersion, metadata, defaults, root extras)."""
    meta = df.attrs.get("evalkit", {})
    return copy.deepcopy(meta.get("document") or {"schemaVersion": "1.11.0"})


def iter_items(df: pd.DataFrame) -> Iterator[dict]:
    """The document's items one at a time, in document order, so large results stream to disk.

    Rows are written back in (item, turn) order whatever order the table is in; the turns of a thread are
    gathered under their thread, which gets a ``summary`` once its turns have statuses.
    """
    from .results import iter_score_collections

    meta = df.attrs.get("evalkit", {})
    scored = bool(meta.get("scored")) or "status" in df.columns
    order = np.lexsort((df["turn"].fillna(-1).to_numpy(dtype=np.int64), df["item"].to_numpy(dtype=np.int64)))
    if (np.diff(order) == 1).all():
        order = None  # already in document order: skip the reindexing

    def column(name: str, default=None) -> list:
        if name not in df.columns:
            return [default] * len(df)
        values = df[name].tolist()
        return values if order is None else [values[i] for i in order]

    scores = iter_score_collections(df, order) if scored else iter([None] * len(df))
    rows = zip(
        column("item"),
        column("turn"),
        *(column(c) for c in ("prompt", "expected_response", "context", "response", "citations")),
        column("retrieval_executions"),
        column("extensions"),
        column("source"),
        column("thread_source"),
        scores,
        column("status"),
        column("error_code"),
        column("error_message"),
    )
    thread: dict | None = None
    thread_item = None
    for (
        item,
        turn,
        prompt,
        expected,
        context,
        response,
        citations,
        executions,
        ext,
        src,
        tsrc,
        sc,
        st,
        code,
        msg,
    ) in rows:
        entry = dict(src) if isinstance(src, dict) else {}
        entry["prompt"] = prompt
        _put_text(entry, src, "expected_response", expected)
        _put_text(entry, src, "context", context)
        if isinstance(response, str):
            entry["response"] = response
        _put_list(entry, src, "citations", citations)
        if executions or "diagnostics" in entry:
            diagnostics = dict(entry.get("diagnostics") or {})
            if executions:
                diagnostics["retrieval_executions"] = executions
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
        is_turn = not (turn is None or turn is pd.NA)
        if thread is not None and (not is_turn or item != thread_item):
            yield _finish_thread(thread, scored)
            thread = None
        if not is_turn:
            yield entry
            continue
        if thread is None:
            thread, thread_item = dict(tsrc or {}), item
            thread["turns"] = []
        thread["turns"].append(entry)
    if thread is not None:
        yield _finish_thread(thread, scored)


def _finish_thread(thread: dict, scored: bool) -> dict:
    from .statuses import thread_summary

    if scored and all("status" in t for t in thread["turns"]):
        thread["summary"] = thread_summary([t["status"] for t in thread["turns"]])
    return thread


def _put_text(entry: dict, src: Any, key: str, value: Any) -> None:
    had = isinstance(src, dict) and key in src
    if (isinstance(value, str) and value) or had:
        entry[key] = "" if value is None or _isna(value) else value


def _put_list(entry: dict, src: Any, key: str, value: Any) -> None:
    had = isinstance(src, dict) and key in src
    if (isinstance(value, list) and value) or had:
        entry[key] = list(value) if isinstance(value, list) else []


def _isna(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def document_path(df: pd.DataFrame) -> Path | None:
    """The file the case table was loaded from, when it came from a file."""
    source = df.attrs.get("evalkit", {}).get("source")
    return Path(source) if source and not source.startswith("<") else None
