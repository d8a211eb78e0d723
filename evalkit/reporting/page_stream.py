"""The report page written from chunks of a scored table, without holding the table: ``evalkit run --engine
spark`` (see :class:`PageStream`).

The page (:mod:`evalkit.reporting.page`) is its head (title, facts, status counts, evaluator summary, charts),
the item data as one JSON object of columns, and its tail. Everything in the head adds up over chunks (counts,
the summary, the charts' binned counts, :mod:`evalkit.reporting.score_counts`), and each column of the item
data is a concatenation of the chunks' columns. So each chunk's columns, made by the same functions as for a
whole table (:func:`~evalkit.reporting.page_data.page_columns`,
:func:`~evalkit.reporting.page_details.detail_values`), are appended as script-safe JSON to one spool file per
column, one line per chunk (and, while the column's distinct values are few, their codes to another), and the
chunk's scores and their verdicts to two binary files per evaluator. At the end the head is rendered from the totals and the
columns are copied from their files into the page one line at a time. Memory is one chunk plus, per column,
its distinct values while they are few (at most :data:`STREAM_DISTINCT`): such a column is embedded in
:func:`~evalkit.reporting.page.compact` form, as on a page written from a whole table.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.summaries import scored_evaluators
from evalkit.documents.files.atomic import atomic_write
from evalkit.reporting.inline import script_safe_json
from evalkit.reporting.page import (
    COMPACT_ROWS,
    Distinct,
    emit_data,
    figures_of,
    page_meta,
    page_parts,
    summary_rows,
)
from evalkit.reporting.page_data import TEXT_LIMIT, page_columns
from evalkit.reporting.page_details import detail_values, has_content
from evalkit.reporting.page_first import extend_first, first_block
from evalkit.reporting.score_counts import ScoreCounts

#: A streamed column keeps its distinct values (to embed it compacted) while there are at most this many; past
#: that it is embedded as a plain list. Bounds the memory a column can take whatever the row count.
STREAM_DISTINCT = 1000
#: Scores read back per step when the charts' bins are counted.
SCORE_CHUNK = 100_000


def _writer(path: Path):
    # surrogatepass: a lone surrogate in a text comes back as it went in (the page escapes it)
    return open(path, "w", encoding="utf-8", errors="surrogatepass", newline="\n")  # noqa: SIM115


class _Spool:
    """One page column on disk: a line per chunk of its values (script-safe JSON, a list's items) and, while its
    distinct values are few, of their codes (:class:`~evalkit.reporting.page.Distinct`)."""

    def __init__(self, path: Path, detail: bool):
        self.path = path
        self.codes_path = path.with_suffix(".codes")
        self.handle = _writer(path)
        self.rows = 0
        self.detail = detail
        self.content = False  # a detail column with nothing in it is left off the page
        # the item view's nested columns are embedded as lists, as from a whole table
        self.distinct = None if detail else Distinct(STREAM_DISTINCT)
        self.codes = None if detail else _writer(self.codes_path)

    def add(self, values: list[Any]) -> None:
        self.rows += len(values)
        if self.detail:
            self.content = self.content or has_content(values)
        elif self.codes is not None:
            codes = self.distinct.codes(values)
            if codes is None:  # too many distinct values: the column is embedded as a list
                self._drop_codes()
            else:
                self.codes.write(",".join(map(str, codes)) + "\n")
        self.handle.write(script_safe_json(values)[1:-1] + "\n")

    def _drop_codes(self) -> None:
        if self.codes is not None:
            self.codes.close()
            self.codes = None
        self.codes_path.unlink(missing_ok=True)

    @staticmethod
    def _joined(handle, path: Path, put: Callable[[str], Any]) -> None:
        """The non-empty lines of ``path``, comma-separated, handed to ``put`` one line at a time."""
        handle.close()
        first = True
        with open(path, encoding="utf-8", errors="surrogatepass", newline="\n") as lines:
            for line in lines:
                if line != "\n":
                    put(line[:-1] if first else "," + line[:-1])
                    first = False

    def emit(self, put: Callable[[str], Any]) -> None:
        """Hand the column's JSON to ``put``: compacted when its distinct values are few enough (as
        :func:`~evalkit.reporting.page.compact` decides, with at most :data:`STREAM_DISTINCT`), else a list."""
        if self.codes is not None and self.rows >= COMPACT_ROWS and len(self.distinct) <= self.rows // 4:
            form = script_safe_json(self.distinct.form(self.rows))
            if len(self.distinct) == 1:
                put(form)
                return
            put(form[:-1] + ',"i":[')
            self._joined(self.codes, self.codes_path, put)
            put("]}")
            return
        put("[")
        self._joined(self.handle, self.path, put)
        put("]")

    def close(self) -> None:
        self.handle.close()
        self.path.unlink(missing_ok=True)
        self._drop_codes()


class PageStream:
    """report.html from chunks of a scored table: ``add(chunk)`` per chunk, then ``write(...)`` once.

    ``folder`` takes the spool files (one per column and per evaluator; they are removed by ``close``, which
    ``write`` calls). ``template`` is an empty frame with the table's columns and ``attrs`` (evaluators).
    """

    def __init__(self, template: pd.DataFrame, folder: str | os.PathLike, text_limit: int = TEXT_LIMIT):
        self.folder = Path(folder)
        self.limit = text_limit
        self.evaluators = scored_evaluators(template)
        self.scores = [ScoreCounts(ev) for ev in self.evaluators]
        # per evaluator, its scores and their verdicts' codes (score_counts.verdict_codes), row for row
        self.score_files = [
            (self.folder / f"scores-{k}.f8", self.folder / f"verdicts-{k}.i1")
            for k in range(len(self.scores))
        ]
        self.columns: dict[str, _Spool] = {}
        self.rows = 0
        self.first: dict[str, list] = {}  # the first rows' table columns (page_first)
        self.tags: set[str] = set()

    def _spool(self, name: str, detail: bool) -> _Spool:
        spool = self.columns.get(name)
        if spool is None:
            spool = self.columns[name] = _Spool(self.folder / f"column-{len(self.columns)}.jsonl", detail)
        return spool

    def add(self, chunk: pd.DataFrame) -> None:
        """Append the chunk's page columns to their files and its scores to the charts' counts."""
        self.rows += len(chunk)
        extend_first(self.first, chunk, self.evaluators, self.limit)
        for name, values in page_columns(chunk, self.evaluators, self.limit):
            self._spool(name, False).add(values)
        for name, values in detail_values(chunk):
            self._spool(name, True).add(values)
            if name == "tags":
                self.tags.update(tag for row in values if row for tag in row)
        for counts, (scores, verdicts) in zip(self.scores, self.score_files, strict=True):
            values, codes = counts.add(chunk)
            with open(scores, "ab") as handle:
                values.astype(np.float64).tofile(handle)
            with open(verdicts, "ab") as handle:
                codes.astype(np.int8).tofile(handle)

    def figures(self, statuses: dict[str, int] | None, table: pd.DataFrame) -> list[Any]:
        """The page's charts: the scores are read back from their files and binned, a step at a time."""
        for counts, (scores, verdicts) in zip(self.scores, self.score_files, strict=True):
            counts.bin(np.array([], dtype=np.float64), np.array([], dtype=np.int8))
            if counts.kind != "bins" or not scores.exists():
                continue
            with open(scores, "rb") as values_in, open(verdicts, "rb") as codes_in:
                while len(values := np.fromfile(values_in, dtype=np.float64, count=SCORE_CHUNK)):
                    counts.bin(values, np.fromfile(codes_in, dtype=np.int8, count=SCORE_CHUNK))
        return figures_of(statuses, table, self.scores)

    def write(
        self,
        path: str | os.PathLike,
        template: pd.DataFrame,
        statuses: dict[str, int] | None,
        table: pd.DataFrame,
    ) -> None:
        """Write the page to ``path`` atomically: ``statuses`` are the row status counts (None: no status
        column), ``table`` the evaluator summary of every chunk (``evalkit.summary``'s table)."""
        try:
            if not self.columns:  # no chunk: the (empty) columns of the template
                self.add(template)
            head, tail = page_parts(
                template,
                rows=self.rows,
                counts=statuses,
                summary=summary_rows(table),
                figures=self.figures(statuses, table),
                text_limit=self.limit,
            )
            columns = [
                (name, spool.emit)
                for name, spool in self.columns.items()
                if not spool.detail or spool.content
            ]
            meta = page_meta(self.rows, self.evaluators, self.limit)
            with atomic_write(path, "wb") as handle:

                def put(text: str | bytes) -> None:
                    handle.write(
                        text if isinstance(text, bytes) else text.encode("utf-8", "backslashreplace")
                    )

                emit_data(put, head, tail, meta, columns, first_block(meta, self.first, self.tags))
        finally:
            self.close()

    def close(self) -> None:
        """Close and remove the spool files."""
        for spool in self.columns.values():
            spool.close()
        for paths in self.score_files:
            for path in paths:
                path.unlink(missing_ok=True)
        self.columns = {}
