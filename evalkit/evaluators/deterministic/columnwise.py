"""Reading and writing columns of the string evaluators without a Python object per row where avoidable.

The text columns as lists of str, the rows a setting selects, "pass" / "fail" verdicts shared between rows,
a pause of the garbage collector while per-row containers are built, and the result frame in which rows
with unusable options (from ``options.parse_groups``) become configuration errors.
"""

from __future__ import annotations

import contextlib
import gc

import numpy as np
import pandas as pd

from evalkit.evaluators.base import CONFIG_ERROR, result_frame


def text_column(rows: pd.DataFrame, column: str) -> list[str]:
    """The column as a list of str: missing column, None and NaN read as ""; other values via ``str``."""
    if column not in rows.columns:
        return [""] * len(rows)
    column_values = rows[column]
    values = column_values.tolist()
    if pd.api.types.infer_dtype(column_values, skipna=False) == "string":
        return values
    return [
        v if isinstance(v, str) else "" if v is None or (isinstance(v, float) and v != v) else str(v)
        for v in values
    ]


_FAIL_PASS = np.array(["fail", "pass"], dtype=object)


def verdicts(passed: np.ndarray) -> np.ndarray:
    """ "pass" / "fail" per row, as an object array sharing two str objects (no per-row allocation)."""
    return _FAIL_PASS[passed.view(np.uint8)]


def take(values: list, picked: list[int]) -> list:
    """``values`` at the positions ``picked`` (sorted); the list itself when that is every position."""
    return values if len(picked) == len(values) else [values[i] for i in picked]


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building one container per row.

    Creating 100,000 small dicts/lists makes the collector rescan every live container (the case table's
    citation lists among them) again and again: 8x slower than the allocations themselves. Nothing built
    here holds a cycle, so the pause frees nothing late. Re-enabled only if it was enabled.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def scored_frame(
    rows: pd.DataFrame, score: np.ndarray, threshold: np.ndarray | None, result, reason, details, errors
):
    """The result frame; rows of ``errors`` (``[(message, positions)]``) become configuration errors.

    ``score`` / ``threshold`` keep their natural dtype (bool, int, float) when no row errored; otherwise
    non-float columns become object columns holding NaN in the error rows.
    """
    n = len(rows)
    error = np.full(n, None, dtype=object)
    code = np.full(n, None, dtype=object)
    if errors:
        failed = np.concatenate([positions for _, positions in errors])
        if score.dtype.kind != "f":
            score = score.astype(object)
        score[failed] = np.nan
        if threshold is not None:
            if threshold.dtype.kind != "f":
                threshold = threshold.astype(object)
            threshold[failed] = np.nan
        result[failed] = "error"
        reason[failed] = None
        details[failed] = None
        code[failed] = CONFIG_ERROR
        for message, positions in errors:
            error[positions] = message
    return result_frame(
        rows.index,
        score=score,
        threshold=threshold,
        result=result,
        reason=reason,
        error=error,
        code=code,
        details=details,
    )
