"""The report's Summary and Charts sections: the per-evaluator table and the figures drawn over the whole run.

:func:`summary_html` is :func:`evalkit.summary` as an HTML table. The figures are plotly figures built from
:mod:`evalkit.reporting.charts` (the notebook shows the charts that need nothing more directly): every score
distribution in one grid, and the thread turns of the first :data:`THREAD_LIMIT` threads.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalkit.analysis.formatting import count
from evalkit.analysis.summaries import STATUS_ROW, scored_evaluators, summary
from evalkit.reporting.fragments import render
from evalkit.reporting.notebook_report.formatting import DASH

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

#: Most threads drawn in the thread-turns chart (one heatmap line each).
THREAD_LIMIT = 50


def summary_html(run: pd.DataFrame) -> str:
    """The per-evaluator summary of :func:`evalkit.summary` as an HTML table (``section_summary.html.j2``),
    with token columns if judged."""
    table = summary(run)
    tokens = "prompt_tokens" in table.columns
    heads = ["evaluator", "asked", "passed", "failed", "errored", "partial", "pass rate", "mean score"]
    if tokens:
        heads += ["prompt tokens", "completion tokens"]
    rows = []
    for name, row in table.iterrows():
        mean = float(row["mean_score"])
        rows.append(
            {
                "name": "row status" if name == STATUS_ROW else str(name),
                "is_status": name == STATUS_ROW,
                "counts": [int(row[c]) for c in ("asked", "passed", "failed", "errored", "partial")],
                "rate": float(row["pass_rate"]),
                "mean": DASH if math.isnan(mean) else f"{mean:.3f}",
                "tokens": [int(row[c]) for c in ("prompt_tokens", "completion_tokens")] if tokens else [],
            }
        )
    return str(render("section_summary.html.j2", heads=heads, rows=rows))


#: Height of one row of the score-distribution grid (its plot, tick labels and the subplot title), and the
#: gap between two rows, in pixels: the gap holds the x tick labels and the next subplot's title, no more.
GRID_ROW, GRID_GAP = 260, 70


def score_distributions(run: pd.DataFrame, columns: int = 2) -> go.Figure | None:
    """Every evaluator's score distribution (:func:`evalkit.reporting.charts.score_distribution`) in one grid figure.

    None when nothing is scored. Subplot titles are the charts' own titles (names already made plain); each
    subplot keeps its chart's axes (whole row counts, categories) and stacked pass / fail bars, with one
    legend for the grid.
    """
    from plotly.subplots import make_subplots

    from evalkit.reporting.charts import SCORE_LEGEND, score_distribution

    keys = [ev["key"] for ev in scored_evaluators(run) if f"{ev['key']}_result" in run.columns]
    if not keys:
        return None
    figures = [score_distribution(run, key) for key in keys]
    columns = max(1, min(columns, len(figures)))
    rows = math.ceil(len(figures) / columns)
    top, bottom = 110, 50
    height = max(340, GRID_ROW * rows + top + bottom)
    grid = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=[f.layout.title.text for f in figures],
        vertical_spacing=GRID_GAP / (height - top - bottom) if rows > 1 else 0.0,
        horizontal_spacing=0.08,
    )
    shown: set[str] = set()
    for index, figure in enumerate(figures):
        row, col = divmod(index, columns)
        for trace in figure.data:
            trace.update(legendgroup=trace.name, showlegend=trace.name not in shown)
            shown.add(trace.name)
            grid.add_trace(trace, row=row + 1, col=col + 1)
        grid.update_xaxes(type=figure.layout.xaxis.type, row=row + 1, col=col + 1)
        axis = figure.layout.yaxis  # whole row counts: plotly would tick 0.5 rows
        grid.update_yaxes(
            tickformat=axis.tickformat, dtick=axis.dtick, rangemode=axis.rangemode, row=row + 1, col=col + 1
        )
    grid.update_layout(
        title={"text": "Score distributions (rows that asked for each evaluator)"},
        template="plotly_white",
        legend={**SCORE_LEGEND, "y": 1 + 40 / (height - top - bottom)},
        bargap=0.1,
        barmode="stack",
        height=height,
        margin={"l": 60, "r": 30, "t": top, "b": bottom},
    )
    return grid


def thread_turns(run: pd.DataFrame, limit: int = THREAD_LIMIT) -> go.Figure | None:
    """:func:`evalkit.reporting.charts.thread_turns` for the first ``limit`` threads; None when the run has no threads."""
    from evalkit.reporting.charts import thread_turns as chart

    if "turn" not in run.columns:
        return None
    threaded = ~np.asarray(pd.array(run["turn"], dtype="Int64").isna(), dtype=bool)
    if not threaded.any():
        return None
    if "item" not in run.columns:
        return chart(run)
    order = pd.unique(run.loc[threaded, "item"].to_numpy())
    shown = order[:limit]
    figure = chart(run[threaded & run["item"].isin(shown).to_numpy()] if len(order) > limit else run)
    if len(order) > limit:
        figure.update_layout(
            title={"text": f"Thread turns (first {len(shown):,} of {count(len(order), 'thread')})"}
        )
    figure.update_layout(height=max(300, 120 + 18 * len(shown)))
    return figure
