"""results.csv: the scored case table flattened to one CSV row per single-turn item or per turn of a thread.

The CSV is for spreadsheets and quick ``pandas.read_csv`` round trips, so it holds only flat text and number
columns: the inputs and outputs of each row, its status, and per evaluator key ``K`` the score (column ``K``,
so a custom evaluator's score sits under its folder name), result, threshold, reason and error. Nested data
(``K_details``, citations, spans, the evaluator map) stays in results.json.

Text cells that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return first)
get a leading ``'`` (:mod:`evalkit.documents.encoding.csv_cells`: the rule, its inverse and ``evalkit.read_csv``);
results.json keeps the original text.
"""

from __future__ import annotations

import os

import pandas as pd

from evalkit.analysis.summaries import scored_evaluators
from evalkit.documents.columns import score_column
from evalkit.documents.encoding.csv_cells import write_frame, write_table
from evalkit.documents.encoding.csv_text import fast_dtype
from evalkit.documents.files.atomic import atomic_write

#: Leading columns of results.csv, in order; absent ones are written empty.
BASE_COLUMNS = (
    "item",
    "turn",
    "thread",
    "prompt",
    "expected_response",
    "context",
    "response",
    "status",
    "error_code",
    "error_message",
)

#: Per-evaluator column suffixes, after the bare score column ``K``.
EVALUATOR_SUFFIXES = ("_result", "_threshold", "_reason", "_error")


def csv_columns(df: pd.DataFrame) -> list[str]:
    """The column names of results.csv for ``df``: :data:`BASE_COLUMNS`, then ``K, K_result, ...`` per key."""
    columns = list(BASE_COLUMNS)
    for ev in scored_evaluators(df):
        key = ev["key"]
        columns.append(key)
        columns.extend(key + suffix for suffix in EVALUATOR_SUFFIXES)
    return columns


def write_csv(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``df`` as results.csv at ``path`` (UTF-8, ``\\n`` line ends, no index), atomically.

    Columns are :func:`csv_columns`; a column the table lacks is written empty rather than dropped, so every
    results.csv of the same evaluator set has the same header. Missing scores, thresholds and ``<NA>`` turns are
    empty cells. The columns are read from ``df`` as they are (no flat copy of the table) and written by
    :func:`~evalkit.documents.encoding.csv_cells.write_table`; ``path`` is replaced only once complete.
    """
    with atomic_write(path, "w", encoding="utf-8", newline="") as handle:
        write_csv_rows(df, handle)


def write_csv_rows(df: pd.DataFrame, handle, start: int = 0, stop: int | None = None, *, header: bool = True):
    """results.csv's text of rows ``start:stop`` of ``df`` into ``handle`` (a text file opened with
    ``newline=""``), after the header line when ``header``. Every row's text depends on that row alone, so the
    header and the texts of consecutive ranges, joined, are exactly :func:`write_csv`'s file
    (``csv_parts`` writes a large table's ranges in two processes)."""
    names = csv_columns(df)
    renamed = _sources(df)
    sources = [renamed.get(name, name) for name in names]
    rows = slice(start, stop)
    if df.columns.is_unique and all(s not in df.columns or fast_dtype(df[s].dtype) for s in sources):
        columns = [df[s].iloc[rows] if s in df.columns else None for s in sources]
        write_table(names, columns, handle, header=header)
    else:  # rare column kinds (dates, categories): DataFrame.to_csv on the flat copy
        write_frame(csv_frame(df.iloc[rows]), handle, header=header)


def _sources(df: pd.DataFrame) -> dict[str, str]:
    """results.csv column -> case-table column, where they differ (a score column named after its key)."""
    return {
        ev["key"]: score_column(ev["key"])
        for ev in scored_evaluators(df)
        if score_column(ev["key"]) != ev["key"]
    }


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as the flat frame results.csv holds (:func:`csv_columns`; a Spark run writes it in chunks), before
    :func:`~evalkit.documents.encoding.csv_cells.write_frame` guards its text cells."""
    renamed = {source: name for name, source in _sources(df).items()}
    source = (
        df.drop(columns=list(renamed.values()), errors="ignore").rename(columns=renamed) if renamed else df
    )
    return source.reindex(columns=csv_columns(df))  # absent columns come back all-NaN, i.e. empty cells
