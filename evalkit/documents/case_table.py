"""Eval documents <-> the case table: one DataFrame row per single-turn item or per turn of a thread.

``load`` reads schema-v1 documents (and upgrades legacy forms in memory); ``to_document`` writes back
everything that was read (metadata, extensions, unknown root fields, per-item fields evalkit does not act
on yet such as ``tags`` and ``allowed_tools``) enriched with whatever the case table gained: responses,
scores, statuses, errors and thread summaries.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.documents.case_cells import CaseCells, read_cells

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
    return table_from_cells(read_cells(doc, validate=validate))


def table_from_cells(cells: CaseCells) -> pd.DataFrame:
    """The case table of a document's cells (``case_cells``, read without pandas, maybe elsewhere)."""
    frame = _object_frame(cells.columns, cells.rows)
    frame.insert(0, "item", np.array(cells.item_ids, dtype=np.int64))
    frame.insert(1, "turn", _turns(cells.turns))
    if cells.allowed_tools is not None:
        frame["allowed_tools"] = cells.allowed_tools
    frame.attrs["evalkit"] = {"document": cells.root, "source": cells.source}
    if cells.sha256 is not None:  # of the bytes read, for the results' provenance (results._run_provenance)
        frame.attrs["evalkit"]["document_sha256"] = cells.sha256
    return frame


def _turns(turns: list[int | None]) -> pd.api.extensions.ExtensionArray:
    """The nullable ``turn`` column; all missing (a document without threads) built at once, not per cell."""
    if turns.count(None) == len(turns):
        n = len(turns)
        return pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool))
    return pd.array(turns, dtype="Int64")


def _object_frame(columns: dict, rows: int) -> pd.DataFrame:
    """The object columns as one frame over one 2-D array filled column by column: pandas keeps that array as
    its block, where a dict of columns is copied into a new block (11 MB more at 100,000 rows, issue 20).
    ``np.fromiter`` does not look into the lists and dicts that pandas' own conversion inspects."""
    block = np.empty((len(columns), rows), dtype=object)
    for index, values in enumerate(columns.values()):
        block[index] = np.fromiter(values, dtype=object, count=rows)
    return pd.DataFrame(block.T, columns=list(columns), copy=False)


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
