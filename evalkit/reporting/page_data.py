"""The data report.html embeds: the scored case table as JSON-ready columns, texts cut, scores rounded.

A run can have 100,000 rows, so :mod:`evalkit.reporting.html_page` does not render the items as HTML: it embeds
them once, column-wise, and the page's script renders one page of rows at a time. This module turns the table
into those columns (:func:`page_columns`), one at a time so only one column's list is alive while it is
serialised. Long texts are cut to a limit (marked with :data:`ELLIPSIS`) so the file size stays bounded; the full
texts are in results.json / results.csv. Missing values (None, NaN, ``<NA>``) become ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.summaries import numeric_scores
from evalkit.documents.columns import score_column
from evalkit.reporting.page_samples import sample_column

#: Longest text (in characters) embedded per cell; longer ones are cut and end with :data:`ELLIPSIS`.
TEXT_LIMIT = 2000
ELLIPSIS = "\u2026"
#: Embedded float scores are rounded to this many decimals (display shows at most 3).
SCORE_DECIMALS = 4
#: Longest result / status value embedded (they are short words; anything longer is junk).
WORD_LIMIT = 40


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _text(value: Any, limit: int) -> str | None:
    """One cell as embedded text: missing → None, anything else → str, cut to ``limit`` characters."""
    if _is_missing(value):
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def _texts(df: pd.DataFrame, column: str, limit: int) -> list[str | None]:
    """A text column as a list for JSON (fast path for the common case: short ``str`` values)."""
    if column not in df.columns:
        return [None] * len(df)
    values = df[column].tolist()
    types = set(map(type, values))
    if types <= _STR_OR_NONE and max(map(len, filter(None, values)), default=0) <= limit:
        return values  # the common case, checked at C speed: short texts and None, nothing to change
    return [
        v if type(v) is str and len(v) <= limit else _text(v, limit)  # noqa: E721 (exact type is the fast path)
        for v in values
    ]


_STR_OR_NONE = frozenset({str, type(None)})


def _score(value: Any) -> Any:
    if _is_missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return round(float(value), SCORE_DECIMALS) if math.isfinite(value) else None
    return _text(value, WORD_LIMIT)


def _scores(df: pd.DataFrame, column: str) -> list[Any]:
    """A score (or threshold) column as JSON values: bools stay bools, ints ints, floats rounded, NaN → null."""
    if column not in df.columns:
        return [None] * len(df)
    series = df[column]
    if pd.api.types.is_bool_dtype(series.dtype) and not series.hasnans:
        return [bool(v) for v in series.tolist()]
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        values = numeric_scores(series)
        integral = pd.api.types.is_integer_dtype(series.dtype)
        cells = values.astype(object) if integral else np.round(values, SCORE_DECIMALS).astype(object)
        cells[~np.isfinite(values)] = None
        if integral:
            return [None if v is None else int(v) for v in cells.tolist()]
        return cells.tolist()
    values = series.tolist()
    if set(map(type, values)) <= _BOOL_OR_NONE:
        return values  # an object column of bools and None (a match evaluator's score): already JSON values
    return [_score(v) for v in values]


_BOOL_OR_NONE = frozenset({bool, type(None)})


def _row_errors(df: pd.DataFrame) -> list[str | None]:
    """``error_code: error_message`` per row (either part alone when the other is missing), or None."""
    codes = _texts(df, "error_code", WORD_LIMIT)
    messages = _texts(df, "error_message", TEXT_LIMIT)
    return [f"{c}: {m}" if c and m else (c or m or None) for c, m in zip(codes, messages, strict=True)]


def page_columns(
    df: pd.DataFrame, evaluators: list[dict[str, Any]], limit: int
) -> Iterator[tuple[str, list]]:
    """The embedded columns, one at a time, so only one column's list is alive while it is serialised.

    ``item``, ``turn``, ``thread``, ``status``, ``error``, ``prompt``, ``response``, ``expected``, then per
    evaluator ``k`` (in the order of ``evaluators``) ``ek.result``, ``ek.score``, ``ek.threshold`` (when it has
    one), ``ek.reason``, ``ek.error`` and, for a judge of a run with ``--samples``, ``ek.samples``
    (:mod:`evalkit.reporting.page_samples`). Prompts, responses, reasons and errors are cut to ``limit``.
    """
    n = len(df)
    if "item" in df.columns:
        yield "item", _scores(df, "item")
    else:
        yield "item", list(range(n))
    yield "turn", _scores(df, "turn")
    yield "thread", _texts(df, "thread", WORD_LIMIT * 5)
    yield "status", _texts(df, "status", WORD_LIMIT)
    yield "error", _row_errors(df)
    yield "prompt", _texts(df, "prompt", limit)
    yield "response", _texts(df, "response", limit)
    yield "expected", _texts(df, "expected_response", limit)
    for k, ev in enumerate(evaluators):
        key = ev["key"]
        yield f"e{k}.result", _texts(df, f"{key}_result", WORD_LIMIT)
        yield f"e{k}.score", _scores(df, score_column(key))
        if ev.get("has_threshold") and f"{key}_threshold" in df.columns:
            yield f"e{k}.threshold", _scores(df, f"{key}_threshold")
        yield f"e{k}.reason", _texts(df, f"{key}_reason", limit)
        yield f"e{k}.error", _texts(df, f"{key}_error", limit)
        sampled = sample_column(df, key)  # --samples K: pass shares, flips (reporting.page_samples)
        if sampled is not None:
            yield f"e{k}.samples", sampled
