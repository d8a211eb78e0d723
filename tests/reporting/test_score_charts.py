"""Score charts tell what the statuses tell (issue 31, item 9): each bar is split into the rows that passed
(green) and failed (red) by their own results, on the notebook's figures, the page's chart specs and the
streamed page alike; a chart of one value has one bar of a normal width; the notebook report's grid keeps
whole row counts and no wide gaps; the labels above bars keep one readable size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.analysis.summaries import scored_evaluators, summary
from evalkit.reporting import chart_specs, charts
from evalkit.reporting.notebook_report import score_distributions
from evalkit.reporting.score_counts import ScoreCounts

REPO = Path(__file__).resolve().parents[2]
GREEN, RED = charts.STATUS_COLORS["pass"], charts.STATUS_COLORS["fail"]


def scored(scores, results, thresholds=None) -> pd.DataFrame:
    df = pd.DataFrame({"item": range(len(scores)), "k": scores, "k_result": results})
    if thresholds is not None:
        df["k_threshold"] = thresholds
    df.attrs["evalkit"] = {
        "scored": [{"key": "k", "name": "k", "score_field": "score", "has_threshold": True}]
    }
    return df


def bars(df: pd.DataFrame) -> dict[str, list]:
    """Verdict -> counts per bar of the figure, checked to be the page's spec too."""
    figure = charts.score_distribution(df, "k")
    counts = ScoreCounts(scored_evaluators(df)[0])
    counts.bin(*counts.add(df))
    spec = chart_specs.score_spec(counts)
    assert spec["data"] == [t.to_plotly_json() for t in figure.data]
    assert figure.layout.barmode == "stack"
    colours = {t.name: t.marker.color for t in figure.data}
    assert colours["pass"] == GREEN and colours["fail"] == RED
    return {t.name: list(t.y) for t in figure.data}


def test_a_judges_scores_below_its_threshold_are_red():
    # threshold 3, pass when score >= 3: scores 1 and 2 failed
    got = bars(scored([1, 2, 2, 3, 4, 5, 5], ["fail", "fail", "fail", "pass", "pass", "pass", "pass"], 3))
    assert got == {"pass": [0, 0, 1, 1, 2], "fail": [1, 2, 0, 0, 0]}


def test_a_false_score_is_red_and_a_true_one_green():
    df = scored(
        pd.Series([True, False, True, False, False], dtype=object), ["pass", "fail", "pass", "fail", "fail"]
    )
    assert bars(df) == {"pass": [0, 2], "fail": [3, 0]}


def test_a_bin_straddling_the_threshold_is_split_into_its_passing_and_failing_rows():
    """Bins are coloured by their rows' results, not by their centre: the bin [0.48, 0.52) holds 0.49 (failed,
    threshold 0.5) and 0.5 (passed), so its bar is one row red under one row green."""
    scores = [0.1, 0.3, 0.49, 0.5, 0.7, 0.9]
    got = bars(scored(scores, ["fail" if s < 0.5 else "pass" for s in scores], 0.5))
    middle = 9  # 20 bins from 0.1 to 0.9, width 0.04: the tenth is [0.46, 0.50), the eleventh [0.50, 0.54)
    assert got["fail"][middle] == 1 and got["pass"][middle] == 0 and got["pass"][middle + 1] == 1
    straddling = scored([0.0, 0.45, 0.46, 1.0], ["fail", "fail", "pass", "pass"], [0.5, 0.5, 0.4, 0.5])
    got = bars(straddling)  # per-row thresholds: one bin, one row of each verdict
    assert got["fail"][9] == 1 and got["pass"][9] == 1


def test_a_score_without_a_pass_or_fail_verdict_is_drawn_in_the_error_colour():
    got = bars(scored([0.2, 0.4, 0.9], ["fail", "error", "pass"]))
    assert sum(got["error"]) == 1 and sum(got["pass"]) == 1 and sum(got["fail"]) == 1
    assert "error" not in bars(scored([0.2, 0.9], ["fail", "pass"]))


@pytest.fixture(scope="module")
def demo():
    return evalkit.evaluate(evalkit.load(REPO / "data" / "demo.json"), custom_dir=REPO / "custom-evaluators")


def test_the_red_and_green_rows_are_the_summarys_failed_and_passed(demo):
    table = summary(demo)
    for ev in scored_evaluators(demo):
        got = {t.name: sum(t.y) for t in charts.score_distribution(demo, ev["key"]).data}
        row = table.loc[ev["name"]]
        assert (got["pass"], got["fail"]) == (row["passed"], row["failed"]), ev["name"]


def test_a_chart_of_one_value_has_one_bar_of_a_judges_width():
    figure = charts.score_distribution(scored([0.75], ["fail"], 0.8), "k")
    assert figure.layout.xaxis.type == "category" and list(figure.data[1].x) == ["0.75"]
    assert {t.width for t in figure.data} == {charts.SINGLE_WIDTH} and charts.SINGLE_WIDTH < 0.25
    assert list(figure.data[1].y) == [1] and list(figure.data[0].y) == [0]


def test_the_notebook_grid_counts_whole_rows_with_small_gaps(demo):
    grid = score_distributions(demo)
    evaluators = scored_evaluators(demo)
    axes = [grid.layout[f"yaxis{k + 1 if k else ''}"] for k in range(len(evaluators))]
    # whole rows: each subplot keeps its figure's y axis, not plotly's default (0.5 rows for small counts)
    for ev, axis in zip(evaluators, axes, strict=True):
        own = charts.score_distribution(demo, ev["key"]).layout.yaxis
        assert (axis.tickformat, axis.dtick) == (",d", own.dtick), ev["name"]
    assert sum(axis.dtick == 1 for axis in axes) >= 4
    top, bottom = axes[0].domain, axes[2].domain  # the first and the second row of two columns
    plot_height = grid.layout.height - grid.layout.margin.t - grid.layout.margin.b
    assert round((top[0] - bottom[1]) * plot_height) <= 80  # px between two rows of charts
    assert (bottom[1] - bottom[0]) * plot_height >= 150  # px of each chart
    names = [t.name for t in grid.data if t.showlegend]
    assert names == ["pass", "fail"]  # one legend for the grid


def test_the_labels_above_bars_keep_one_readable_size():
    table = pd.DataFrame(
        {"passed": [4, 2, 1], "failed": [0, 2, 0], "errored": [0, 0, 0], "pass_rate": [1.0, 0.5, 1.0]},
        index=["a", "b", "c"],
    )
    for figure in (
        charts.pass_rate_figure(table),
        charts.status_figure({"pass": 4, "fail": 0, "partial": 0, "error": 0, "total": 4}),
    ):
        assert figure.data[0].cliponaxis is False
        assert figure.layout.uniformtext.minsize == 10 and figure.layout.uniformtext.mode == "show"
    assert charts.pass_rate_figure(table).layout.yaxis.range[1] > 1.1  # headroom for the 100% labels


def test_score_bins_still_counts_every_score():
    centres, counts, width = charts.score_bins(np.array([0.0, 0.5, 1.0]), bins=2)
    assert centres == [0.25, 0.75] and counts == [1, 2] and width == 0.5
