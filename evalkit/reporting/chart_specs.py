"""The charts of a run's report page as plain ``{"data", "layout"}`` dicts: what ``figure.to_plotly_json()``
gives for :func:`evalkit.reporting.charts.status_figure`, :func:`~evalkit.reporting.charts.pass_rate_figure`
and :func:`~evalkit.reporting.charts.score_figure`, without building plotly figures (issue 20).

Building a figure validates every property and deep-copies the ``plotly_white`` template into each layout:
about 0.3 s for a run's five charts, a tenth of report.html's write at 100,000 rows, for five bar charts of a
few numbers. Here each trace is the dict plotly would write (its properties in plotly's order: alphabetical,
``type`` last; ``marker_color`` as ``marker.color``; unset ones left out), each layout the properties
``charts._layout`` sets, in its order, and the template is plotly's own as a layout holds it. Validating it
takes plotly's graph objects 0.15-0.18 s (and about 10 MB) in every run's page writer, so the validated
template ships as ``assets/plotly_white_template.json``, recorded with the plotly version that made it, and
is validated live only under another plotly version (:func:`write_template_asset` records it again; a test
fails when the file and the installed plotly disagree).
``tests/reporting/test_chart_specs.py`` compares these dicts with plotly's figures for varied counts, so a
plotly upgrade that writes them differently fails there. The notebook-facing :mod:`charts` keeps returning
plotly figures.

May import: ``evalkit.analysis`` and ``evalkit.reporting.charts`` / ``score_counts`` (labels and colours);
plotly (for its template) only inside :func:`template`.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.analysis.formatting import count, percent
from evalkit.analysis.summaries import STATUS_ROW, STATUSES
from evalkit.reporting.charts import BAR_TEXT, STATUS_COLORS, _rows_axis, plain, score_bars
from evalkit.reporting.score_counts import ScoreCounts

__all__ = ["pass_rate_spec", "score_spec", "status_spec", "template"]

#: plotly's validated ``plotly_white`` template and the plotly version it was recorded with.
TEMPLATE_ASSET = Path(__file__).resolve().parent / "assets" / "plotly_white_template.json"


def template() -> dict[str, Any]:
    """The ``plotly_white`` template as a figure's layout holds it: plotly's JSON of it, validated as a layout's
    template (which orders its traces as a figure's does). A new dict each call (from JSON kept once per
    process), so changing one figure's template changes no other."""
    return json.loads(_template_json())


@lru_cache(maxsize=1)
def _template_json() -> str:
    import plotly

    recorded = json.loads(TEMPLATE_ASSET.read_text(encoding="utf-8"))
    if recorded["plotly"] == plotly.__version__:
        return json.dumps(recorded["template"])
    return validated_template_json()


def validated_template_json() -> str:
    """plotly's JSON of ``plotly_white``, validated as a layout's template by plotly's graph objects."""
    import plotly.graph_objects as go
    import plotly.io as pio

    return json.dumps(go.layout.Template(pio.templates["plotly_white"]).to_plotly_json())


def write_template_asset() -> None:
    """Record the installed plotly's validated template in :data:`TEMPLATE_ASSET` (after a plotly upgrade)."""
    import plotly

    recorded = {"plotly": plotly.__version__, "template": json.loads(validated_template_json())}
    TEMPLATE_ASSET.write_text(json.dumps(recorded, indent=1) + "\n", encoding="utf-8")


def _bar(**properties: Any) -> dict[str, Any]:
    """A bar trace as plotly writes it: properties that are set, alphabetical, then ``type``."""
    color = properties.pop("marker_color", None)
    if color is not None:
        properties["marker"] = {"color": color}
    trace = {name: properties[name] for name in sorted(properties) if properties[name] is not None}
    trace["type"] = "bar"
    return trace


def _spec(trace: dict[str, Any], title: str, subtitle: str = "", **extra: Any) -> dict[str, Any]:
    """The figure of ``trace`` with the layout of :func:`evalkit.reporting.charts._layout`."""
    heading = {"text": title, **({"subtitle": {"text": subtitle}} if subtitle else {})}
    top = 80 if subtitle else 60
    # plotly's order: a new figure's layout holds the default template first, which update_layout replaces
    layout = {"template": template(), "title": heading, "margin": {"l": 60, "r": 30, "t": top, "b": 60}}
    return {"data": [trace], "layout": {**layout, **extra}}


def status_spec(counts: dict[str, int]) -> dict[str, Any]:
    """:func:`evalkit.reporting.charts.status_figure` as a dict."""
    total = counts["total"]
    trace = _bar(
        x=list(STATUSES),
        y=[counts[s] for s in STATUSES],
        marker_color=[STATUS_COLORS[s] for s in STATUSES],
        text=[f"{counts[s]} ({percent(counts[s] / total)})" if total else "0" for s in STATUSES],
        textposition="outside",
        cliponaxis=False,
        hovertemplate="%{x}: %{y} rows<extra></extra>",
        name="rows",
    )
    return _spec(
        trace,
        f"Row status ({count(total, 'row')})",
        yaxis=_rows_axis([counts[s] for s in STATUSES]),
        uniformtext=BAR_TEXT,
    )


def pass_rate_spec(table: pd.DataFrame) -> dict[str, Any]:
    """:func:`evalkit.reporting.charts.pass_rate_figure` as a dict."""
    table = table[table.index != STATUS_ROW]
    rates = [None if math.isnan(r) else float(r) for r in table["pass_rate"]]
    trace = _bar(
        x=[plain(n) for n in table.index],
        y=rates,
        text=[None if r is None else percent(r) for r in rates],
        textposition="outside",
        cliponaxis=False,
        customdata=[
            f"{int(r.passed)} pass, {int(r.failed)} fail, {int(r.errored)} error"
            for r in table[["passed", "failed", "errored"]].itertuples()
        ],
        hovertemplate="%{x}<br>pass rate %{y:.1%}<br>%{customdata}<extra></extra>",
        marker_color=STATUS_COLORS["pass"],
        name="pass rate",
    )
    return _spec(
        trace,
        "Pass rate per evaluator",
        yaxis={"range": [0, 1.12], "tickformat": ".0%"},
        uniformtext=BAR_TEXT,
    )


def score_spec(counts: ScoreCounts) -> dict[str, Any]:
    """:func:`evalkit.reporting.charts.score_figure` as a dict: the same bars (``charts.score_bars``)."""
    traces, layout = score_bars(counts)
    spec = _spec(_bar(**traces[0]), layout.pop("title"), **layout)
    spec["data"] = [_bar(**trace) for trace in traces]
    return spec
