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
    "tool_calls",
    "spans",
    "evaluators",
    "extensions",
    "source",
    "thread_source",
)


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
    """Build the case table column by column (one list comprehension per column, no per-row dicts)."""
    root = {k: v for k, v in data.items() if k != "items"}
    defaults = root.get("default_evaluators")
    items = data["items"]
    if not any("turns" in item for item in items):
        entries, item_ids = items, list(range(len(items)))
        turns = threads = thread_sources = [None] * len(items)
    else:
        entries, item_ids, turns, threads, thread_sources = [], [], [], [], []
        for index, item in enumerate(items):
            if "turns" not in item:
                entries.append(item)
                item_ids.append(index)
                turns.append(None)
                threads.append(None)
                thread_sources.append(None)
                continue
            thread_source = {k: v for k, v in item.items() if k != "turns"}
            name = item.get("conversation_id") or item.get("name")
            for turn_index, turn in enumerate(item["turns"]):
                entries.append(turn)
                item_ids.append(index)
                turns.append(turn_index)
                threads.append(name)
                thread_sources.append(thread_source)

    columns = {
        "item": item_ids,
        "turn": pd.array(turns, dtype="Int64"),
        "thread": threads,
        "prompt": [e.get("prompt", "") for e in entries],
        "expected_response": [e.get("expected_response", "") for e in entries],
        "context": [e.get("context", "") for e in entries],
        "response": [e.get("response") for e in entries],
        "citations": [e.get("citations") or [] for e in entries],
        "retrieval_executions": [
            (e.get("diagnostics") or {}).get("retrieval_executions") or [] for e in entries
        ],
        "tool_calls": [(e.get("diagnostics") or {}).get("tool_calls") for e in entries],
        "spans": [[] for _ in entries],
        "evaluators": [
            resolve_row_evaluators(defaults, e.get("evaluators"), e.get("evaluators_mode", "extend"))
            for e in entries
        ],
        "extensions": [e.get("extensions") or {} for e in entries],
        "source": entries,
        "thread_source": thread_sources,
    }
    frame = pd.DataFrame(columns, columns=list(CASE_COLUMNS))
    if "default_allowed_tools" in root or any("allowed_tools" in e for e in entries):
        from .evaluators.toolcalls import resolve_allowed_tools

        default = root.get("default_allowed_tools")
        frame["allowed_tools"] = [
            resolve_allowed_tools(default, e.get("allowed_tools"), e.get("allowed_tools_mode", "extend"))
            for e in entries
        ]
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
        column("tool_calls"),
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
        calls,
        ext,
        src,
        tsrc,
        sc,
        st,
        code,
        msg,
    ) in rows:
        src = src if isinstance(src, dict) else {}
        entry = dict(src)
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


def document_path(df: pd.DataFrame) -> Path | None:
    """The file the case table was loaded from, when it came from a file."""
    source = df.attrs.get("evalkit", {}).get("source")
    return Path(source) if source and not source.startswith("<") else None
