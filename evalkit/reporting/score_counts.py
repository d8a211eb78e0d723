"""What a score-distribution chart needs, added up chunk by chunk: the counts behind
:func:`evalkit.reporting.charts.score_distribution`.

The chart never shows single scores, only counts: false / true for boolean scores, 1-5 for judges, otherwise
:data:`SCORE_BINS` equal bins from the smallest to the largest score. Each count is split by the row's own
verdict (:data:`VERDICTS`: its ``<key>_result``, the value the row statuses and the summary count), so a bar
is coloured by whether its scores passed or failed, whatever the threshold or its direction, also when the
threshold differs between rows or a bin straddles it (that bar is part pass, part fail). All of these add up
over chunks of a table, so a run whose rows are streamed (``evalkit run --engine spark``) draws the same chart
as the pandas engine without holding the scores: :meth:`ScoreCounts.add` folds each chunk and returns its
finite scores with their verdicts, and once every chunk is in (the range is known) :meth:`ScoreCounts.bin`
bins them, again chunk by chunk. The pandas path calls both on the whole table.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.summaries import numeric_scores
from evalkit.documents.columns import score_column

#: Bins of a continuous score distribution.
SCORE_BINS = 20
#: The verdicts a chart's counts are split by: a row's ``<key>_result`` "pass", "fail", or anything else
#: (an error, or no verdict) with a score nonetheless; their codes are the indexes.
VERDICTS = ("pass", "fail", "error")
_VERDICT_CODES = {"pass": 0, "fail": 1}


def score_bins(values: np.ndarray, bins: int = SCORE_BINS) -> tuple[list[float], list[int], float]:
    """Centres, counts and the width of ``bins`` equal bins over the finite ``values`` (one bin if all equal)."""
    counts = ScoreCounts({"key": "_"}, bins)
    verdicts = np.zeros(len(values), dtype=np.int8)
    counts.fold(values, verdicts)
    counts.bin(values, verdicts)
    return (
        counts.centers(),
        [] if counts.binned is None else counts.binned.sum(axis=0).tolist(),
        counts.width(),
    )


def verdict_codes(results: np.ndarray) -> np.ndarray:
    """The index in :data:`VERDICTS` of each result: 0 pass, 1 fail, 2 anything else (a dict lookup mapped
    in C, as ``documents.statuses`` reads results)."""
    values = results.tolist()
    try:
        return np.fromiter(map(_VERDICT_CODES.get, values, repeat(2)), dtype=np.int8, count=len(values))
    except TypeError:  # an unhashable result (a custom evaluator's list, say): no verdict
        return np.array([_VERDICT_CODES.get(v, 2) if type(v) is str else 2 for v in values], dtype=np.int8)


class ScoreCounts:
    """The score counts of one evaluator (``ev``: an entry of ``scored_evaluators``) over chunks of a table."""

    def __init__(self, ev: dict[str, Any], bins: int = SCORE_BINS):
        self.ev = ev
        self.key = str(ev["key"])
        self.bins = bins
        self.n = 0  # finite scores of rows that asked
        self.present = 0  # non-missing values in the score column (any row)
        self.all_bool = True
        self.whole = True
        self.low = np.inf
        self.high = -np.inf
        self.above_one = False
        # rows scoring 0, 1, ..., 5, per verdict (a line per VERDICTS)
        self.levels = np.zeros((len(VERDICTS), 6), dtype=np.int64)
        self.binned: np.ndarray | None = None  # per verdict, per bin

    def add(self, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Fold the rows of ``df`` in; returns their finite scores (those of rows that asked) and the codes of
        their verdicts (:func:`verdict_codes`), for :meth:`bin`."""
        column = score_column(self.key)
        raw = df[column] if column in df.columns else pd.Series([], dtype=float)
        values = numeric_scores(raw)
        result = f"{self.key}_result"
        if result in df.columns and len(values):
            results = df[result].to_numpy(dtype=object)
            asked = pd.notna(results)
            values, verdicts = values[asked], verdict_codes(results[asked])
        else:
            verdicts = np.full(len(values), 2, dtype=np.int8)
        finite = np.isfinite(values)
        values, verdicts = values[finite], verdicts[finite]
        present = raw.dropna()
        self.present += len(present)
        if len(present) and self.all_bool:
            self.all_bool = pd.api.types.is_bool_dtype(present.dtype) or all(
                isinstance(v, (bool, np.bool_)) for v in present.tolist()
            )
        self.fold(values, verdicts)
        return values, verdicts

    def fold(self, values: np.ndarray, verdicts: np.ndarray) -> None:
        """Fold finite scores and their verdicts' codes in (what :meth:`add` does once it has picked them)."""
        if not len(values):
            return
        self.n += len(values)
        self.whole = self.whole and bool(np.all(values == np.round(values)))
        self.low = min(self.low, float(values.min()))
        self.high = max(self.high, float(values.max()))
        self.above_one = self.above_one or bool((values > 1).any())
        for verdict in range(len(VERDICTS)):
            mine = values[verdicts == verdict]
            for level in range(6):
                self.levels[verdict, level] += int((mine == level).sum())

    def bin(self, values: np.ndarray, verdicts: np.ndarray) -> None:
        """Add finite scores and their verdicts' codes (returned by :meth:`add`) to the equal bins; call after
        every chunk is added."""
        if self.binned is None:
            self.binned = np.zeros((len(VERDICTS), 1 if self.single else self.bins), dtype=np.int64)
        if not len(values):
            return
        for verdict in range(len(VERDICTS)):
            mine = values[verdicts == verdict]
            if self.single:
                self.binned[verdict, 0] += len(mine)
            elif len(mine):
                self.binned[verdict] += np.histogram(mine, bins=self.bins, range=(self.low, self.high))[0]

    @property
    def kind(self) -> str:
        """``bool`` (false / true bars), ``judge`` (1-5 bars) or ``bins`` (equal bins, see :meth:`bin`)."""
        if self.present and self.all_bool:
            return "bool"
        judge = self.ev.get("is_llm") is True or (
            self.n > 0 and self.whole and self.low >= 1 and self.high <= 5 and self.above_one
        )
        return "judge" if judge else "bins"

    @property
    def single(self) -> bool:
        """Every score is the same: one bin."""
        return self.n > 0 and self.low == self.high

    def _edges(self) -> np.ndarray:
        # the edges numpy.histogram uses for equal bins over (low, high)
        return np.linspace(self.low, self.high, self.bins + 1)

    def width(self) -> float:
        """The width of a bin (1 when there is one bin or none)."""
        if not self.n or self.single:
            return 1.0
        edges = self._edges()
        return float(edges[1] - edges[0])

    def centers(self) -> list[float]:
        """The centres of the bins (the one score when all are equal; none without scores)."""
        if not self.n:
            return []
        if self.single:
            return [self.low]
        edges = self._edges()
        return [round(float(c), 6) for c in (edges[:-1] + edges[1:]) / 2]
