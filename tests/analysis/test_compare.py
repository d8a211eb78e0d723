"""Tests of run comparison (evalkit.analysis.comparison, .statistics, .pairing), reading saved runs
(evalkit.documents.run_reader), the plotly charts (evalkit.reporting.charts), the comparison page
(evalkit.reporting.comparison_page) and the ``evalkit compare`` command.

Statistics are checked against numbers worked out by hand in the comments; the small tables are built by hand
with one custom-style evaluator ``check`` so every count can be read off the lists.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.analysis import statistics as statistics_module
from evalkit.analysis.comparison import compare
from evalkit.analysis.statistics import mcnemar_p, paired_bootstrap
from evalkit.analysis.summaries import STATUS_ROW
from evalkit.cli import compare as compare_command
from evalkit.documents.run_reader import read_run
from evalkit.errors import DocumentError, EvalkitError
from evalkit.reporting.comparison_page import write_html

REPO = Path(__file__).resolve().parents[2]
XSS = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(2)>"

CHECK = {"name": "check", "key": "check", "score_field": "check", "has_threshold": True}


def table(results, scores=None, *, prompts=None, responses=None, status=None, items=None, name="check"):
    """A scored case table of single-turn rows with one evaluator ``check`` (``name`` is its display name)."""
    n = len(results)
    scores = scores if scores is not None else [{"pass": 1.0, "fail": 0.0}.get(r, np.nan) for r in results]
    status = status if status is not None else [{"error": "partial"}.get(r, r) for r in results]
    df = pd.DataFrame(
        {
            "item": items if items is not None else list(range(n)),
            "turn": pd.array([pd.NA] * n, dtype="Int64"),
            "thread": [None] * n,
            "prompt": prompts if prompts is not None else [f"question {i}" for i in range(n)],
            "response": responses if responses is not None else [f"answer {i}" for i in range(n)],
            "status": status,
            "error_code": None,
            "error_message": None,
            "check": np.asarray(scores, dtype=float),
            "check_result": results,
            "check_threshold": 0.5,
            "check_reason": [f"reason {r}" if r != "error" else None for r in results],
            "check_error": ["boom" if r == "error" else None for r in results],
        }
    )
    df.attrs["evalkit"] = {"scored": [{**CHECK, "name": name}], "document": {}, "source": "<document>"}
    return df


# ------------------------------------------------------------------------------------------------ McNemar


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (5, 0, 0.0625),  # 2 * (1/2)**5
        (0, 5, 0.0625),  # symmetric
        (1, 9, 0.021484375),  # 2 * (C(10,0) + C(10,1)) / 2**10 = 2 * 11 / 1024
        (2, 1, 1.0),  # 2 * (1 + 3) / 8 = 1.0
        (3, 3, 1.0),  # b == c: 2 * P(X <= 3) > 1, capped
        (10, 10, 1.0),
        (0, 0, 1.0),  # no discordant pair: no evidence at all
    ],
)
def test_mcnemar_p_by_hand(b, c, expected):
    assert mcnemar_p(b, c) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_p_matches_exact_binomial_sum_for_large_counts():
    b, c = 310, 250
    n = b + c
    exact = 2 * Fraction(sum(math.comb(n, k) for k in range(min(b, c) + 1)), 2**n)
    assert mcnemar_p(b, c) == pytest.approx(float(exact), rel=1e-9)
    assert 0 < mcnemar_p(b, c) < 0.05
    assert mcnemar_p(100_000, 0) == 0.0  # underflows cleanly instead of overflowing


def test_mcnemar_p_refuses_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_p(-1, 2)


# ------------------------------------------------------------------------------------------------ pass rates


A_RESULTS = ["pass", "pass", "pass", "fail", "fail", "error"]
B_RESULTS = ["pass", "fail", "fail", "pass", "fail", "pass"]


def test_pass_rate_delta_mean_delta_and_counts_by_hand():
    c = compare(table(A_RESULTS), table(B_RESULTS), resamples=200)
    row = c.evaluators.loc["check"]
    # Row 5 is an error in A: out of the rates. Judged rows 0-4: A passes 0,1,2 (3/5), B passes 0,3 (2/5).
    assert row["paired"] == 6
    assert row["judged"] == 5
    assert row["pass_rate_a"] == pytest.approx(0.6)
    assert row["pass_rate_b"] == pytest.approx(0.4)
    assert row["pass_rate_delta"] == pytest.approx(-0.2)
    # Discordant: pass->fail rows 1 and 2 (b = 2), fail->pass row 3 (c = 1): p = 2 * (1 + 3) / 8 -> 1.0.
    assert (row["pass_to_fail"], row["fail_to_pass"]) == (2, 1)
    assert row["p_value"] == 1.0
    # Scores 1/0 where judged: means over rows 0-4 are the pass rates.
    assert row["scored"] == 5
    assert row["mean_a"] == pytest.approx(0.6)
    assert row["mean_b"] == pytest.approx(0.4)
    assert row["mean_delta"] == pytest.approx(-0.2)
    # Errors: one in A; a pass that became an error would be a regression, an error that became a pass improved.
    assert (row["errored_a"], row["errored_b"]) == (1, 0)
    assert (row["regressed"], row["improved"]) == (2, 2)
    assert row["pass_rate_low"] <= row["pass_rate_delta"] <= row["pass_rate_high"]


def test_status_row_counts_every_paired_row():
    c = compare(table(A_RESULTS), table(B_RESULTS), resamples=50)
    status = c.evaluators.loc[STATUS_ROW]
    # status A: pass pass pass fail fail partial (3/6 pass); B: pass fail fail pass fail pass (3/6 pass)
    assert status["judged"] == 6
    assert status["pass_rate_a"] == pytest.approx(0.5)
    assert status["pass_rate_b"] == pytest.approx(0.5)
    assert (status["pass_to_fail"], status["fail_to_pass"]) == (2, 2)
    assert math.isnan(status["mean_delta"])
    assert list(c.evaluators.index) == ["check", STATUS_ROW]


def test_identical_runs_have_no_change():
    df = table(A_RESULTS)
    c = compare(df, df.copy(), resamples=100)
    row = c.evaluators.loc["check"]
    assert row["pass_rate_delta"] == 0 and row["mean_delta"] == 0
    assert row["pass_rate_low"] == row["pass_rate_high"] == 0
    assert row["p_value"] == 1.0
    assert c.regressed.empty and c.improved.empty and c.unpaired.empty


def test_evaluators_are_matched_by_key_and_named_as_in_a():
    a = table(A_RESULTS, name="Check")
    b = table(B_RESULTS)
    b.attrs["evalkit"]["scored"].append({"name": "extra", "key": "extra", "score_field": "score"})
    b["extra_result"] = "pass"
    b["extra"] = 1.0
    c = compare(a, b, resamples=10)
    assert list(c.evaluators.index) == ["Check", STATUS_ROW]
    assert c.evaluators.loc["Check", "key"] == "check"
    assert c.only_b == ["extra"] and c.only_a == []


# ------------------------------------------------------------------------------------------------ pairing


def test_changed_prompt_is_unpaired_and_left_out_of_the_statistics():
    prompts = [f"question {i}" for i in range(6)]
    prompts[1] = "a different question"
    c = compare(table(A_RESULTS), table(B_RESULTS, prompts=prompts), resamples=50)
    assert c.paired == 5
    assert c.unpaired[["item", "reason", "prompt_a", "prompt_b"]].to_dict("records") == [
        {"item": 1, "reason": "prompt changed", "prompt_a": "question 1", "prompt_b": prompts[1]}
    ]
    assert c.unpaired["turn"].isna().all()
    row = c.evaluators.loc["check"]
    # Row 1 (pass -> fail) is gone: judged rows 0, 2, 3, 4; A passes 0, 2 (2/4), B passes 0, 3 (2/4).
    assert row["judged"] == 4
    assert row["pass_rate_delta"] == pytest.approx(0.0)
    assert (row["pass_to_fail"], row["fail_to_pass"]) == (1, 1)
    assert 1 not in c.regressed["item"].tolist()


def test_rows_only_in_one_run_are_unpaired():
    a = table(["pass", "fail", "pass"])
    b = table(["pass", "pass"], items=[0, 7], prompts=["question 0", "question 7"])
    c = compare(a, b, resamples=10)
    assert c.paired == 1
    assert c.unpaired[["item", "reason"]].to_dict("records") == [
        {"item": 1, "reason": "only in A"},
        {"item": 2, "reason": "only in A"},
        {"item": 7, "reason": "only in B"},
    ]


def test_turns_pair_by_item_and_turn():
    a = table(["pass", "pass", "pass"], items=[0, 0, 1])
    b = table(["pass", "fail", "pass"], items=[0, 0, 1])
    for df in (a, b):
        df["turn"] = pd.array([0, 1, pd.NA], dtype="Int64")
        df["thread"] = ["t", "t", None]
        df["prompt"] = ["hi", "and then?", "single"]
    c = compare(a, b, resamples=10)
    assert c.paired == 3
    assert c.regressed[["item", "turn", "thread"]].to_dict("records") == [
        {"item": 0, "turn": 1, "thread": "t"}
    ]


def test_duplicate_rows_are_a_user_mistake():
    with pytest.raises(EvalkitError, match="more than one row for item 0"):
        compare(table(["pass", "pass"], items=[0, 0]), table(["pass", "pass"]))


# ------------------------------------------------------------------------------------------------ lists


def test_regressed_and_improved_lists_carry_both_responses():
    c = compare(
        table(A_RESULTS, responses=[f"old {i}" for i in range(6)]),
        table(B_RESULTS, responses=[f"new {i}" for i in range(6)]),
        resamples=10,
    )
    assert c.regressed["item"].tolist() == [1, 2]
    first = c.regressed.iloc[0]
    assert (first["response_a"], first["response_b"]) == ("old 1", "new 1")
    assert (first["status_a"], first["status_b"]) == ("pass", "fail")
    assert first["evaluators"] == ["check"]
    assert first["changes"] == "check: pass \u2192 fail (1 \u2192 0): reason fail"
    # Improved: row 3 fail -> pass and row 5 error -> pass (an error that went away counts).
    assert c.improved["item"].tolist() == [3, 5]
    assert c.improved.iloc[1]["changes"].startswith("check: error \u2192 pass")


def test_pass_that_became_an_error_is_a_regression_with_the_error_text():
    c = compare(table(["pass", "pass"]), table(["pass", "error"]), resamples=10)
    assert c.regressed["item"].tolist() == [1]
    assert c.regressed.iloc[0]["changes"] == "check: pass \u2192 error (1 \u2192 \u2013): boom"
    assert c.evaluators.loc["check", "judged"] == 1  # the errored row is not judged...
    assert c.evaluators.loc["check", "regressed"] == 1  # ...but it is a regression


def test_evaluator_regression_is_listed_when_the_status_does_not_change():
    """Both rows fail on another evaluator in both runs; ``check`` alone moves: pass -> fail on row 0."""
    a = table(["pass", "fail"], status=["fail", "fail"])
    b = table(["fail", "pass"], status=["fail", "fail"])
    c = compare(a, b, resamples=10)
    assert c.regressed[["item", "status_a", "status_b"]].to_dict("records") == [
        {"item": 0, "status_a": "fail", "status_b": "fail"}
    ]
    assert c.regressed.iloc[0]["evaluators"] == ["check"]
    assert c.improved["item"].tolist() == [1]
    assert c.evaluators.loc[STATUS_ROW, "regressed"] == 0


def test_status_only_regression_is_listed():
    """B got no response (status error, no evaluator ran): the row regressed though no evaluator says so."""
    b = table(["pass", None])
    b.loc[1, "status"] = "error"
    c = compare(table(["pass", "pass"]), b, resamples=10)
    assert c.regressed["item"].tolist() == [1]
    assert c.regressed.iloc[0]["evaluators"] == []
    assert (c.regressed.iloc[0]["status_a"], c.regressed.iloc[0]["status_b"]) == ("pass", "error")


# ------------------------------------------------------------------------------------------------ bootstrap


def test_bootstrap_interval_contains_the_true_difference():
    # Differences 0.3 +- 1, alternating: the true mean difference is exactly 0.3.
    n = 400
    diffs = 0.3 + np.where(np.arange(n) % 2 == 0, -1.0, 1.0)
    low, high = paired_bootstrap(diffs, np.ones(n, dtype=bool), resamples=2000, seed=0)
    assert low[0] < 0.3 < high[0]
    # Standard error 1 / sqrt(400) = 0.05: the 95 % interval is about 0.3 +- 0.098.
    assert high[0] - low[0] == pytest.approx(2 * 1.96 * 0.05, rel=0.15)


def test_bootstrap_is_deterministic_with_the_seed_and_independent_of_chunking(monkeypatch):
    rng = np.random.default_rng(42)
    diffs = rng.normal(0.1, 1.0, size=(300, 2))
    masks = rng.random((300, 2)) < 0.8
    first = paired_bootstrap(diffs, masks, seed=7)
    again = paired_bootstrap(diffs, masks, seed=7)
    other = paired_bootstrap(diffs, masks, seed=8)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    monkeypatch.setattr(statistics_module, "BOOTSTRAP_CELLS", 1000)  # 3 resamples per chunk
    # the same draws; only the matrix products' rounding may differ with their shape
    np.testing.assert_allclose(first, paired_bootstrap(diffs, masks, seed=7), rtol=0, atol=1e-12)


def test_bootstrap_is_paired():
    """B = A + 0.1 on every row: the paired difference is constant, so its interval has no width at all,
    however much the scores themselves vary (an unpaired interval would be about +-0.5 wide here)."""
    scores_a = np.random.default_rng(3).uniform(0, 5, size=200)
    results = ["pass"] * 200
    c = compare(table(results, scores_a), table(results, scores_a + 0.1), resamples=500)
    row = c.evaluators.loc["check"]
    assert row["mean_delta"] == pytest.approx(0.1)
    assert row["mean_low"] == pytest.approx(0.1) and row["mean_high"] == pytest.approx(0.1)


def test_compare_uses_the_seed():
    a, b = table(A_RESULTS * 10), table(B_RESULTS * 10)
    same = [compare(a, b, seed=1).evaluators.loc["check", "pass_rate_low"] for _ in range(2)]
    assert same[0] == same[1]
    lows = {compare(a, b, seed=s).evaluators.loc["check", "mean_low"] for s in range(5)}
    assert len(lows) > 1


def test_bootstrap_without_qualifying_rows_is_nan():
    low, high = paired_bootstrap(np.zeros((5, 1)), np.zeros((5, 1), dtype=bool), resamples=20)
    assert math.isnan(low[0]) and math.isnan(high[0])


# ------------------------------------------------------------------------------------------------ read_run


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The bundled demo, scored in memory and saved as a run folder."""
    scored = evalkit.evaluate(
        evalkit.load(REPO / "data" / "demo.json"), custom_dir=REPO / "custom-evaluators"
    )
    folder = tmp_path_factory.mktemp("demo-run")
    evalkit.save_results(scored, folder)
    return scored, folder


RESULT_SUFFIXES = ("", "_result", "_threshold", "_reason", "_error", "_code", "_details")


def test_read_run_gives_back_the_in_memory_result_columns(demo_run):
    scored, folder = demo_run
    read = read_run(folder)
    specs = scored.attrs["evalkit"]["scored"]
    assert [{k: v for k, v in s.items() if k != "is_llm"} for s in read.attrs["evalkit"]["scored"]] == [
        {k: v for k, v in s.items() if k != "is_llm"} for s in specs
    ]
    assert len(specs) == 8
    for spec in specs:
        for suffix in RESULT_SUFFIXES:
            column = spec["key"] + suffix
            expected, got = scored[column].copy(), read[column].copy()
            if suffix == "_threshold":
                # results.json keeps no threshold on errored entries (the one known loss)
                errored = scored[spec["key"] + "_result"] == "error"
                expected[errored] = np.nan
            pd.testing.assert_series_equal(got, expected, check_dtype=True, obj=column)
    for column in ("status", "error_code", "error_message", "prompt", "response", "item", "turn", "thread"):
        pd.testing.assert_series_equal(read[column], scored[column], obj=column)
    assert evalkit.summary(read).equals(evalkit.summary(scored))


def test_read_run_accepts_the_results_file_and_rewrites_the_same_results(demo_run, tmp_path):
    _, folder = demo_run
    read = read_run(folder / "results.json")
    evalkit.save_results(read, tmp_path)
    before = json.loads((folder / "results.json").read_text())
    after = json.loads((tmp_path / "results.json").read_text())
    assert after["items"] == before["items"]


def test_read_run_refuses_missing_paths_and_unscored_documents(tmp_path):
    with pytest.raises(DocumentError, match="no such file or folder"):
        read_run(tmp_path / "nope")
    with pytest.raises(DocumentError, match="no results.json in this folder"):
        read_run(tmp_path)
    with pytest.raises(DocumentError, match="not the results of a run"):
        read_run(REPO / "data" / "demo.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"schemaVersion": "1.11.0", "items": [5]}')
    with pytest.raises(DocumentError, match=r"items\[0\]: expected an object"):
        read_run(broken)


def test_compare_reads_run_folders(demo_run, tmp_path):
    scored, folder = demo_run
    from_disk = compare(folder, folder, resamples=50)
    in_memory = compare(scored, scored, resamples=50)
    pd.testing.assert_frame_equal(from_disk.evaluators, in_memory.evaluators)
    assert from_disk.label_a == folder.name


# ------------------------------------------------------------------------------------------------ HTML


def hostile_pair():
    prompts = [XSS, "question 1", XSS_IMG]
    a = table(["pass", "fail", "pass"], prompts=prompts, responses=[XSS, "ok", XSS_IMG], name=XSS_IMG)
    b = table(["fail", "pass", "fail"], prompts=prompts, responses=[XSS_IMG, XSS, XSS], name=XSS_IMG)
    b.loc[2, "check_reason"] = XSS
    return a, b


def test_html_report_escapes_everything_and_embeds_plotly_once(tmp_path):
    from plotly.offline import get_plotlyjs

    a, b = hostile_pair()
    c = compare(a, b, labels=(XSS, XSS_IMG), resamples=100)
    path = write_html(c, tmp_path / "compare.html", title=XSS)
    text = path.read_text(encoding="utf-8")
    assert "<script>alert" not in text
    assert "<img src=x" not in text
    assert html.escape(XSS) in text and html.escape(XSS_IMG) in text
    assert text.count(get_plotlyjs()[:200]) == 1  # plotly.js inline exactly once
    assert text.count('<div class="evalkit-figure"') == 2  # two figures
    assert re.search(r"<script[^>]*\bsrc=", text) is None  # nothing loaded from a CDN or elsewhere
    # Every script is allowed by the Content-Security-Policy, by hash, and nothing else is.
    csp = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text).group(1))
    allowed = set(re.findall(r"'(sha256-[^']+)'", csp))
    scripts = re.findall(r"<script>(.*?)</script>", text, flags=re.DOTALL)  # code; JSON data is not run
    digests = {"sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in scripts}
    assert digests == allowed
    assert "default-src 'none'" in csp


def test_notebook_view_is_escaped_and_has_no_script():
    a, b = hostile_pair()
    c = compare(a, b, labels=(XSS, "b"), resamples=10)
    view = c._repr_html_()
    assert "<script" not in view
    assert "<img" not in view
    assert html.escape(XSS) in view
    assert "Regressed (2)" in view and "Improved (1)" in view


def test_text_table_lists_every_evaluator():
    c = compare(table(A_RESULTS), table(B_RESULTS), resamples=10)
    text = c.table()
    assert re.search(r"^check\s+5\s+60\.0%\s+40\.0%\s+-20\.0\s", text, flags=re.MULTILINE)
    assert "row status" in text
    assert "2 rows regressed, 2 improved." in text


# ------------------------------------------------------------------------------------------------ charts


def test_chart_pass_rates_and_status_breakdown(demo_run):
    import plotly.graph_objects as go

    from evalkit.reporting import charts

    scored, _ = demo_run
    figure = charts.pass_rates(scored)
    assert isinstance(figure, go.Figure)
    assert len(figure.data) == 1 and len(figure.data[0].x) == 8
    assert figure.data[0].y[list(figure.data[0].x).index("answer_length")] == 1.0
    figure = charts.status_breakdown(scored)
    assert len(figure.data) == 1
    assert list(figure.data[0].x) == ["pass", "fail", "partial", "error"]
    assert list(figure.data[0].y) == [5, 5, 1, 1]


def test_chart_score_distribution_bins():
    import plotly.graph_objects as go

    from evalkit.reporting import charts

    judge = table(["pass"] * 6, [1, 2, 2, 5, 5, 5])
    figure = charts.score_distribution(judge, "check")
    assert isinstance(figure.data[0], go.Bar)
    assert list(figure.data[0].x) == ["1", "2", "3", "4", "5"] and list(figure.data[0].y) == [1, 2, 0, 0, 3]
    ratios = table(["pass"] * 4, [0.1, 0.5, 0.52, 0.9])
    binned = charts.score_distribution(ratios, "check").data[0]
    # counts per bin, not every score: 20 equal bins from 0.1 to 0.9 (width 0.04)
    assert isinstance(binned, go.Bar) and len(binned.x) == charts.SCORE_BINS
    assert sum(binned.y) == 4 and binned.y[0] == 1 and binned.y[-1] == 1 and binned.y[10] == 2
    assert binned.width == pytest.approx(0.04)
    same = charts.score_distribution(table(["pass"] * 3, [0.7, 0.7, 0.7]), "check")
    assert list(same.data[0].x) == ["0.7"] and list(same.data[0].y) == [3]  # one labelled bar
    assert same.layout.xaxis.type == "category"
    booleans = table(["pass", "fail", "pass"])
    booleans["check"] = pd.Series([True, False, True], dtype=object)
    figure = charts.score_distribution(booleans, "check")
    # one trace per verdict, stacked: the false bar is the failing row, the true bar the passing ones
    assert [t.name for t in figure.data] == ["pass", "fail"] and figure.layout.barmode == "stack"
    assert list(figure.data[0].x) == ["false", "true"] and list(figure.data[0].y) == [0, 2]
    assert list(figure.data[1].y) == [1, 0]
    with pytest.raises(KeyError):
        charts.score_distribution(judge, "nope")


def test_chart_thread_turns(demo_run):
    from evalkit.reporting import charts

    scored, _ = demo_run
    figure = charts.thread_turns(scored)
    assert len(figure.data) == 1
    heat = figure.data[0]
    assert len(heat.y) == 1 and len(heat.z[0]) == 3  # the demo has one thread of three turns
    assert list(heat.z[0]) == [0, 0, 1]  # pass, pass, fail
    assert len(charts.thread_turns(table(["pass"])).data) == 0


def test_chart_thread_names_are_shown_as_text_not_markup():
    from evalkit.reporting import charts

    df = table(["pass", "fail"], items=[0, 0])
    df["turn"] = pd.array([0, 1], dtype="Int64")
    df["thread"] = ["<a href='x'>t</a>", "<a href='x'>t</a>"]
    label = charts.thread_turns(df).data[0].y[0]
    assert "<a" not in label and "&lt;a href='x'&gt;t&lt;/a&gt;" in label


def test_chart_comparison_deltas_has_error_bars():
    from evalkit.reporting import charts

    c = compare(table(A_RESULTS * 5), table(B_RESULTS * 5), resamples=200)
    figure = charts.comparison_deltas(c)
    bar = figure.data[0]
    assert len(figure.data) == 1 and list(bar.x) == ["check", "row status"]
    row = c.evaluators.loc["check"]
    assert bar.y[0] == pytest.approx(row["pass_rate_delta"])
    assert bar.y[0] + bar.error_y.array[0] == pytest.approx(row["pass_rate_high"])
    assert bar.y[0] - bar.error_y.arrayminus[0] == pytest.approx(row["pass_rate_low"])
    # the bars are McNemar's exact interval, and the chart says so (issue 18, item 4)
    assert figure.layout.title.subtitle.text == "bars: 95% McNemar exact interval"
    mean = charts.comparison_deltas(c, metric="mean").layout.title
    assert mean.text == "Mean score, B - A" and "paired bootstrap" in mean.subtitle.text
    assert list(charts.comparison_deltas(c, metric="mean").data[0].x) == ["check"]
    with pytest.raises(ValueError):
        charts.comparison_deltas(c, metric="median")


def test_chart_agreement_heatmap():
    from evalkit.reporting import charts

    figure = charts.agreement_heatmap([1, 2, 5, 4, None], [1, 3, 5, 4, 2])
    heat = figure.data[0]
    assert len(figure.data) == 1
    assert len(heat.z) == 5 and all(len(line) == 5 for line in heat.z)
    assert sum(map(sum, heat.z)) == 4  # the pair with a missing judge score is dropped
    assert heat.z[2][1] == 1  # human 3, judge 2
    assert "75.0% exact agreement" in figure.layout.title.text
    assert "100.0% within one point" in figure.layout.title.text
    binary = charts.agreement_heatmap(["pass", "fail", True], ["pass", "pass", "pass"])
    assert [list(line) for line in binary.data[0].z] == [[2, 1], [0, 0]]
    stats = charts.agreement([1, 2, 3, 4, 5], [1, 2, 3, 4, 5])
    assert stats["kappa"] == pytest.approx(1.0) and stats["exact"] == 1.0
    with pytest.raises(ValueError):
        charts.agreement_heatmap([1, 7], [1, 2])


def test_import_evalkit_does_not_import_plotly():
    import subprocess
    import sys

    modules = "evalkit.reporting.comparison_page, evalkit.analysis.calibration, evalkit.analysis.noise"
    code = f"import sys, evalkit, evalkit.reporting.charts, {modules}; print('plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------------------------------------ CLI


def run_cli(argv: list[str]) -> int:
    """Parse and run like ``evalkit.cli.main`` would, with only the compare command registered."""
    parser = argparse.ArgumentParser(prog="evalkit")
    compare_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except EvalkitError as exc:
        print(f"Error: {exc}")
        return exc.exit_code


def test_cli_compare_prints_deltas_and_writes_the_report(demo_run, tmp_path, capsys):
    _, folder = demo_run
    out = tmp_path / "report" / "compare.html"
    assert run_cli(["compare", str(folder), str(folder / "results.json"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "12 paired rows; 0 unpaired" in printed
    assert re.search(r"^PartialMatch\s+6\s+66\.7%\s+66\.7%\s+\+0\.0", printed, flags=re.MULTILINE)
    assert f"Report: {out}" in printed
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_cli_compare_missing_run_exits_2(demo_run, tmp_path, capsys):
    _, folder = demo_run
    assert run_cli(["compare", str(folder), str(tmp_path / "missing")]) == 2
    assert "no such file or folder" in capsys.readouterr().out
    assert run_cli(["compare", str(folder), str(folder), "--resamples", "0"]) == 2
