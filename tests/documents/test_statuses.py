"""Row statuses from the result columns (``documents.statuses``), for every kind of value a result cell holds:
the verdicts, None and NaN (not asked: NaN is what a results file read back holds), a value that is no verdict
(asked, no verdict) and one that cannot be hashed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.documents.statuses import apply_statuses


def _table(a: list, b: list, responses: list) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "response": responses,
            "a_result": np.array(a, dtype=object),
            "b_result": np.array(b, dtype=object),
        }
    )


def test_statuses_follow_the_upstream_rules_for_every_kind_of_result_cell():
    df = _table(
        a=["pass", "pass", "fail", "error", None, float("nan"), "skipped", ["x"], "pass"],
        b=["pass", None, "pass", "pass", None, "fail", "pass", "pass", "error"],
        responses=["r"] * 8 + [None],
    )
    apply_statuses(df, ["a", "b"])
    assert df["status"].tolist() == [
        "pass",
        "pass",
        "fail",
        "partial",
        "pass",
        "fail",
        "pass",
        "pass",
        "error",
    ]
    assert df["error_code"].tolist()[3] == "evaluatorsFailed"
    assert df["error_message"].tolist()[3] == "Agent response obtained. 1 of 2 evaluators failed to run."
    assert df["error_code"].tolist()[8] == "evaluationCrashed"  # no agent was asked: no agent code
    assert df["error_code"].tolist()[:3] == [None, None, None]


def test_a_value_that_is_no_verdict_still_counts_as_asked():
    df = _table(a=["skipped", "skipped"], b=["error", "error"], responses=["r", "r"])
    apply_statuses(df, ["a", "b"])
    assert df["error_message"].tolist() == ["Agent response obtained. 1 of 2 evaluators failed to run."] * 2
    nan = _table(a=[float("nan")], b=["error"], responses=["r"])
    apply_statuses(nan, ["a", "b"])  # NaN is not asked: 1 of 1
    assert nan["error_message"].tolist() == ["Agent response obtained. 1 of 1 evaluators failed to run."]
