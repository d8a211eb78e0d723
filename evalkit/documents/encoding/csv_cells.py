"""Spreadsheet-safe CSV cells: the OWASP rule against CSV formula injection, and its exact inverse.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula
(``=HYPERLINK("http://x","y")``, ``@SUM(1+1)*cmd|' /C calc'!A0``), and agent responses, prompts and reasons
are text an attacker can choose. Every CSV evalkit writes (results.csv of ``run`` and ``spans eval``,
``evalkit runs --csv``) therefore prefixes such a *text* cell with one single quote ``'``, which spreadsheets
show as text; the CSV writer then quotes and doubles ``"`` as usual. Numbers stay numbers (a score of -0.5 is
written as ``-0.5``): only Python ``str`` cells and header names are changed.

A carriage return inside a cell is a line break to spreadsheets and CSV readers, so a cell holding one is
always quoted (:func:`write_frame`; Python 3.11's ``csv`` quotes only the characters of the line terminator, and
results.csv ends lines with ``\n``): an unquoted ``a\r=1`` would start a new row with the formula ``=1``.

The rule is reversible: a text that already starts with quotes followed by one of those characters (``'=1``)
gets one more quote too, so reading back means "strip one leading ``'`` from a cell whose first character after
its leading quotes is ``=``, ``+``, ``-``, ``@``, tab or carriage return" (:func:`restore`, and
:func:`read_csv`, which applies it to a whole file). results.json always keeps the original text.

Writing is :mod:`evalkit.documents.encoding.csv_text` (the bytes of ``DataFrame.to_csv`` at about half its time) for
the usual column kinds, ``to_csv`` in chunks otherwise.

May import: evalkit.documents.encoding.csv_text only.
"""

from __future__ import annotations

import os
import uuid
from itertools import repeat
from typing import Any

import numpy as np

from evalkit.documents.encoding.csv_text import fast_dtype, plain_values, write_columns

__all__ = [
    "TRIGGERS",
    "guard",
    "guard_frame",
    "read_csv",
    "restore",
    "restore_frame",
    "write_frame",
    "write_table",
]

#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection").
TRIGGERS = frozenset("=+-@\t\r")
#: First characters of the cells that may need a change (the triggers, and ``'`` before one).
_CANDIDATES = ["=", "+", "-", "@", "\t", "\r", "'"]
_PREFIXES = tuple(_CANDIDATES)


def guard(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text: one ``'`` in front when it would run as a formula."""
    return "'" + text if text.lstrip("'")[:1] in TRIGGERS else text


def restore(value: Any) -> Any:
    """The original text of a cell :func:`guard` wrote (other values are returned as they are)."""
    if isinstance(value, str) and value[:1] == "'" and value.lstrip("'")[:1] in TRIGGERS:
        return value[1:]
    return value


def guard_frame(frame):
    """Guard the text cells and column names of a DataFrame, in place; returns it (for ``to_csv``).

    Only object columns can hold text; their first characters are compared in one numpy pass, so a large
    table without a risky cell costs a few milliseconds per column.
    """
    _apply(frame, guard)
    return frame


def restore_frame(frame):
    """Undo :func:`guard_frame` on a DataFrame read from one of evalkit's CSV files, in place; returns it."""
    _apply(frame, restore)
    return frame


#: Rows rendered at a time, by :func:`write_table` and by one ``to_csv`` call in :func:`write_frame`: at
#: 2,000 a 100,000-row results.csv holds 8 MB at most while it is written (25 MB at 10,000), as fast.
CHUNK_ROWS = 2_000


def write_frame(frame, handle, *, header: bool = True) -> None:
    """``frame.to_csv`` into ``handle`` (no index, ``\n`` line ends), its text cells guarded and every cell that
    holds a carriage return quoted.

    The usual frames (text column names; number, boolean, text and nullable-integer columns) are written by
    :func:`write_table`, which leaves ``frame`` as it is; others are guarded in place and rendered with ``to_csv``
    ``CHUNK_ROWS`` at a time: finding a carriage return is one scan of each chunk's text, and only a chunk that
    has one (rare) is rendered again, with a unique token in each such cell, replaced by the quoted cells.
    """
    names = list(frame.columns)
    if names and all(n.__class__ is str for n in names) and all(fast_dtype(d) for d in frame.dtypes):
        write_table(names, [frame.iloc[:, position] for position in range(len(names))], handle, header=header)
        return
    guard_frame(frame)
    for start in range(0, max(len(frame), 1), CHUNK_ROWS):
        part = frame.iloc[start : start + CHUNK_ROWS]
        with_header = header and start == 0
        text = part.to_csv(None, header=with_header, index=False, lineterminator="\n")
        if "\r" in text:
            part = part.copy()
            quoted = _quote_carriage_returns(part)
            text = part.to_csv(None, header=with_header, index=False, lineterminator="\n")
            for token, cell in quoted.items():
                text = text.replace(token, cell, 1)
        handle.write(text)


def write_table(names: list[str], columns: list, handle, *, header: bool = True) -> None:
    """Write columns as CSV: ``names`` and per name a Series of a kind :func:`write_frame` takes fast, or None
    for a column written empty; the same bytes as :func:`write_frame` on the frame of those columns, without
    building that frame (results.csv of a run reads the case table's own columns)."""
    values = [None if column is None else _guarded(plain_values(column)) for column in columns]
    write_columns([guard(name) for name in names], values, handle, header=header, chunk_rows=CHUNK_ROWS)


def _guarded(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind != "O":
        return values
    changed = _changed(values, guard)
    return values if changed is None else changed


def _quote_carriage_returns(frame) -> dict[str, str]:
    """Replace each text cell with a ``\r`` that the writer would leave unquoted by a token; token -> quoted cell."""
    quoted: dict[str, str] = {}
    nonce = uuid.uuid4().hex
    for position, dtype in enumerate(frame.dtypes):
        if dtype.kind != "O":
            continue
        values = frame.iloc[:, position].to_numpy().copy()
        for index, value in enumerate(values):
            if isinstance(value, str) and "\r" in value and "\n" not in value:  # "\n" is quoted already
                token = f"evalkit-cr-{nonce}-{len(quoted)}"
                quoted[token] = '"' + value.replace('"', '""') + '"'
                values[index] = token
        frame.isetitem(position, values)
    return quoted


def read_csv(path: str | os.PathLike, **kwargs):
    """A CSV file evalkit wrote (results.csv, ``runs --csv``) as a DataFrame, with the original texts back.

    ``kwargs`` go to ``pandas.read_csv`` (e.g. ``dtype=str, keep_default_na=False`` for every cell as text).
    """
    import pandas as pd

    return restore_frame(pd.read_csv(path, **kwargs))


def _apply(frame, change) -> None:
    columns = [change(c) if isinstance(c, str) else c for c in frame.columns]
    if columns != list(frame.columns):
        frame.columns = columns
    for position, dtype in enumerate(frame.dtypes):
        if dtype.kind != "O":
            continue
        values = frame.iloc[:, position].to_numpy()
        changed = _changed(values, change)
        if changed is not None:
            frame.isetitem(position, changed)


def _changed(values: np.ndarray, change) -> np.ndarray | None:
    """``values`` with ``change`` applied to its candidate cells, or None when no cell changes."""
    if not len(values):
        return None
    out = None
    for index in _candidate_cells(values):
        value = values[index]
        if isinstance(value, str):
            new = change(value)
            if new is not value:
                if out is None:
                    out = values.copy()
                out[index] = new
    return out


def _candidate_cells(values: np.ndarray):
    """The positions of the cells whose first character is one of :data:`_CANDIDATES` (and maybe others that
    are no text): none in a column without text or whose distinct texts (a quarter of the cells at most: a
    result, a reason) start with none of them; else by numpy, over the whole column."""
    cells = values.tolist()
    kinds = set(map(type, cells))
    if not any(issubclass(kind, str) for kind in kinds):  # no text cell: nothing to change
        return ()
    if kinds == {str}:
        distinct = set(cells)
        if len(distinct) * 4 <= len(cells) and not any(map(str.startswith, distinct, repeat(_PREFIXES))):
            return ()
    try:
        first = values.astype(
            "U1"
        )  # str() of each cell cut to one character: a C loop, no Python call per text
    except ValueError:  # a list among the cells: numpy reads it as a sequence
        first = np.array([v[:1] if isinstance(v, str) else "" for v in cells])
    return np.flatnonzero(np.isin(first, _CANDIDATES))
