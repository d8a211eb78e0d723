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


def test_partial_counts_the_rows_asked_whose_status_is_partial(scored, tmp_path):
    """The demo's item 7 is partial (keyword_coverage and ExactMatch failed to run): every evaluator asked on it
    counts it in ``partial``, in summary() and on the report page (the column was always 0)."""
    from bs4 import BeautifulSoup

    from evalkit.reporting.html_page import write_html
    from evalkit.spark.report import Totals

    table = evalkit.summary(scored)
    partial_items = set(scored.loc[scored["status"] == "partial", "item"])
    assert partial_items == {7}
    expected = {
        str(ev["name"]): int(((scored["status"] == "partial") & scored[f"{ev['key']}_result"].notna()).sum())
        for ev in scored.attrs["evalkit"]["scored"]
    }
    assert expected["ExactMatch"] == expected["forbidden_terms"] == expected["keyword_coverage"] == 1
    assert expected["Citations"] == 0
    assert table["partial"].drop("(status)").to_dict() == expected
    assert table.loc["(status)", "partial"] == 1
    # the Spark engine's totals, added up chunk by chunk, say the same
    totals = Totals(scored.attrs["evalkit"]["scored"])
    for start in range(0, len(scored), 5):
        chunk = scored.iloc[start : start + 5].copy()
        chunk.attrs = dict(scored.attrs)
        totals.add(chunk)
    assert totals.summary()["partial"].to_dict() == table["partial"].to_dict()
    write_html(scored, tmp_path / "report.html")
    page = BeautifulSoup((tmp_path / "report.html").read_text("utf-8"), "html.parser")
    shown = {
        row.th.get_text(): int(row.find_all("td")[4].get_text())
        for row in page.select("table.summary tbody tr")
    }
    assert shown == {**expected, "row status": 1}


def test_judge_usage_reads_the_same_after_every_judging_command():
    """run, spans eval, compare --pairwise and align print what the judge spent with judge_usage."""
    from evalkit.analysis.formatting import judge_usage
    from evalkit.cli.arguments.judge_cost import judge_line

    spent = {"calls": 1234, "cache_hits": 5678, "prompt_tokens": 18486, "completion_tokens": 803}
    assert judge_usage({**spent, "cost": {"usd": 0.0016}}) == (
        "1,234 calls, 5,678 from cache, 18,486 prompt + 803 completion tokens, $0.0016"
    )
    assert judge_usage({**spent, "calls": 1, "cost": None}) == (
        "1 call, 5,678 from cache, 18,486 prompt + 803 completion tokens, price not set"
    )
    assert judge_line({**spent, "model": "M", "cost": None}) == "Judge: M: " + judge_usage(spent)
