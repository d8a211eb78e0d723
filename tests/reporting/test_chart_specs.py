"""The report page's charts as plain dicts (``chart_specs``, issue 20) are what plotly writes for the same
figures (``charts``): the same JSON, template included, for every kind of chart and count the page draws, and
names that plotly would read as markup. A plotly upgrade that writes them differently fails here."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.analysis.summaries import scored_evaluators, status_counts, summary
from evalkit.reporting import chart_specs, charts
from evalkit.reporting.page import figure_specs, run_figures
from evalkit.reporting.score_counts import ScoreCounts


def _same(spec: dict, figure) -> None:
    assert json.dumps(spec) == json.dumps(figure.to_plotly_json())


def _scored(rows: int = 30) -> pd.DataFrame:
    items = [
        {"prompt": f"q{i}", "expected_response": f"a b {i % 4}", "response": f"a b {i % 3} [1]"}
        for i in range(rows)
    ]
    document = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}, "Citations": {}},
        "items": items,
    }
    return evalkit.evaluate(evalkit.load(document), progress=False)


@pytest.mark.parametrize(
    "counts",
    [
        {"pass": 5, "fail": 3, "partial": 0, "error": 1, "total": 9},
        {"pass": 100_000, "fail": 0, "partial": 0, "error": 0, "total": 100_000},
        {"pass": 0, "fail": 0, "partial": 0, "error": 0, "total": 0},
    ],
)
def test_status_chart(counts):
    _same(chart_specs.status_spec(counts), charts.status_figure(counts))


def test_pass_rate_chart_with_hostile_names_and_an_undefined_rate():
    table = pd.DataFrame(
        {
            "passed": [3, 0, 1],
            "failed": [1, 0, 0],
            "errored": [0, 4, 0],
            "pass_rate": [0.75, float("nan"), 1.0],
        },
        index=["<b>bold</b> & co", "all errored", "plain"],
    )
    _same(chart_specs.pass_rate_spec(table), charts.pass_rate_figure(table))


@pytest.mark.parametrize(
    "scores",
    [
        [True, False, True],  # bool
        [1, 2, 5, 4, 4],  # a 1-5 judge
        list(np.linspace(0.0, 1.0, 37)),  # bins
        [0.5, 0.5, 0.5],  # one value: one labelled bar
        [float("nan"), float("nan")],  # no finite score: no bins
    ],
)
def test_score_chart_of_each_kind(scores):
    df = pd.DataFrame({"item": range(len(scores)), "k": scores, "k_result": ["pass"] * len(scores)})
    df.attrs["evalkit"] = {"scored": [{"key": "k", "name": "<i>k</i>", "score_field": "score"}]}
    (ev,) = scored_evaluators(df)
    counts = ScoreCounts(ev)
    counts.bin(*counts.add(df))
    _same(chart_specs.score_spec(counts), charts.score_figure(counts))


def test_a_run_page_embeds_the_same_chart_json():
    """The page's chart specs (template taken out once) are those of plotly's figures of the same run."""
    df = _scored()
    table = summary(df)
    figures = [charts.status_figure(status_counts(df)), charts.pass_rate_figure(table)]
    for ev in scored_evaluators(df):
        counts = ScoreCounts(ev)
        counts.bin(*counts.add(df))
        figures.append(charts.score_figure(counts))
    specs = run_figures(df, table)
    assert all(isinstance(spec, dict) for spec in specs)
    assert figure_specs(specs) == figure_specs(figures)


def test_each_chart_gets_its_own_template():
    first = chart_specs.status_spec({"pass": 1, "fail": 0, "partial": 0, "error": 0, "total": 1})
    first["layout"]["template"]["layout"]["font"] = {"color": "red"}
    second = chart_specs.status_spec({"pass": 1, "fail": 0, "partial": 0, "error": 0, "total": 1})
    assert (
        second["layout"]["template"]
        == charts.status_figure(
            {"pass": 1, "fail": 0, "partial": 0, "error": 0, "total": 1}
        ).to_plotly_json()["layout"]["template"]
    )


def test_the_recorded_template_is_the_installed_plotlys():
    import plotly

    recorded = json.loads(chart_specs.TEMPLATE_ASSET.read_text(encoding="utf-8"))
    fix = "run: python -c 'from evalkit.reporting import chart_specs; chart_specs.write_template_asset()'"
    assert recorded["plotly"] == plotly.__version__, fix
    assert json.dumps(recorded["template"]) == chart_specs.validated_template_json(), fix
    assert chart_specs.template() == recorded["template"]


def test_under_another_plotly_version_the_template_is_validated_live(tmp_path, monkeypatch):
    stale = tmp_path / "template.json"
    stale.write_text(json.dumps({"plotly": "0.0.1", "template": {"layout": {"font": {"size": 99}}}}))
    monkeypatch.setattr(chart_specs, "TEMPLATE_ASSET", stale)
    chart_specs._template_json.cache_clear()
    try:
        assert json.dumps(chart_specs.template()) == chart_specs.validated_template_json()
    finally:
        chart_specs._template_json.cache_clear()
