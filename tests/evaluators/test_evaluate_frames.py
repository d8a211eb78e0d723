"""``evaluate`` returns a new table and leaves the caller's alone, also when either is changed afterwards.

The engine reads the input columns without copying them (issue 20's memory) but still copies the caller's
table once: in pandas without copy-on-write a shallow copy would share the column arrays, so a later
in-place edit of one table (``df.loc[0, "response"] = ...``) would show in the other.

Material: microsoft/m365-copilot-eval's ``schema/v1/examples/valid/scenarios-with-mixed-errors.json`` (MIT
License, Copyright (c) Microsoft Corporation; vendored under ``tests/reference/m365-copilot-eval``), which
records responses, errors and missing fields, with ExactMatch, PartialMatch and Citations on every item.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalkit

EXAMPLE = (
    Path(__file__).resolve().parents[1]
    / "reference"
    / "m365-copilot-eval"
    / "schema"
    / "v1"
    / "examples"
    / "valid"
    / "scenarios-with-mixed-errors.json"
)
EVALUATORS = {"ExactMatch": {}, "PartialMatch": {}, "Citations": {}}


@pytest.fixture
def loaded() -> pd.DataFrame:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc["default_evaluators"] = EVALUATORS
    for item in doc["items"]:
        for entry in [item, *item.get("turns", [])]:
            entry.pop("evaluators", None)
            entry.pop("evaluators_mode", None)
    return evalkit.load(doc)


def test_the_callers_table_is_left_as_it_was(loaded):
    before = loaded.copy()
    columns, attrs = list(loaded.columns), json.dumps(loaded.attrs, default=str)
    scored = evalkit.evaluate(loaded, progress=False)
    assert scored is not loaded
    assert list(loaded.columns) == columns and json.dumps(loaded.attrs, default=str) == attrs
    pd.testing.assert_frame_equal(loaded, before)
    assert {"status", "exactMatch_result", "citations_details"} <= set(scored.columns)


def test_later_edits_of_either_table_stay_in_that_table(loaded):
    scored = evalkit.evaluate(loaded, progress=False)
    first = scored.index[0]
    response = scored.at[first, "response"]
    loaded.loc[first, "response"] = "edited in the caller's table"
    assert scored.at[first, "response"] == response
    scored.loc[first, "prompt"] = "edited in the scored table"
    assert loaded.at[first, "prompt"] != "edited in the scored table"


def test_a_scored_table_scored_again_keeps_the_first_results(loaded):
    scored = evalkit.evaluate(loaded, progress=False)
    kept = scored.copy()
    again = evalkit.evaluate(scored, evaluators={"PartialMatch": {"threshold": 1.0}}, progress=False)
    pd.testing.assert_frame_equal(scored, kept)
    assert list(again.columns) == list(scored.columns)
    assert (again["partialMatch_threshold"].dropna() == 1.0).all()
    assert (
        again["status"].tolist()
        == [
            evalkit.evaluate(loaded, evaluators={"PartialMatch": {"threshold": 1.0}}, progress=False)[
                "status"
            ].tolist()
        ][0]
    )


def test_copy_false_scores_the_callers_columns_without_copying_them_with_the_same_results(loaded):
    """The CLI's way (issue 20's memory): no copy of a table its caller drops anyway; same results."""
    expected = evalkit.evaluate(loaded, progress=False)
    own = loaded.copy()
    scored = evalkit.evaluate(own, progress=False, copy=False)
    assert np.shares_memory(scored["prompt"].to_numpy(), own["prompt"].to_numpy())
    pd.testing.assert_frame_equal(scored, expected)


def test_many_evaluators_leave_no_fragmented_frame_and_no_pandas_warning(loaded):
    # 30 evaluators, 8 result columns each: inserted one by one, pandas warned "DataFrame is highly
    # fragmented" from the 100th column on.
    checks = {f"check{i}": (lambda **_: {"score": 1, "reason": "ok"}) for i in range(30)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scored = evalkit.evaluate(loaded, evaluators=checks, progress=False)
        assert scored["check29_result"].eq("pass").all()
        scored["more"] = 1  # the table returned is not fragmented either
    assert scored.attrs["evalkit"]["scored"][-1]["name"] == "check29"
