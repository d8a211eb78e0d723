"""The rows of a run as the evaluators see them, and one evaluator scored over a set of them.

``CaseRows`` holds the input columns (views of the table's, never copies) and the rows' evaluator maps grouped
by identity; ``CaseRows.part`` is the same for a contiguous range of rows, which is what a forked scorer
(``forked_parts``) works on. ``score_one`` runs one evaluator over the rows of a mask and returns its result
frames, turning a missing input or a crash into error results for those rows only.

May import: evalkit.documents, evalkit.evaluators.base.
"""

from __future__ import annotations

import logging
from itertools import repeat

import numpy as np
import pandas as pd

from evalkit.documents.case_table import CASE_COLUMNS
from evalkit.documents.redaction import redact
from evalkit.evaluators.base import error_frame

log = logging.getLogger("evalkit.engine")

#: The case-table columns evaluators read; the rest (sources, earlier results) is never copied for them.
INPUT_COLUMNS = tuple(c for c in CASE_COLUMNS if c not in ("evaluators", "source", "thread_source"))


class CaseRows:
    """What the run knows about the rows: their inputs and their evaluator maps, grouped by identity.

    Rows without their own evaluator map share one dict object, so "which rows ask for X" and "with which
    options" are answered once per distinct map rather than once per row.
    """

    def __init__(self, table: pd.DataFrame):
        # The input columns as they are in the table (``table[columns]`` would copy them: 8 MB at 100,000
        # rows). Evaluators only read them.
        self.inputs = pd.DataFrame({c: table[c] for c in INPUT_COLUMNS if c in table.columns}, copy=False)
        self.inputs.attrs = dict(table.attrs)  # the document's name, for evaluators' messages
        maps = table["evaluators"].tolist()
        self.codes = pd.factorize(np.fromiter(map(id, maps), dtype=np.int64, count=len(maps)))[0]
        #: the first row of each distinct map, by code (codes number the maps in order of first appearance)
        self.first = np.unique(self.codes, return_index=True)[1].tolist()
        self.maps = [maps[position] for position in self.first]
        self.has_response = is_text(table["response"].tolist())
        self._filled: dict[str, np.ndarray] = {}

    def part(self, start: int, stop: int) -> CaseRows:
        """The rows ``start:stop`` (positions): their inputs are a slice of these (a view, no cell is copied or
        touched), their masks the matching slices; ``filled`` is computed for the part's rows alone."""
        part = object.__new__(CaseRows)
        part.inputs = self.inputs.iloc[start:stop]
        part.inputs.attrs = self.inputs.attrs
        part.codes = self.codes[start:stop]
        part.first, part.maps = self.first, self.maps  # codes still number the same maps
        part.has_response = self.has_response[start:stop]
        part._filled = {column: filled[start:stop] for column, filled in self._filled.items()}
        return part

    def asking(self, name: str, *, everywhere: bool = False) -> np.ndarray:
        """Rows that ask for evaluator ``name`` and have a response to score."""
        if everywhere:
            return self.has_response.copy()
        asks = np.array([name in m for m in self.maps], dtype=bool)
        return asks[self.codes] & self.has_response

    def configs(self, name: str, mask: np.ndarray) -> list[dict]:
        """The options each selected row gives evaluator ``name``."""
        per_map = [m.get(name) or {} for m in self.maps]
        return [per_map[code] for code in self.codes[mask].tolist()]

    def filled(self, column: str) -> np.ndarray:
        """Whether each row has a non-blank value in text column ``column`` (cached per run)."""
        if column not in self._filled:
            values = self.inputs[column].tolist()
            n = len(values)
            if is_text(values).all():  # builtins mapped over the column: no Python-level call per row
                blank = np.fromiter(map(str.isspace, values), dtype=bool, count=n)
                filled = ~blank & (np.fromiter(map(len, values), dtype=np.int64, count=n) > 0)
            else:
                filled = np.array(
                    [isinstance(v, str) and not v.isspace() and v != "" for v in values], dtype=bool
                )
            self._filled[column] = filled
        return self._filled[column]

    def select(self, mask: np.ndarray) -> pd.DataFrame:
        return self.inputs if mask.all() else self.inputs.loc[mask]


def is_text(values: list) -> np.ndarray:
    """Whether each value is a str (``isinstance`` mapped over the list: no Python-level call per value)."""
    return np.fromiter(map(isinstance, values, repeat(str)), dtype=bool, count=len(values))


def score_one(evaluator, rows: CaseRows, mask: np.ndarray, *, adhoc: bool) -> list[pd.DataFrame]:
    """The evaluator's result frames for the rows in ``mask`` (rows missing a required field first)."""
    ready = mask.copy()
    parts = []
    for column in evaluator.requires:
        missing = ready & ~rows.filled(column)
        if missing.any():
            parts.append(
                error_frame(
                    rows.inputs.index[missing],
                    f"{evaluator.name} needs '{column}', which this item does not have: add "
                    f"'{column}' to the item, or remove {evaluator.name} from its evaluators.",
                    code="evaluatorConfigurationError",
                )
            )
            ready &= ~missing
    if ready.any():
        subset = rows.select(ready)
        configs = [{}] * len(subset) if adhoc else rows.configs(evaluator.name, ready)
        try:
            parts.append(evaluator.score(subset, configs))
        except Exception as exc:  # noqa: BLE001 - one evaluator's crash must not lose the others' results
            log.debug("evaluator %s crashed", evaluator.name, exc_info=True)
            message = redact(f"{type(exc).__name__}: {exc}")
            parts.append(error_frame(subset.index, message, code="evaluatorError"))
    return parts
