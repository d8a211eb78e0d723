"""The one internal protocol of evaluators: score a slice of the case table, column-wise.

An evaluator's *configuration* is plain data (the options dict the document gives for each row); the engine
hands every evaluator the rows that ask for it, in one call, together with those per-row configurations.

Example::

    class Shouting:
        name = key = "shouting"
        score_field = "shouting"
        has_threshold = True
        requires = ()
        is_llm = False

        def score(self, rows, configs):
            loud = rows["response"].str.isupper()
            return result_frame(rows.index, score=loud.astype(float), threshold=1.0,
                                reason=loud.map({True: "all caps", False: "calm"}))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from evalkit.documents.columns import INPUT_COLUMNS, score_column

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "INPUT_COLUMNS",
    "score_column",
    "CONFIG_ERROR",
    "OptionError",
    "RESULT_COLUMNS",
    "Evaluator",
    "result_frame",
    "verdict_frame",
    "error_frame",
]

#: Error code of a row whose evaluator options are unusable (wrong type, missing, out of range).
CONFIG_ERROR = "evaluatorConfigurationError"


class OptionError(ValueError):
    """A row's evaluator options are unusable; the message names the option. Becomes an error result."""


#: Columns of the frame that ``Evaluator.score`` returns, one row per scored case-table row.
RESULT_COLUMNS = ("score", "result", "threshold", "reason", "error", "code", "details")


class Evaluator(Protocol):
    """Scores the rows of the case table that ask for it, in one call."""

    name: str  # as the document writes it: "ExactMatch", "forbidden_terms"
    key: str  # output key in scores and the column prefix: "exactMatch", "forbidden_terms"
    score_field: str  # field of the results.json entry holding the score: "score", "match", "count", name
    has_threshold: bool  # whether the results.json entry carries "threshold"
    requires: tuple[str, ...]  # case-table columns that must be non-empty for a row to be scored
    is_llm: bool  # needs a judge model

    def score(self, rows: pd.DataFrame, configs: list[dict[str, Any]]) -> pd.DataFrame:
        """Return a frame indexed like ``rows`` with the columns of ``RESULT_COLUMNS``.

        ``configs[i]`` is the options dict that the document gives this evaluator for ``rows.iloc[i]``.
        ``result`` is "pass", "fail" or "error"; on "error", ``error`` holds the message (without the
        "Evaluator failed: " prefix, which the results writer adds) and ``code`` the upstream error code.
        ``details`` is a dict of extra fields merged into the results.json entry (or None).
        """
        ...


def result_frame(index, **columns) -> pd.DataFrame:
    """Build a result frame with every ``RESULT_COLUMNS`` column present (missing ones filled empty)."""
    import numpy as np
    import pandas as pd

    n = len(index)
    data = {}
    for col in RESULT_COLUMNS:
        value = columns.get(col)
        if value is None:
            value = np.nan if col in ("score", "threshold") else None
        if isinstance(value, pd.Series):
            value = value.to_numpy() if len(value) == n else value.reindex(index).to_numpy()
        elif np.isscalar(value) or value is None or isinstance(value, dict):
            value = [value] * n
        data[col] = value
    # copy=False: the frame holds the evaluator's arrays as they are (one block each), where the default copy
    # consolidated the object columns into a new block: ~80 ms and a transient copy per evaluator at 100,000
    # rows, for a frame the engine only reads (issue 20).
    return pd.DataFrame(data, index=index, copy=False)


def verdict_frame(index, scores, thresholds, reasons, errors, codes) -> pd.DataFrame:
    """The result frame of a scored-against-threshold evaluator: pass when score >= threshold, and error
    wherever an error message was recorded (that row's score is not read)."""
    import numpy as np

    result = np.where(np.asarray(scores) >= np.asarray(thresholds), "pass", "fail").astype(object)
    result[np.array([e is not None for e in errors], dtype=bool)] = "error"
    return result_frame(
        index, score=scores, result=result, threshold=thresholds, reason=reasons, error=errors, code=codes
    )


def error_frame(index, message: str, code: str = "evaluatorError") -> pd.DataFrame:
    """A result frame in which every row is the same error."""
    return result_frame(index, result="error", error=message, code=code)
