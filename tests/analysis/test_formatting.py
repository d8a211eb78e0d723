"""Numbers read the same everywhere: percentages with one decimal, counts with the right plural, in the CLI,
``summary()``, the notebook report and the report page's script."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.analysis.formatting import count, percent, plural, score
from evalkit.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"


@pytest.mark.parametrize(
    ("rate", "text"),
    [(9 / 11, "81.8%"), (1.0, "100.0%"), (0, "0.0%"), (0.0004, "0.0%"), (float("nan"), "n/a"), (None, "n/a")],
)
def test_percent_has_one_decimal(rate, text):
    assert percent(rate) == text


def test_counts_have_the_right_plural():
    assert count(1, "row") == "1 row" and count(0, "row") == "0 rows" and count(3, "thread") == "3 threads"
    assert count(1200, "row") == "1,200 rows"
    assert plural(2, "match") == "matches" and plural(1, "match") == "match"
    assert score(4.5) == "4.5" and score(9 / 11) == "0.818" and score(math.nan) == "n/a"


@pytest.fixture(scope="module")
def scored():
    return evalkit.evaluate(evalkit.load(DEMO), custom_dir=REPO / "custom-evaluators", progress=False)


def test_summary_keeps_numbers_but_shows_percentages(scored):
    table = evalkit.summary(scored)
    assert table.loc["forbidden_terms", "pass_rate"] == pytest.approx(9 / 11)  # still a number
    text, page = repr(table), table._repr_html_()
    for shown in (text, page):
        assert "81.8%" in shown and "0.818182" not in shown
        assert "n/a" in shown  # the status row has no mean score
    assert isinstance(table.head(2), pd.DataFrame) and "81.8%" in repr(table.head(2))


def test_the_cli_says_the_same_numbers(tmp_path, capsys):
    doc = json.loads(DEMO.read_text())
    doc["items"] = doc["items"][:1]
    one = tmp_path / "one.json"
    one.write_text(json.dumps(doc))
    assert (
        cli(
            ["run", str(one), "--out", str(tmp_path / "out"), "--custom-dir", str(REPO / "custom-evaluators")]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("1 row: ") and "1 rows" not in out
    assert "(pass rate 100.0%)" in out or "(pass rate 0.0%)" in out


def test_the_notebook_report_and_page_use_the_plural_rule(scored, tmp_path):
    from evalkit.reporting import charts
    from evalkit.reporting.html_page import write_html
    from evalkit.reporting.notebook_report.run_facts import header

    one = scored[scored["item"] == 0]
    assert "1 row" in charts.status_breakdown(one).layout.title.text
    assert "1 rows" not in charts.status_breakdown(one).layout.title.text
    threads = charts.thread_turns(scored[scored["item"] == 9])
    assert "(1 thread)" in threads.layout.title.text
    page = tmp_path / "page.html"
    write_html(one, page)
    assert "1 rows" not in page.read_text() and "1 row" in page.read_text()
    facts = header(one).html
    assert "1 row ·" in facts and "1 item ·" in facts and "1 rows" not in facts
