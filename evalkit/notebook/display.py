"""Result tables that read at a glance in a notebook: coloured outcomes, short and escaped texts.

``styled(df)`` returns a pandas ``Styler``; it is pure pandas (plus jinja2, which Styler needs), so it works
the same in Jupyter, in papermill and in a plain script (``styled(df).to_html()``). Texts in a case table
are untrusted (agent answers, judge reasons, document fields): every cell, index label and column name is
HTML-escaped, so a ``<script>`` in a response is shown, never run.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from evalkit.analysis.formatting import percent

#: CSS per outcome, for ``status`` and ``*_result`` columns.
OUTCOME_CSS = {
    "pass": "background-color: #d3f2dc; color: #0b5d1e",
    "fail": "background-color: #f8d7da; color: #842029",
    "error": "background-color: #fff0b3; color: #664d03",
    "partial": "background-color: #ffdcb8; color: #7a3a00",
}

#: Characters a text cell shows before it is cut with an ellipsis.
MAX_CHARS = 120


def styled(df: pd.DataFrame, *, max_chars: int = MAX_CHARS, precision: int = 2) -> pd.io.formats.style.Styler:
    """A Styler for a result table: outcomes coloured, texts truncated to ``max_chars`` and escaped.

    ``status`` and every ``*_result`` column are coloured: pass green, fail red, error amber, partial
    orange. Text cells (strings, and lists or dicts such as citations, shown as text) are cut to
    ``max_chars`` characters with an ellipsis, then HTML-escaped (cut first, so an entity is never split).
    Numbers show ``precision`` decimals, or none in columns of whole numbers (1-5 scores); rates
    (``pass_rate``, ``*_rate``) show as percentages with one decimal; missing values show as empty cells.
    """
    table = df
    if not (table.index.is_unique and table.columns.is_unique):
        # Styler.map refuses non-unique labels; a positional index keeps the table displayable.
        table = table.reset_index(drop=True)
        table.columns = _unique(table.columns)
    styler = table.style
    rates = [c for c in table.columns if _is_rate_column(c) and _is_numeric(table[c])]
    if rates:  # a share 0-1 reads as the CLI and the pages print it: 81.8%
        styler = styler.format(lambda v: percent(v, missing=""), subset=rates)
    numeric = [c for c in table.columns if _is_numeric(table[c]) and c not in rates]
    text = [c for c in table.columns if c not in numeric and c not in rates]
    if text:
        styler = styler.format(_cell_formatter(max_chars), subset=text)
        styler = styler.set_properties(subset=text, **{"text-align": "left", "white-space": "pre-wrap"})
    whole = [c for c in numeric if _is_whole(table[c])]  # 1-5 judge scores read better as 4 than 4.00
    if whole:
        styler = styler.format(precision=0, na_rep="", subset=whole)
    if len(whole) < len(numeric):
        styler = styler.format(precision=precision, na_rep="", subset=[c for c in numeric if c not in whole])
    styler = styler.format_index(_label_formatter(max_chars), axis=0)
    styler = styler.format_index(_label_formatter(max_chars), axis=1)
    outcomes = [c for c in table.columns if _is_outcome_column(c)]
    if outcomes:
        styler = styler.map(_outcome_css, subset=outcomes)
    return styler.set_table_styles(_layout_styles(table, text, max_chars), overwrite=False)


#: A text column whose longest cell is longer than this gets room to read (``min-width``) instead of the few
#: words' width a table squeezed into a notebook gives it.
LONG_TEXT = 40


def _layout_styles(table: pd.DataFrame, text: list, max_chars: int) -> list[dict]:
    """Table-level CSS (scoped by the Styler's table id, so it outranks JupyterLab's output CSS): automatic
    layout, not JupyterLab's fixed equal columns; ordinary line height, not an HTML widget's 28 px; long text
    columns at least 14em wide."""
    styles = [
        {
            "selector": "",
            "props": "table-layout: auto; margin-left: 0; margin-right: 0; border-collapse: collapse",
        },
        {"selector": "td, th", "props": "vertical-align: top; line-height: 1.35; padding: .25em .5em"},
        {"selector": "thead th", "props": "text-align: left"},
    ]
    for position, column in enumerate(table.columns):
        if column in text and _longest(table[column], max_chars) > LONG_TEXT:
            styles.append({"selector": f"td.col{position}", "props": "min-width: 14em; max-width: 40em"})
    return styles


def _longest(series: pd.Series, max_chars: int) -> int:
    """The length of the longest cell of ``series`` as shown (cut to ``max_chars``)."""
    head = series.head(200)
    return max((len(truncate(v, max_chars)) for v in head), default=0)


def truncate(value: Any, max_chars: int = MAX_CHARS) -> str:
    """``value`` as text, cut to ``max_chars`` characters (the last one an ellipsis) when longer."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    text = value if isinstance(value, str) else str(value)
    if max_chars and len(text) > max_chars:
        return text[: max(max_chars - 1, 0)] + "\u2026"
    return text


def escape(value: Any, max_chars: int = MAX_CHARS) -> str:
    """``value`` truncated, then HTML-escaped (quotes included): safe inside a table cell or attribute."""
    return html.escape(truncate(value, max_chars), quote=True)


def _cell_formatter(max_chars: int) -> Callable[[Any], str]:
    def cell(value: Any) -> str:
        return escape(value, max_chars)

    return cell


def _label_formatter(max_chars: int) -> Callable[[Any], str]:
    def label(value: Any) -> str:
        return escape(value, max_chars)

    return label


def _outcome_css(value: Any) -> str:
    return OUTCOME_CSS.get(value, "") if isinstance(value, str) else ""


def _is_outcome_column(column: Any) -> bool:
    return isinstance(column, str) and (column == "status" or column.endswith("_result"))


def _is_rate_column(column: Any) -> bool:
    return isinstance(column, str) and (column == "rate" or column.endswith("_rate"))


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _is_whole(series: pd.Series) -> bool:
    """A numeric column whose values are all whole numbers (or missing)."""
    values = pd.to_numeric(series, errors="coerce").dropna()
    return bool(len(values)) and bool(((values % 1) == 0).all())


def _unique(columns: pd.Index) -> list:
    seen: dict[Any, int] = {}
    out = []
    for column in columns:
        count = seen.get(column, 0)
        seen[column] = count + 1
        out.append(column if count == 0 else f"{column}.{count}")
    return out
