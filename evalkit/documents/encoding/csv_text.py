"""A DataFrame's rows as CSV text, byte for byte what ``DataFrame.to_csv(index=False, lineterminator="\\n")``
writes, plus the carriage-return rule of :mod:`evalkit.documents.encoding.csv_cells` (a cell holding ``\\r`` is quoted),
at about 40% of ``to_csv``'s time (issue 20).

``to_csv`` converts each column to cells and hands the rows to Python's ``csv`` writer, which spends most of
the time (1.6 s of 2.2 s at 100,000 results rows). Here each column becomes its cells once (numpy's own text
for numbers, which is what ``to_csv`` writes, including float32's shorter digits), a column is scanned for the
characters that need quoting as one joined string (most columns have none, so no per-cell test), and the rows
are joined with ``str.join`` in C. Python 3.11's ``csv`` quotes a field holding ``,``, ``"`` or ``\\n`` (``\\r``
only where it is part of the line terminator; evalkit quotes it too); a row of one empty field is ``""``.

:func:`fast_dtype` says whether a column's kind is rendered here; a frame with other columns (dates, categories,
complex numbers) or non-text column names goes through ``to_csv`` as before.

May import: nothing from evalkit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

__all__ = ["fast_dtype", "plain_values", "write_columns"]

#: pandas' nullable integer and boolean dtypes (missing values are written as empty cells).
_MASKED = (
    pd.Int8Dtype,
    pd.Int16Dtype,
    pd.Int32Dtype,
    pd.Int64Dtype,
    pd.UInt8Dtype,
    pd.UInt16Dtype,
    pd.UInt32Dtype,
    pd.UInt64Dtype,
    pd.BooleanDtype,
)
#: Characters that make the ``csv`` writer (and evalkit, for ``\r``) quote a field.
_SPECIAL = (",", '"', "\n", "\r")


def fast_dtype(dtype) -> bool:
    """True when a column of ``dtype`` is rendered here exactly as ``to_csv`` renders it."""
    if isinstance(dtype, np.dtype):
        return dtype.kind in "fiubO"
    return isinstance(dtype, _MASKED)


def write_columns(names: list[str], columns: list, handle, *, header: bool = True, chunk_rows: int) -> None:
    """Write a table as CSV into ``handle``: ``names`` (already guarded) and per name a column, as a numpy array
    of a :func:`fast_dtype` (object arrays already guarded) or None for an empty column; ``chunk_rows`` rows
    are rendered at a time, so the text in memory stays small."""
    if header:
        handle.write(_row_text([[cell] for cell in _quoted(list(names))])[0] + "\n")
    rows = next((len(c) for c in columns if c is not None), 0)
    for start in range(0, rows, chunk_rows):
        stop = min(start + chunk_rows, rows)
        cells = [_quoted(_cells(c, start, stop)) for c in columns]
        handle.write("\n".join(_row_text(cells)) + "\n")


def plain_values(column: pd.Series) -> np.ndarray:
    """The column's values as :func:`write_columns` takes them: numpy arrays as they are, masked extension
    arrays as objects with None where a value is missing."""
    if isinstance(column.dtype, np.dtype):
        return column.to_numpy()
    return column.to_numpy(dtype=object, na_value=None)


def _row_text(cells: list[list[str]]) -> list[str]:
    if len(cells) == 1:  # csv writes a lone empty field as "" so the row is not a blank line
        return ['""' if c == "" else c for c in cells[0]]
    return list(map(",".join, zip(*cells)))


def _cells(values: np.ndarray | None, start: int, stop: int) -> list[str]:
    """Rows ``start:stop`` of a column as the cells ``to_csv`` writes, before quoting: missing values empty."""
    if values is None:
        return [""] * (stop - start)
    values = values[start:stop]
    if values.dtype.kind != "O":
        return _number_cells(values)
    cells = values.tolist()
    kinds = set(map(type, cells))
    if kinds == {str}:  # text only (the usual column): the cells themselves
        return cells
    if kinds <= _BOOL_OR_NONE:  # an object column of booleans and None (a match evaluator's score)
        return list(map(_BOOL_CELLS.__getitem__, cells))
    if infer_dtype(values, skipna=True) in (
        "string",
        "empty",
    ):  # text and missing values only: no Python loop
        missing = pd.isna(values)
        if missing.any():
            values = values.copy()
            values[missing] = ""
        return values.tolist()
    return [v if v.__class__ is str else _other(v) for v in values.tolist()]


_BOOL_OR_NONE = frozenset({bool, type(None)})
_BOOL_CELLS = {True: "True", False: "False", None: ""}


def _number_cells(values: np.ndarray) -> list[str]:
    """numpy's text of each number, which is what ``to_csv`` writes (float32's shorter digits included); NaN
    empty. Floats are formatted once per distinct value (scores and thresholds repeat); integers with ``str``."""
    if values.dtype.kind in "iub":
        return list(map(str, values.tolist()))
    if (np.signbit(values) & (values == 0)).any():
        distinct, inverse = values, np.arange(len(values))  # np.unique would merge -0.0 into 0.0
    else:
        distinct, inverse = np.unique(values, return_inverse=True)
    text = distinct.astype(str).astype(object)
    text[np.isnan(distinct)] = ""
    return text[inverse.reshape(-1)].tolist()


def _other(value) -> str:
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value):
        return ""
    return str(value)


def _quoted(cells: list[str]) -> list[str]:
    """``cells`` with each cell that holds a special character quoted (``"`` doubled)."""
    joined = "\x00".join(cells)
    if not any(char in joined for char in _SPECIAL):
        return cells
    if len(cells) > 8 and len(distinct := set(cells)) * 4 <= len(cells):  # few texts (reasons): each once
        quoted = dict(zip(distinct, _quoted(list(distinct))))
        return list(map(quoted.__getitem__, cells))
    return [_quote(c) if _needs_quote(c) else c for c in cells]


def _needs_quote(cell: str) -> bool:
    return "," in cell or '"' in cell or "\n" in cell or "\r" in cell


def _quote(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"'
