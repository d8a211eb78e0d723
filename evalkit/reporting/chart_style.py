"""How evalkit's plotly figures look, in one place: the status colours, the bar labels, the title and margins,
a y axis that counts rows, and :func:`plain` for run text (``charts``, ``agreement_charts``, ``chart_specs`` and
``trend`` draw with these).

Imports plotly only inside :func:`_go`: ``import evalkit`` must stay fast. May import pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

#: Colours of the statuses, as in report.html.
STATUS_COLORS = {"pass": "#1a7f37", "fail": "#cf222e", "partial": "#bc4c00", "error": "#d4a000"}
UP, DOWN, FLAT = "#1a7f37", "#cf222e", "#8c959f"
#: The labels above bars (pass rates, status counts): one size on every bar, shrunk to fit the bars no smaller
#: than 10 px (plotly shrank a label with no room left above the axis, the 100% ones, to a tiny font); with
#: ``cliponaxis=False`` on the bars, a label above the highest bar is drawn whole.
BAR_TEXT = {"minsize": 10, "mode": "show"}
#: Longest run text shown in a hover label.
HOVER_LIMIT = 200


def plain(value: Any, limit: int | None = None) -> str:
    """``value`` as text that plotly shows literally: ``&``, ``<`` and ``>`` become entities plotly decodes.

    Plotly interprets ``<b>``, ``<br>``, ``<a href>`` and friends in titles, tick labels and hover text; the
    entities ``&amp;``, ``&lt;``, ``&gt;`` are shown as the characters themselves, so the label reads exactly
    like the run's text and never becomes markup. ``limit`` cuts long texts (marked with "…").
    """
    text = "" if value is None or value is pd.NA else str(value)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "\u2026"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _go():
    import plotly.graph_objects as go

    return go


def _layout(figure, title: str, subtitle: str = "", **extra) -> None:
    """Title (short, so it fits a 360 px card), optional subtitle (what the error bars are), white template."""
    heading = {"text": title, **({"subtitle": {"text": subtitle}} if subtitle else {})}
    top = 80 if subtitle else 60
    figure.update_layout(
        title=heading, template="plotly_white", margin={"l": 60, "r": 30, "t": top, "b": 60}, **extra
    )


def _rows_axis(counts: Sequence[Any]) -> dict:
    """A y axis that counts rows: whole numbers only (plotly would tick 0.2 rows when the counts are small)."""
    top = max((c for c in counts if c is not None), default=0)
    return {
        "title": {"text": "rows"},
        "tickformat": ",d",
        "rangemode": "tozero",
        **({"dtick": 1} if top <= 8 else {}),
    }
