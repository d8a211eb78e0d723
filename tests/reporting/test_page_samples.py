"""The flaky marks' data in report.html (``e<k>.samples``, :mod:`evalkit.reporting.page_samples`): present only for
a judge of a run with ``--samples``, one bounded entry per row, junk in ``details`` dropped rather than embedded.
(The page itself, in Chromium, on a real sampled run: ``browser/test_flaky_marks.py``.)"""

from __future__ import annotations

import pandas as pd

from evalkit.reporting.page_data import page_columns
from evalkit.reporting.page_samples import REASON_LIMIT, SCORES_LIMIT, sample_column

EVALUATORS = [{"key": "relevance", "name": "Relevance"}]


def _table(details: list) -> pd.DataFrame:
    return pd.DataFrame(
        {"item": range(len(details)), "response": ["r"] * len(details), "relevance_details": details}
    )


def test_a_run_without_samples_embeds_no_samples_column():
    plain = dict(page_columns(_table([None, {"diagnostic_code": "x"}]), EVALUATORS, 100))
    assert "e0.samples" not in plain and "e0.result" in plain
    assert sample_column(pd.DataFrame({"item": [1]}), "relevance") is None


def test_each_sampled_row_has_its_pass_share_flip_scores_and_rule():
    sampled = {
        "samples": 3,
        "passShare": 2 / 3,
        "flipped": True,
        "scores": [5.0, 1.0, 5.0],
        "passRule": "all",
    }
    steady = {"samples": 3, "passShare": 1.0, "flipped": False, "scores": [4, 4, 4], "passRule": "majority"}
    columns = dict(page_columns(_table([sampled, None, steady]), EVALUATORS, 100))
    assert columns["e0.samples"] == [
        {"p": 0.6667, "n": 3, "f": 1, "s": [5.0, 1.0, 5.0], "r": "all"},
        None,
        {"p": 1.0, "n": 3, "f": 0, "s": [4, 4, 4], "r": "majority"},
    ]


def test_junk_details_are_bounded_or_dropped():
    junk = [
        {"samples": 2, "passShare": float("nan"), "flipped": True},  # no usable share: no mark
        {"samples": "3", "passShare": 0.5},  # a string count: no mark
        {"samples": 99, "passShare": 0.5, "flipped": "yes", "scores": list(range(99)) + [float("inf")],
         "passRule": "<script>" * 10},
    ]  # fmt: skip
    column = sample_column(_table(junk), "relevance")
    assert column[:2] == [None, None]
    last = column[2]
    assert last["f"] == 0 and len(last["s"]) == SCORES_LIMIT and len(last["r"]) == 20


def test_each_judgment_s_verdict_and_reason_are_embedded_beside_its_score():
    """The item view lists every judgment (verdict, score, reason); a run written before verdicts were kept, or
    details whose lists do not match the scores one for one, embed the scores alone."""
    kept = {
        "samples": 3,
        "passShare": 2 / 3,
        "flipped": True,
        "scores": [5, 1, 5],
        "verdicts": ["pass", "fail", "pass"],
        "reasons": ["fine", "x" * 900, None],
        "passRule": "all",
    }
    older = {"samples": 2, "passShare": 1.0, "flipped": False, "scores": [4, 4], "passRule": "all"}
    skewed = {**kept, "verdicts": ["pass"], "reasons": ["only one"]}
    entries = sample_column(_table([kept, older, skewed]), "relevance")
    assert entries[0]["v"] == [1, 0, 1]
    assert entries[0]["m"] == ["fine", "x" * REASON_LIMIT, ""]
    assert "v" not in entries[1] and "m" not in entries[1]
    assert "v" not in entries[2] and "m" not in entries[2]
