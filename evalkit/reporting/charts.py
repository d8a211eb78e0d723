"""Plotly figures of scored case tables, comparisons and calibrations, for notebooks and reports.

    from evalkit.reporting import charts
    charts.pass_rates(scored).show()
    charts.comparison_deltas(evalkit.compare(a, b))
    charts.calibration_heatmap(evalkit.calibrate(scored, "Relevance", labels))

Every function returns a ``plotly.graph_objects.Figure`` and takes plain evalkit objects (a scored case table,
a :class:`~evalkit.analysis.comparison.Comparison`, a :class:`~evalkit.analysis.calibration.Calibration`, or two
sequences of labels), so the same call works in Jupyter, VS Code or a report. plotly is imported inside the functions: ``import evalkit`` must stay fast.

Text that comes from a run (evaluator names, thread names, prompts in hover labels) is passed through
:func:`plain` first. Plotly already keeps it out of the page's HTML (it escapes its JSON and writes text as SVG
text), but it reads a small HTML-like markup *inside* labels (``<b>``, ``<br>``, ``<a href>``): without
:func:`plain`, a thread named ``<a href=...>`` would become a link in the chart. Titles are fixed strings plus
numbers and such plain names; no raw HTML ever goes into a title.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalkit.analysis.formatting import count, item_label, percent
from evalkit.analysis.summaries import (
    STATUS_ROW,
    STATUSES,
    scored_evaluators,
    status_counts,
    summary,
)
from evalkit.reporting.agreement_charts import agreement, agreement_heatmap, calibration_heatmap
from evalkit.reporting.chart_style import (
    BAR_TEXT,
    DOWN,
    FLAT,
    HOVER_LIMIT,
    STATUS_COLORS,
    UP,
    _go,
    _layout,
    _rows_axis,
    plain,
)
from evalkit.reporting.score_counts import SCORE_BINS, VERDICTS, ScoreCounts, score_bins

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

    from evalkit.analysis.comparison import Comparison

__all__ = [
    "agreement",
    "agreement_heatmap",
    "calibration_heatmap",
    "comparison_deltas",
    "pass_rates",
    "pass_rate_figure",
    "plain",
    "SCORE_BINS",
    "score_bins",
    "score_distribution",
    "score_bars",
    "score_figure",
    "status_figure",
    "status_breakdown",
    "thread_turns",
]


def pass_rates(df: pd.DataFrame) -> go.Figure:
    """One bar per evaluator: its pass rate, passed / (passed + failed), errors excluded (as in ``summary``).

    Hover shows the counts; an evaluator whose every row errored has no bar (its rate is undefined).
    """
    return pass_rate_figure(summary(df))


def pass_rate_figure(table: pd.DataFrame) -> go.Figure:
    """The chart of :func:`pass_rates` from the table of ``evalkit.summary`` (or one added up over chunks)."""
    go = _go()
    table = table[table.index != STATUS_ROW]
    names = [plain(n) for n in table.index]
    rates = [None if math.isnan(r) else float(r) for r in table["pass_rate"]]
    counts = [
        f"{int(r.passed)} pass, {int(r.failed)} fail, {int(r.errored)} error"
        for r in table[["passed", "failed", "errored"]].itertuples()
    ]
    figure = go.Figure(
        go.Bar(
            x=names,
            y=rates,
            text=[None if r is None else percent(r) for r in rates],
            textposition="outside",
            cliponaxis=False,
            customdata=counts,
            hovertemplate="%{x}<br>pass rate %{y:.1%}<br>%{customdata}<extra></extra>",
            marker_color=STATUS_COLORS["pass"],
            name="pass rate",
        )
    )
    _layout(
        figure,
        "Pass rate per evaluator",
        yaxis={"range": [0, 1.12], "tickformat": ".0%"},
        uniformtext=BAR_TEXT,
    )
    return figure


def _evaluator(df: pd.DataFrame, key: str) -> dict[str, Any]:
    for ev in scored_evaluators(df):
        if key in (ev["key"], ev.get("name")):
            return ev
    raise KeyError(f"no evaluator {key!r} is scored in this table")


def score_distribution(df: pd.DataFrame, key: str) -> go.Figure:
    """The scores of evaluator ``key`` (its key or name) over the rows that asked for it.

    1-5 judges (LLM evaluators, or any evaluator whose scores are all whole numbers from 1 to 5 with at least one
    above 1) get five categorical bins, empty ones included, so two runs' charts line up. Boolean scores
    (exactMatch) get two bins, false and true. Anything else gets :data:`SCORE_BINS` equal bins (computed here,
    so the figure holds counts, not every score). Each bar is split into its passing (green) and failing (red)
    rows, by the rows' own results (:func:`score_bars`).
    """
    counts = ScoreCounts(_evaluator(df, key))
    counts.bin(*counts.add(df))
    return score_figure(counts)


def score_bars(counts: ScoreCounts) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The bars of :func:`score_figure` as the properties of its traces and of its layout (the page's
    :func:`evalkit.reporting.chart_specs.score_spec` writes the same, without plotly).

    One trace per verdict (:data:`~evalkit.reporting.score_counts.VERDICTS`), stacked and coloured as the
    statuses are: each bar is split by its rows' own ``<key>_result``, so scores below the threshold show
    red whatever the threshold or its direction, and a bin straddling the threshold is part green, part red
    (the passing and the failing rows it holds). Pass and fail are always drawn (the legend reads the
    colours); "error" (a score whose row has no pass / fail verdict) only when there is one. When every score
    is the same, the one bar is as wide as a judge's bar in a chart of five (:data:`SINGLE_WIDTH`), not the
    whole axis.
    """
    name = plain(counts.ev.get("name", counts.key))
    kind = counts.kind
    single = False
    width: float | None = None
    if kind == "bool":
        labels: list[Any] = ["false", "true"]
        lines = counts.levels[:, :2]
    elif kind == "judge":
        labels = ["1", "2", "3", "4", "5"]
        lines = counts.levels[:, 1:]
    else:
        # binned by ScoreCounts, not by plotly: a Histogram trace embeds every value (about 2 MB per evaluator
        # at 100,000 rows); the bars carry only the counts
        centers = counts.centers()
        single = len(centers) == 1  # every score the same: one labelled bar of a normal width
        labels = [f"{centers[0]:g}"] if single else centers
        width = SINGLE_WIDTH if single else counts.width()
        empty = counts.binned is None or not centers
        lines = np.zeros((len(VERDICTS), 0), np.int64) if empty else counts.binned
    traces = []
    for code, verdict in enumerate(VERDICTS):
        y = lines[code].tolist()
        if verdict == "error" and not any(y):
            continue
        traces.append(
            {
                "x": labels,
                "y": y,
                "width": width,
                "name": verdict,
                "marker_color": STATUS_COLORS[verdict],
                "hovertemplate": "score %{x}<br>" + verdict + ": %{y} rows<extra></extra>",
            }
        )
    totals = lines.sum(axis=0).tolist()
    layout = {
        "xaxis": {"title": {"text": "score"}, **({"type": "category"} if kind != "bins" or single else {})},
        "yaxis": _rows_axis(totals),
        "legend": SCORE_LEGEND,  # in the order plotly writes them
        "bargap": 0.1,
        "barmode": "stack",
    }
    return traces, {"title": f"Scores of {name} ({count(counts.n, 'row')})", **layout}


#: Width of the one bar of a chart whose scores are all the same, in categories (the axis is one category
#: wide): as wide as a bar of a 1-5 judge's chart.
SINGLE_WIDTH = 0.18
#: The verdicts' legend of a score chart: one line at the top right, above the bars, under the title.
SCORE_LEGEND = {
    "orientation": "h",
    "traceorder": "normal",
    "x": 1,
    "xanchor": "right",
    "y": 1.02,
    "yanchor": "bottom",
}


def score_figure(counts: ScoreCounts) -> go.Figure:
    """The chart of :func:`score_distribution` from its counts (added up over the table, or chunk by chunk):
    see :func:`score_bars`."""
    go = _go()
    traces, layout = score_bars(counts)
    figure = go.Figure([go.Bar(**{k: v for k, v in trace.items() if v is not None}) for trace in traces])
    _layout(figure, layout.pop("title"), **layout)
    return figure


def status_breakdown(df: pd.DataFrame) -> go.Figure:
    """One bar per row status (pass, fail, partial, error), coloured as in report.html."""
    return status_figure(status_counts(df))


def status_figure(counts: dict[str, int]) -> go.Figure:
    """The chart of :func:`status_breakdown` from the counts of ``status_counts`` (or added up over chunks)."""
    go = _go()
    total = counts["total"]
    figure = go.Figure(
        go.Bar(
            x=list(STATUSES),
            y=[counts[s] for s in STATUSES],
            marker_color=[STATUS_COLORS[s] for s in STATUSES],
            text=[f"{counts[s]} ({percent(counts[s] / total)})" if total else "0" for s in STATUSES],
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{x}: %{y} rows<extra></extra>",
            name="rows",
        )
    )
    _layout(
        figure,
        f"Row status ({count(total, 'row')})",
        yaxis=_rows_axis([counts[s] for s in STATUSES]),
        uniformtext=BAR_TEXT,
    )
    return figure


def thread_turns(df: pd.DataFrame) -> go.Figure:
    """Turn-by-turn status of every multi-turn thread: one heatmap row per thread, one column per turn.

    Cells are coloured by status (pass, fail, partial, error; blank where a thread has fewer turns); hovering a
    cell shows the turn's prompt. Without threads the figure has no trace, only a note.
    """
    go = _go()
    if "turn" in df.columns:
        turns = pd.array(df["turn"], dtype="Int64")
        mask = ~np.asarray(turns.isna(), dtype=bool)
    else:
        mask = np.zeros(len(df), dtype=bool)
    figure = go.Figure()
    if not mask.any():
        figure.add_annotation(text="No multi-turn threads in this table", showarrow=False, x=0.5, y=0.5)
        _layout(figure, "Thread turns", xaxis={"visible": False}, yaxis={"visible": False})
        return figure
    rows = df.loc[mask]
    items = rows["item"].to_numpy(dtype=np.int64) if "item" in rows.columns else np.zeros(len(rows), np.int64)
    turn_index = pd.array(rows["turn"], dtype="Int64").to_numpy(dtype=np.int64)
    threads = rows["thread"].tolist() if "thread" in rows.columns else [None] * len(rows)
    status = rows["status"].tolist() if "status" in rows.columns else [None] * len(rows)
    prompts = rows["prompt"].tolist() if "prompt" in rows.columns else [""] * len(rows)
    order = sorted(set(items.tolist()))
    line_of = {item: i for i, item in enumerate(order)}
    labels = {}
    for item, thread in zip(items.tolist(), threads):
        if item not in labels:
            name = thread if isinstance(thread, str) and thread else None
            labels[item] = f"{item_label(item)} {plain(name, 40)}" if name else item_label(item)
    width = int(turn_index.max()) + 1
    code = {s: i for i, s in enumerate(STATUSES)}
    z = np.full((len(order), width), np.nan)
    hover = np.full((len(order), width), "", dtype=object)
    for item, turn, st, prompt in zip(items.tolist(), turn_index.tolist(), status, prompts):
        line = line_of[item]
        z[line, turn] = code.get(st, np.nan)
        hover[line, turn] = f"turn {turn}: {plain(st) or 'unscored'}<br>{plain(prompt, HOVER_LIMIT)}"
    scale = []
    for i, s in enumerate(STATUSES):
        scale += [[i / len(STATUSES), STATUS_COLORS[s]], [(i + 1) / len(STATUSES), STATUS_COLORS[s]]]
    figure.add_trace(
        go.Heatmap(
            z=[[None if math.isnan(v) else v for v in line] for line in z.tolist()],
            x=list(range(width)),
            y=[labels[item] for item in order],
            text=hover.tolist(),
            hovertemplate="%{y}<br>%{text}<extra></extra>",
            colorscale=scale,
            zmin=-0.5,
            zmax=len(STATUSES) - 0.5,
            xgap=2,
            ygap=2,
            colorbar={
                "tickvals": list(range(len(STATUSES))),
                "ticktext": list(STATUSES),
                "title": {"text": ""},
            },
        )
    )
    _layout(
        figure,
        f"Thread turns ({count(len(order), 'thread')})",
        xaxis={"title": {"text": "turn"}, "dtick": 1},
        yaxis={"autorange": "reversed", "type": "category"},
    )
    return figure


def comparison_deltas(comparison: Comparison, metric: str = "pass_rate") -> go.Figure:
    """One bar per evaluator (and the row status): B - A, with its interval as error bars.

    ``metric="pass_rate"`` (default) shows pass-rate deltas with the interval that agrees with McNemar's test;
    ``"mean"`` shows mean-score deltas (paired bootstrap interval) in each evaluator's own units (the row status
    has no mean score and is left out). Bars are green or red only when the change is significant
    (``significant`` / ``mean_significant`` of :class:`~evalkit.analysis.comparison.Comparison`: the test says
    so and enough rows are paired), grey otherwise.
    """
    go = _go()
    if metric not in ("pass_rate", "mean"):
        raise ValueError(f"metric must be 'pass_rate' or 'mean', not {metric!r}")
    table = comparison.evaluators
    if metric == "mean":
        table = table[table.index != STATUS_ROW]
        delta, low, high = "mean_delta", "mean_low", "mean_high"
    else:
        delta, low, high = "pass_rate_delta", "pass_rate_low", "pass_rate_high"
    names = ["row status" if n == STATUS_ROW else plain(n) for n in table.index]

    def clean(values) -> list:
        return [None if not math.isfinite(v) else float(v) for v in values]

    y, lo, hi = clean(table[delta]), clean(table[low]), clean(table[high])
    flag = "mean_significant" if metric == "mean" else "significant"
    significant = table[flag].tolist() if flag in table.columns else [True] * len(table)
    colors = []
    for left, right, decided in zip(lo, hi, significant):
        if not decided:
            colors.append(FLAT)
        elif left is not None and left > 0:
            colors.append(UP)
        elif right is not None and right < 0:
            colors.append(DOWN)
        else:
            colors.append(FLAT)
    plus = [None if v is None or h is None else max(h - v, 0.0) for v, h in zip(y, hi)]
    minus = [None if v is None or lw is None else max(v - lw, 0.0) for v, lw in zip(y, lo)]
    ranges = ["no interval" if lw is None or h is None else f"[{lw:+.3f}, {h:+.3f}]" for lw, h in zip(lo, hi)]
    level = f"{comparison.confidence:.0%}"
    figure = go.Figure(
        go.Bar(
            x=names,
            y=y,
            marker_color=colors,
            error_y={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "visible": True},
            customdata=ranges,
            hovertemplate="%{x}<br>B - A: %{y:+.3f}<br>" + level + " interval %{customdata}<extra></extra>",
            name="B - A",
        )
    )
    # the error bars are the table's intervals: McNemar's exact interval for pass rates, bootstrap for means
    if metric == "mean":
        title, bars, axis = "Mean score, B - A", f"bars: {level} paired bootstrap interval", {}
    else:
        title, bars, axis = (
            "Pass rate, B - A",
            f"bars: {level} McNemar exact interval",
            {"tickformat": "+.0%"},
        )
    _layout(figure, title, bars, yaxis={"zeroline": True, "zerolinewidth": 2, **axis})
    return figure
