"""The trend of pass rates across runs (:func:`evalkit.runs`), for the report page's ``--history``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from evalkit.reporting.charts import STATUS_COLORS, plain

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

__all__ = ["pass_rate_trend"]


def pass_rate_trend(history: pd.DataFrame) -> go.Figure:
    """One line per evaluator (and a bold one for the row status): pass rate per run, oldest run first.

    Runs are evenly spaced and labelled by folder (hover: time, document, sha256 prefix, rows); a run that did not
    score an evaluator leaves a gap in that line.
    """
    import plotly.graph_objects as go

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
        (c, c.split(":", 1)[1]) for c in history.columns if c.startswith("pass_rate:")
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
    figure.update_layout(
        title={"text": f"Pass rates across {len(history)} runs"},
        template="plotly_white",
        margin={"l": 60, "r": 30, "t": 60, "b": 60},
        yaxis={"range": [0, 1.05], "tickformat": ".0%"},
        xaxis={"type": "category"},
    )
    return figure
