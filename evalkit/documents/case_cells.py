"""An eval document read into the cells of its case table, without pandas or numpy.

``case_table.load`` builds its DataFrame from these cells; the ``evalkit run`` command reads them in a forked
child while it imports pandas and its machinery (``load_ahead``, issue 20), which is why this module and the
ones it imports never import pandas or numpy.

:func:`read_cells` reads (``json_input``), upgrades (``versions``) and validates (``validation``) a document,
then lays out its rows: one per single-turn item, one per turn of a thread. ``CaseCells.columns`` holds one
sequence per object column, in the table's order after ``item`` and ``turn``: lists read from the entries in C
(``map(dict.get, ...)``, a third of a Python loop's time), except ``source``, which is lazy until
:meth:`listed` (for pickling).

May import: evalkit.documents.json_input, versions, validation, rebuilt_items, evaluator_maps, empty_cells,
destinations;
evalkit.errors.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import repeat
from typing import Any

from evalkit.documents.destinations import refuse_destinations
from evalkit.documents.empty_cells import EMPTY_DICT, EMPTY_LIST
from evalkit.documents.evaluator_maps import resolve_allowed_tools, resolve_row_evaluators
from evalkit.documents.json_input import read_json_and_digest
from evalkit.documents.rebuilt_items import kept_sources
from evalkit.documents.validation import validate_document
from evalkit.documents.versions import upgrade


@dataclass
class CaseCells:
    """The case table of one document, column by column.

    ``sha256``: the digest of the file's bytes as read (None for a document given as a value, or a table built
    without one); ``root``: the document without ``items``; ``source``: its file name, or ``<document>``; ``rows``: the
    number of rows; ``item_ids`` / ``turns``: the ``item`` and ``turn`` columns (a turn is None outside
    threads); ``columns``: the object columns by name; ``allowed_tools``: each row's resolved allowlist, or
    None when the document has no allowlist at all (the table then has no such column).
    """

    root: dict
    source: str
    rows: int
    item_ids: list[int]
    turns: list[int | None]
    columns: dict[str, Iterable[Any]]
    allowed_tools: list | None = None
    sha256: str | None = None

    def listed(self) -> CaseCells:
        """The same cells with every column a list (generators cannot be pickled)."""
        return replace(self, columns={name: list(values) for name, values in self.columns.items()})


def read_cells(doc: str | os.PathLike | dict | list, *, validate: bool = True) -> CaseCells:
    """Read an eval document (a path, or an already parsed dict / legacy list) into its case table's cells.

    Raises what reading and validation raise for a document that is not a valid eval document
    (``DocumentError`` and ``JsonInputError``, both ``EvalkitError``s naming the file and the place).
    """
    digest = None
    if isinstance(doc, (str, os.PathLike)):
        source = str(doc)
        raw, digest = read_json_and_digest(doc)
    else:
        source = "<document>"
        raw = copy.deepcopy(doc)
    data = upgrade(raw, source)
    refuse_destinations(data, source)  # keys go only where the user said: never where a document says
    if validate:
        validate_document(data, source)
    return replace(_cells(data, source), sha256=digest)


def _field(entries: list[dict], key: str, default: Any = None) -> list:
    """``entry.get(key, default)`` of every entry, in C (``map``): a third of a Python loop's time."""
    return list(map(dict.get, entries, repeat(key), repeat(default)))


def _or_empty(values: list, empty: Any) -> list:
    """``values`` with each empty or missing value replaced by the shared read-only ``empty``."""
    return values if all(values) else [value or empty for value in values]


def _cells(data: dict, source: str) -> CaseCells:
    """Lay out the rows column by column (no per-row dicts)."""
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

    n = len(entries)
    columns = {
        "thread": threads,
        "prompt": _field(entries, "prompt", ""),
        "expected_response": _field(entries, "expected_response", ""),
        "context": _field(entries, "context", ""),
        "response": _field(entries, "response"),
        "citations": _or_empty(_field(entries, "citations"), EMPTY_LIST),
    }
    diagnostics = _field(entries, "diagnostics")
    if any(diagnostics):
        columns["retrieval_executions"] = [
            (d or EMPTY_DICT).get("retrieval_executions") or EMPTY_LIST for d in diagnostics
        ]
        columns["tool_calls"] = [(d or EMPTY_DICT).get("tool_calls") for d in diagnostics]
    else:
        columns["retrieval_executions"], columns["tool_calls"] = [EMPTY_LIST] * n, [None] * n
    columns["spans"] = [EMPTY_LIST] * n
    own = _field(entries, "evaluators")
    if own.count(None) == n:  # no row has its own map (whatever its mode): all share the defaults object
        columns["evaluators"] = [resolve_row_evaluators(defaults, None)] * n
    else:
        modes = _field(entries, "evaluators_mode", "extend")
        columns["evaluators"] = list(map(resolve_row_evaluators, repeat(defaults), own, modes))
    columns["extensions"] = _or_empty(_field(entries, "extensions"), EMPTY_DICT)
    columns["source"] = kept_sources(entries)
    columns["thread_source"] = thread_sources
    allowed = None
    if "default_allowed_tools" in root or any("allowed_tools" in e for e in entries):
        default = root.get("default_allowed_tools")
        allowed = [
            resolve_allowed_tools(default, e.get("allowed_tools"), e.get("allowed_tools_mode", "extend"))
            for e in entries
        ]
    return CaseCells(root, source, n, item_ids, turns, columns, allowed)
