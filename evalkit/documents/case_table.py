"""Eval documents <-> the case table: one DataFrame row per single-turn item or per turn of a thread.

``load`` reads schema-v1 documents (and upgrades legacy forms in memory); ``to_document`` writes back
everything that was read (metadata, extensions, unknown root fields, per-item fields evalkit does not act
on yet such as ``tags`` and ``allowed_tools``) enriched with whatever the case table gained: responses,
scores, statuses, errors and thread summaries.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.documents.empty_cells import EMPTY_DICT, EMPTY_LIST
from evalkit.documents.evaluator_maps import resolve_allowed_tools, resolve_row_evaluators
from evalkit.documents.json_input import read_json
from evalkit.documents.rebuilt_items import kept_sources
from evalkit.documents.validation import validate_document
from evalkit.documents.versions import upgrade

#: Case-table columns, in order. ``source`` is the item's (or turn's) own dict as read, or None where the
#: columns rebuild it exactly (``rebuilt_items``), and ``thread_source`` the enclosing thread without its
#: turns: they make the round trip exact. An empty ``citations`` / ``retrieval_executions`` / ``spans`` /
#: ``extensions`` cell holds the one read-only ``EMPTY_LIST`` / ``EMPTY_DICT`` shared by all such rows
#: (``empty_cells``: a fresh one per row was 23 MB at 100,000 rows); changing it in place raises
#: ``SharedCellError``, assigning the cell a new value does not.
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

    cells = {  # one lazy sequence per object column, each read once into the table's block
        "thread": threads,
        "prompt": (e.get("prompt", "") for e in entries),
        "expected_response": (e.get("expected_response", "") for e in entries),
        "context": (e.get("context", "") for e in entries),
        "response": (e.get("response") for e in entries),
        "citations": (e.get("citations") or EMPTY_LIST for e in entries),
        "retrieval_executions": (
            (e.get("diagnostics") or EMPTY_DICT).get("retrieval_executions") or EMPTY_LIST for e in entries
        ),
        "tool_calls": ((e.get("diagnostics") or EMPTY_DICT).get("tool_calls") for e in entries),
        "spans": [EMPTY_LIST] * len(entries),
        "evaluators": (
            resolve_row_evaluators(defaults, e.get("evaluators"), e.get("evaluators_mode", "extend"))
            for e in entries
        ),
        "extensions": (e.get("extensions") or EMPTY_DICT for e in entries),
        "source": kept_sources(entries),
        "thread_source": thread_sources,
    }
    frame = _object_frame(cells, len(entries))
    frame.insert(0, "item", np.array(item_ids, dtype=np.int64))
    frame.insert(1, "turn", pd.array(turns, dtype="Int64"))
    if "default_allowed_tools" in root or any("allowed_tools" in e for e in entries):
        default = root.get("default_allowed_tools")
        frame["allowed_tools"] = [
            resolve_allowed_tools(default, e.get("allowed_tools"), e.get("allowed_tools_mode", "extend"))
            for e in entries
        ]
    frame.attrs["evalkit"] = {"document": root, "source": source}
    return frame


def _object_frame(cells: dict, rows: int) -> pd.DataFrame:
    """The object columns as one frame over one 2-D array filled column by column: pandas keeps that array as
    its block, where a dict of columns is copied into a new block (11 MB more at 100,000 rows, issue 20).
    ``np.fromiter`` does not look into the lists and dicts that pandas' own conversion inspects."""
    block = np.empty((len(cells), rows), dtype=object)
    for index, values in enumerate(cells.values()):
        block[index] = np.fromiter(values, dtype=object, count=rows)
    return pd.DataFrame(block.T, columns=list(cells), copy=False)


def document_path(df: pd.DataFrame) -> Path | None:
    """The file the case table was loaded from, when it came from a file."""
    source = df.attrs.get("evalkit", {}).get("source")
    return Path(source) if source and not source.startswith("<") else None


def document_title(df: pd.DataFrame) -> str:
    """What to call the document a case table came from: its ``metadata.name``, else the source file name."""
    meta = df.attrs.get("evalkit") or {}
    document = meta.get("document") if isinstance(meta, dict) else None
    metadata = document.get("metadata") if isinstance(document, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if name not in (None, ""):
        return str(name)
    source = meta.get("source") if isinstance(meta, dict) else None
    return Path(str(source)).name if source else "evalkit report"
