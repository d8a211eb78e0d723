"""Issue 11 item 3: a comparison that does not mislead: intervals that agree with the test, no significance
without enough pairs, banners for runs of different documents or few shared rows, word diffs of responses."""

from __future__ import annotations

import math

import pytest
from test_compare import table

from evalkit.analysis.comparison import compare
from evalkit.analysis.statistics import MIN_PAIRS, binomial_interval, mcnemar_interval, mcnemar_p
from evalkit.analysis.word_diff import word_diff


def with_document(df, sha: str, name: str = "doc"):
    df.attrs["evalkit"]["document"] = {
        "metadata": {"name": name, "extensions": {"dev.evalkit.run": {"document_sha256": sha}}}
    }
    return df


def test_one_changed_pair_is_not_significant_and_its_interval_contains_zero():
    # the issue: one paired row, fail -> pass: delta +100, bootstrap interval [+100, +100], McNemar p = 1
    c = compare(table(["fail"]), table(["pass"]), resamples=200)
    row = c.evaluators.loc["check"]
    assert row["pass_rate_delta"] == 1.0 and row["p_value"] == 1.0
    assert row["pass_rate_low"] < 0 < row["pass_rate_high"]
    assert not row["significant"] and not row["mean_significant"]


@pytest.mark.parametrize("b", range(0, 16))
def test_interval_excludes_zero_exactly_when_mcnemar_rejects(b):
    for c in range(0, 16):
        judged = b + c + 7
        low, high = mcnemar_interval(b, c, judged)
        rejects = mcnemar_p(b, c) < 0.05
        assert (low > 0 or high < 0) == rejects, (b, c, low, high)
        assert low <= (c - b) / judged <= high


def test_clopper_pearson_by_hand():
    # textbook values: 5 of 10 -> [0.187, 0.813]; 0 of 10 -> [0, 0.308]; 1 of 1 -> [0.025, 1]
    assert binomial_interval(5, 10) == pytest.approx((0.18709, 0.81291), abs=1e-5)
    assert binomial_interval(0, 10) == pytest.approx((0.0, 0.30850), abs=1e-5)
    assert binomial_interval(1, 1) == pytest.approx((0.025, 1.0), abs=1e-9)
    assert all(math.isnan(v) for v in binomial_interval(0, 0))


def test_significance_needs_the_test_and_enough_pairs():
    n = 40
    a = table(["pass"] * n)
    b = table(["fail"] * 30 + ["pass"] * 10)
    row = compare(a, b, resamples=300).evaluators.loc["check"]
    assert row["p_value"] < 0.05 and row["significant"] and row["pass_rate_high"] < 0
    assert row["mean_significant"]  # the bootstrap interval of the 0/1 scores excludes 0 too
    few = MIN_PAIRS - 1
    row = compare(table(["pass"] * few), table(["fail"] * few), resamples=300).evaluators.loc["check"]
    assert row["p_value"] < 0.05 and not row["significant"]  # p says so, but too few pairs


def test_notices_for_different_documents_few_rows_and_too_few_pairs():
    a = with_document(table(["pass"] * 20), "a" * 64, "HR v1")
    b = with_document(table(["pass"] * 20), "b" * 64, "HR v2")
    headings = [h for _, h, _ in compare(a, b, resamples=10).notices]
    assert headings == ["Different documents."]
    text = compare(a, b, resamples=10).notices[0][2]
    assert "HR v1 (sha256 aaaaaaaaaaaa" in text and "HR v2 (sha256 bbbbbbbbbbbb" in text
    same = with_document(table(["pass"] * 20), "a" * 64)
    assert compare(a, same, resamples=10).notices == []
    # 5 of 20 rows share an item: few shared rows, and too few pairs for a test
    small = with_document(table(["pass"] * 5), "a" * 64)
    levels = {h: level for level, h, _ in compare(a, small, resamples=10).notices}
    assert levels == {"Few shared rows.": "warning", "Too few pairs for a test.": "warning"}
    # a run without a recorded sha256 cannot be checked: said, not hidden
    assert [h for _, h, _ in compare(a, table(["pass"] * 20), resamples=10).notices] == [
        "Documents not checked."
    ]


def test_word_diff_round_trips_and_marks_changed_words():
    a, b = "You get 10 paid sick days.", "You get 12 paid sick days per year."
    diff = word_diff(a, b)
    assert "".join(t for op, t in diff if op != "ins") == a
    assert "".join(t for op, t in diff if op != "del") == b
    assert ("del", "10") in diff and ("ins", "12") in diff
    assert any(op == "ins" and "per year" in t for op, t in diff)
    assert word_diff(None, "new") == [("ins", "new")] and word_diff("same", "same") == [("same", "same")]
