"""The comparison page names items and runs one way (issue 31, item 9): ``#9`` and ``#9 · turn 0`` from one
function (:func:`evalkit.analysis.formatting.item_label`) in the deltas' rows, the pairwise tables and the
pairwise text; the runs and the paired rows named once, in the page's header; the swapped-order column says
which run the judge saw as its "Response A", so a reason that begins "Response A" is not read as run A."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis.comparison import compare
from evalkit.analysis.formatting import item_label
from evalkit.analysis.pairwise.result import Pairwise
from evalkit.analysis.pairwise.views import format_text, notebook_html, pairwise_context
from evalkit.reporting.comparison_page import write_html

CHECK = {"name": "check", "key": "check", "score_field": "check", "has_threshold": True}


@pytest.mark.parametrize(
    ("item", "turn", "name"),
    [
        (9, None, "#9"),
        (9, pd.NA, "#9"),
        (9, float("nan"), "#9"),
        (9, 0, "#9 \u00b7 turn 0"),
        (np.int64(3), np.int64(2), "#3 \u00b7 turn 2"),
        (9, 2.0, "#9 \u00b7 turn 2"),
    ],
)
def test_one_name_for_an_item_and_its_turn(item, turn, name):
    assert item_label(item, turn) == name


def run(results: list[str], responses: list[str]) -> pd.DataFrame:
    """Items 0-2, then item 9 as a thread of two turns; one evaluator ``check``."""
    df = pd.DataFrame(
        {
            "item": [0, 1, 2, 9, 9],
            "turn": pd.array([None, None, None, 0, 1], dtype="Int64"),
            "thread": [None, None, None, "onboarding", "onboarding"],
            "prompt": ["q0", "q1", "q2", "t0", "t1"],
            "response": responses,
            "status": results,
            "error_code": None,
            "error_message": None,
            "check": [1.0 if r == "pass" else 0.0 for r in results],
            "check_result": results,
            "check_threshold": 0.5,
            "check_reason": "r",
            "check_error": None,
        }
    )
    df.attrs["evalkit"] = {"scored": [CHECK], "document": {}, "source": "<document>"}
    return df


def pairwise_result() -> Pairwise:
    """B won item 1 and item 9's first turn, lost item 0; the judge's reasons name its own "Response A"."""
    rows = pd.DataFrame(
        {
            "item": [0, 1, 2, 9, 9],
            "turn": pd.array([None, None, None, 0, 1], dtype="Int64"),
            "prompt": ["q0", "q1", "q2", "t0", "t1"],
            "response_a": ["a0", "a1", "a2", "a9", "a9b"],
            "response_b": ["b0", "b1", "b2", "b9", "b9b"],
            "a_first": ["A", "B", "tie", "B", "tie"],
            "b_first": ["A", "B", "tie", "B", "tie"],
            "reason_a_first": ["Response A is better."] * 5,
            "reason_b_first": [
                "Response B is better.",
                "Response A is better.",
                "Same.",
                "Response A wins.",
                "Same.",
            ],
            "outcome": ["loss", "win", "tie", "win", "tie"],
            "consistent": [True] * 5,
            "error": [None] * 5,
        }
    )
    return Pairwise("a", "b", rows, rows.iloc[:0], 0.95, {"prompt": "pairwise", "model_name": "judge"})


def test_the_pairwise_text_names_a_turn_as_one_item():
    text = format_text(pairwise_result())
    assert "B won: #1, #9 \u00b7 turn 0" in text and "B lost: #0" in text
    assert "item" not in text.split("B won:")[1]


def test_the_pairwise_tables_name_items_as_the_page_does():
    context = pairwise_context(pairwise_result())
    wins = next(g for g in context["groups"] if g["id"] == "wins")
    assert [r["label"] for r in wins["rows"]] == ["#1", "#9 \u00b7 turn 0"]


def test_the_swapped_order_column_says_which_run_the_judge_called_response_a():
    html = notebook_html(pairwise_result())
    assert '<th>B shown first (as "Response A")</th>' in html
    # the swapped call's reason "Response A wins." is run B's: the cell says so above the reason
    row = html.split("<tr><td>#9 \u00b7 turn 0</td>")[1].split("</tr>")[0]
    cell = row.split("<td>")[-1]  # the last column: B shown first
    assert cell.startswith("<strong>B better</strong>")
    assert 'in this reason "Response A" is B, "Response B" is A' in cell
    assert cell.index("is A:") < cell.index("Response A wins.")
    assert "in the second call&#39;s reason &#39;Response A&#39; is B" in html  # the method says it too
    assert "A = a \u00b7 B = b" in html  # the notebook view names the runs itself


def test_the_comparison_page_names_runs_once_and_items_one_way(tmp_path):
    a = run(["pass", "pass", "pass", "pass", "pass"], ["x0", "x1", "x2", "x9", "x9b"])
    b = run(["fail", "pass", "pass", "fail", "pass"], ["y0", "x1", "x2", "y9", "x9b"])
    comparison = compare(a, b, labels=("a", "b"), resamples=50)
    page = write_html(comparison, tmp_path / "compare.html", pairwise=pairwise_result()).read_text()
    header = page.split("</header>")[0]
    assert "A = a \u00b7 B = b \u00b7 5 paired rows \u00b7 0 unpaired" in header
    # the subtitle once: not again above the deltas nor in the pairwise section (a banner may count pairs)
    assert page.count("A = a") == 1 and page.count("0 unpaired") == 1
    regressed = page.split('id="regressed"')[1].split("</table>")[0]
    assert ">#0</a>" in regressed and ">#9 \u00b7 turn 0</a>" in regressed
    pairwise = page.split('id="pairwise"')[1].split("</section>")[0]
    names = re.findall(r"<tr><td>([^<]*)</td>", pairwise)
    assert names and all(re.fullmatch(r"#\d+( \u00b7 turn \d+)?", n) for n in names), names
