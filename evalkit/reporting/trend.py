"""The trend of pass rates across runs (:func:`evalkit.runs`), for the report page's ``--history``.

Only runs of the same document as the newest run (the one the page is about) are drawn: a pass rate of another
document's rows is not a point of this trend. The chart's subtitle says how many runs of other documents were
left out, so a folder shared by several documents is never plotted together without a word.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from evalkit.analysis.formatting import count
from evalkit.reporting.charts import STATUS_COLORS, plain

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

__all__ = ["pass_rate_trend", "same_document"]

#: Legend entries per row below the plot (a chart card is about 400 px wide), and the height of one row.
LEGEND_COLUMNS, LEGEND_ROW = 3, 22


def same_document(history: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs of the newest run's document (by name: an edited document keeps its trend), and the others."""
    if not len(history):
        return history, history
    names = history["document"].astype("string").fillna("")
    mine = (names == names.iloc[-1]).to_numpy()
    return history[mine].reset_index(drop=True), history[~mine].reset_index(drop=True)


def pass_rate_trend(history: pd.DataFrame) -> go.Figure:
    """One line per evaluator (and a bold one for the row status): pass rate per run, oldest run first, for
    the runs of the newest run's document (:func:`same_document`).

    Runs are evenly spaced and labelled by folder (hover: time, document, sha256 prefix, rows); a run that did not
    score an evaluator leaves a gap in that line. The legend sits below the plot, the figure as tall as it needs.
    """
    import plotly.graph_objects as go

    history, others = same_document(history)
    labels = [plain(r, 60) for r in history["run"]]
    details = [
        f"{'' if pd.isna(t) else t.strftime('%Y-%m-%d %H:%M')} \u00b7 {plain(d or 'unnamed', 80)}"
        f" \u00b7 sha256 {str(s or '')[:12] or 'n/a'} \u00b7 {int(n):,} rows"
        for t, d, s, n in zip(
            history["time"], history["document"], history["document_sha256"], history["rows"]
        )
    ]
    figure = go.Figure()
    columns = [("pass_rate", "row status")] + [
        (c, c.split(":", 1)[1])
        for c in history.columns
        if c.startswith("pass_rate:") and history[c].notna().any()
    ]
    for column, name in columns:
        status = column == "pass_rate"
        values = [None if pd.isna(v) else float(v) for v in history[column]]
        figure.add_trace(
            go.Scatter(
                x=labels,
                y=values,
                name=plain(name, 60),
                mode="lines+markers",
                line={"width": 4 if status else 1.5, **({"color": STATUS_COLORS["pass"]} if status else {})},
                customdata=details,
                hovertemplate="%{x}: %{y:.1%}<br>%{customdata}<extra>" + plain(name, 60) + "</extra>",
            )
        )
    legend_rows = math.ceil(len(columns) / LEGEND_COLUMNS)
    figure.update_layout(
        title={
            "text": f"Pass rates across {count(len(history), 'run')}",
            "subtitle": {"text": _note(history, others)},
        },
        template="plotly_white",
        height=350 + LEGEND_ROW * legend_rows,
        margin={"l": 60, "r": 30, "t": 100, "b": 40},
        yaxis={"range": [0, 1.05], "tickformat": ".0%"},
        xaxis={"type": "category"},
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": -0.15, "yanchor": "top"},
    )
    return figure


def _note(history: pd.DataFrame, others: pd.DataFrame) -> str:
    """The subtitle: which document, and how many runs of other documents were left out."""
    name = plain(str(history["document"].iloc[-1] or "unnamed"), 40) if len(history) else "no document"
    if not len(others):
        return f"of {name}"
    documents = others["document"].astype("string").fillna("").nunique()
    where = "another document" if documents == 1 else f"{documents} other documents"
    return f"of {name}<br>{count(len(others), 'run')} of {where} left out"  # plain() escaped the name
