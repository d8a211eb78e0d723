"""The pieces of the CI outputs: Markdown escaping, JUnit text XML can carry, and the regression gate's
false alarms on noise (Holm's adjustment over evaluators)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lxml import etree

import evalkit
from evalkit.analysis.comparison import compare
from evalkit.analysis.regression_gate import _holm, regressions, verdicts
from evalkit.reporting.junit import junit_lines, xml_text
from evalkit.reporting.markdown_text import WORD_JOINER, inline

XSD = Path(__file__).resolve().parent / "data" / "junit-10.xsd"


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("<script>alert(1)</script>", "<script"),
        ('<img src=x onerror="alert(2)">', "<img"),
        ("[click](https://evil.example)", "](https"),
        ("![pixel](https://evil.example/p.png)", "!["),
        ("a | b", " | "),
        ("**bold** _it_ `code`", "**"),
        ("line one\n# heading", "\n"),
        ("<!-- hidden -->", "<!--"),
        ("&lt;script&gt;", "&lt;script"),  # an entity is shown as typed, not decoded into a tag
    ],
)
def test_inline_markdown_is_inert(text, absent):
    assert absent not in inline(text)


def test_mentions_issue_numbers_and_bare_urls_are_broken_by_a_word_joiner():
    out = inline("ping @octocat about #12 at https://evil.example and www.evil.example")
    assert f"@{WORD_JOINER}octocat" in out
    assert f"\\#{WORD_JOINER}12" in out
    assert "://" not in out and re.search(r"www\\\.", out) is None


def test_inline_drops_control_characters_and_cuts_long_text():
    assert inline("a\x00b\x07c\u202ed") == "abcd"
    out = inline("x" * 500, limit=50)
    assert len(out) == 50 and out.endswith("\u2026")
    assert inline(None) == ""


def test_xml_text_escapes_what_xml_1_0_forbids():
    assert xml_text("ok\tline\nnext") == "ok\tline\nnext"
    assert xml_text("bell\x07 nul\x00 \ud800 \uffff") == "bell\\x07 nul\\x00 \\ud800 \\uffff"


def scored_table(results: list[str], reasons: list[str]) -> pd.DataFrame:
    n = len(results)
    df = pd.DataFrame(
        {
            "item": list(range(n)),
            "turn": pd.array([pd.NA] * n, dtype="Int64"),
            "prompt": [f"question {i}" for i in range(n)],
            "response": [f"answer {i}" for i in range(n)],
            "status": [{"error": "partial"}.get(r, r) for r in results],
            "check": [1.0 if r == "pass" else 0.0 for r in results],
            "check_result": results,
            "check_reason": reasons,
            "check_error": ["judge \x1b[31mtimed out\x00" if r == "error" else None for r in results],
        }
    )
    df.attrs["evalkit"] = {
        "scored": [{"name": "check", "key": "check", "score_field": "check"}],
        "document": {},
    }
    return df


def test_junit_with_hostile_reasons_validates_and_keeps_the_text():
    hostile = ']]></failure><script>x</script>\x0b & "quotes" \ud83d'
    df = scored_table(["pass", "fail", "error"], ["fine", hostile, None])
    data = "\n".join(junit_lines(df, title='t "quoted" <title>\nnext')).encode()
    root = etree.fromstring(data)
    assert etree.XMLSchema(etree.parse(str(XSD))).validate(root)
    assert root.get("name") == 'evalkit: t "quoted" <title>\nnext'
    failure = root.find(".//failure")
    assert failure.text.startswith(']]></failure><script>x</script>\\x0b & "quotes" \\ud83d')
    assert failure.get("message").startswith("]]></failure><script>x</script>\\x0b")
    error = root.find(".//error")
    assert error.get("message") == "judge \\x1b[31mtimed out\\x00"
    assert [c.get("name") for c in root.iter("testcase")] == [
        "item 0: question 0",
        "item 1: question 1",
        "item 2: question 2",
    ]


def test_holm_adjustment_by_hand():
    # p sorted 0.01, 0.02, 0.04 over m = 3: 3 * 0.01 = 0.03, max(0.03, 2 * 0.02) = 0.04, max(0.04, 0.04) = 0.04
    assert _holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert _holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # 2 * 0.5 = 1.0; the next is at least that


def noisy_run(seed: int, evaluators: int, rows: int = 80) -> pd.DataFrame:
    """``evaluators`` judges that each pass an item with its own fixed chance, drawn afresh per run."""
    quality = np.random.default_rng(0).uniform(0.3, 0.95, size=(evaluators, rows))
    rng = np.random.default_rng(seed)
    passed = rng.random((evaluators, rows)) < quality
    data = {"item": range(rows), "prompt": [f"q{i}" for i in range(rows)], "status": "pass"}
    scored = []
    for e in range(evaluators):
        data[f"e{e}"] = passed[e].astype(float)
        data[f"e{e}_result"] = np.where(passed[e], "pass", "fail")
        scored.append({"name": f"judge{e}", "key": f"e{e}", "score_field": f"e{e}"})
    df = pd.DataFrame(data)
    df.attrs["evalkit"] = {"scored": scored, "document": {}}
    return df


@pytest.mark.slow
def test_noise_rarely_fails_the_gate_even_with_many_evaluators():
    # 40 re-runs of five noisy judges against one baseline: unadjusted tests at 0.05 flag a drop in some
    # evaluator far more often than the level; Holm keeps the share of false alarms at most the level.
    baseline = noisy_run(1000, 5)
    alarms = unadjusted = 0
    for seed in range(40):
        found = verdicts(compare(baseline, noisy_run(seed, 5), resamples=1))
        alarms += any(v.regression for v in found)
        unadjusted += any(v.p_value < 0.05 and v.delta < 0 for v in found)
    assert alarms <= 2, alarms  # 5% of 40
    assert unadjusted > alarms, (unadjusted, alarms)  # the adjustment is what keeps the gate quiet


def test_a_real_drop_is_found_among_noisy_evaluators():
    baseline, rerun = noisy_run(1, 4), noisy_run(2, 4)
    worse = rerun.copy()
    drop = np.arange(0, 80, 3)  # a third of the items now fail the first judge
    worse.loc[drop, "e0_result"] = "fail"
    worse.loc[drop, "e0"] = 0.0
    found = regressions(compare(baseline, worse, resamples=1))
    assert [v.evaluator for v in found] == ["judge0"]
    assert found[0].test_text().startswith("McNemar exact test p = ")


def many_failures(evaluators: int, rows: int) -> pd.DataFrame:
    data = {"item": range(rows), "prompt": [f"q{i}" for i in range(rows)], "status": "fail"}
    scored = []
    for e in range(evaluators):
        data[f"e{e}"] = 0.0
        data[f"e{e}_result"] = "fail"
        data[f"e{e}_reason"] = f"reason {e} " + "x" * 400
        scored.append({"name": f"judge{e}", "key": f"e{e}", "score_field": f"e{e}"})
    df = pd.DataFrame(data)
    df.attrs["evalkit"] = {"scored": scored, "document": {}}
    return df


def test_summary_lists_five_evaluators_per_row_and_fits_a_comment(monkeypatch):
    from evalkit.reporting import ci_summary

    text = ci_summary.summary_markdown(many_failures(12, 20), title="t", report="out/report.html")
    assert "### Worst items (10 of 20 rows)" in text
    assert text.count("| and 7 more  | see report\\.html |") == 10
    assert "judge5 (fail)" not in text and "judge4 (fail)" in text
    monkeypatch.setattr(ci_summary, "LIMIT", 3000)
    short = ci_summary.summary_markdown(many_failures(12, 20), title="t", report="out/report.html")
    assert len(short) <= 3000
    assert short.endswith(
        "(Summary cut short here to fit a pull-request comment: the rest is in report.html.)\n"
    )
    assert all(line.count("|") in (0, 5, 6) or not line.startswith("|") for line in short.splitlines())


def test_report_url_cannot_break_out_of_its_link():
    from evalkit.reporting.ci_summary import summary_markdown

    df = many_failures(1, 1)
    text = summary_markdown(df, title="t", report_url="https://ci.example/a)](javascript:alert(1)) <b>")
    link = next(line for line in text.splitlines() if line.startswith("Full report: "))
    assert (
        link
        == "Full report: [report.html](https://ci.example/a%29%5D%28javascript:alert%281%29%29%20%3Cb%3E)"
    )
    assert "(#)" in summary_markdown(df, title="t", report_url="javascript:alert(1)")


def test_junit_failure_shows_the_score_results_json_holds(tmp_path):
    """A failing Citations row: the score is the count (0 in results.json), not the input citations column."""
    document = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"Citations": {}},
        "items": [
            {
                "prompt": "How many vacation days?",
                "response": "Twenty days.",
                "citations": [{"index": 1, "text": "Twenty days a year.", "source": "policy"}],
            }
        ],
    }
    (tmp_path / "doc.json").write_text(json.dumps(document), "utf-8")
    scored = evalkit.evaluate(evalkit.load(tmp_path / "doc.json"))
    evalkit.save_results(scored, tmp_path / "run")
    entry = json.loads((tmp_path / "run" / "results.json").read_text("utf-8"))["items"][0]["scores"]
    assert entry["citations"]["count"] == 0 and entry["citations"]["result"] == "fail"
    text = "\n".join(junit_lines(scored, title="t"))
    assert "Found 0 citations (mixed); at least 1 required\nscore: 0</failure>" in text
