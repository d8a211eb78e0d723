"""End to end: `evalkit run` and `evalkit spans eval` with --summary-md, --junit and --fail-on-regression.

Runs: a document of 60 recorded answers scored by the deterministic ExactMatch and PartialMatch; a "seed"
picks which answers are wrong (9 of 60), so a re-run with another seed changes only noise (the same error
rate, other items). The regressed set has 15 more wrong answers. Span runs: the AgentCore demo span file
(data/agentcore_spans.jsonl: spans in the GenAI, Strands, Traceloop and OpenInference forms) copied six times
under new ids, scored by the bundled tool_response_schema evaluator; the regressed copy has its tool results
cut short. The JUnit files are validated with lxml against the Jenkins xUnit plugin's junit-10.xsd.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import pytest
from lxml import etree

from evalkit.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
XSD = REPO / "tests" / "reporting" / "data" / "junit-10.xsd"
CUSTOM = REPO / "custom-evaluators"
HOSTILE = "<script>alert(1)</script> | @octocat [click](https://evil.example/x) ![i](x.png) #12 \x07"
N = 60


def schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(XSD)))


def document(path: Path, wrong: set[int]) -> Path:
    """60 items with recorded responses; the items in ``wrong`` answer wrongly (item 3 with hostile text)."""
    items = []
    for i in range(N):
        right = f"The answer to question {i} is {i * 7} units."
        response = (HOSTILE if i == 3 else f"I am not sure about {i}.") if i in wrong else right
        item = {"prompt": f"Question {i}: how many units?", "expected_response": right, "response": response}
        if i == 10:  # asks for ExactMatch only: PartialMatch is skipped in the JUnit file
            item["evaluators"], item["evaluators_mode"] = {"ExactMatch": {}}, "replace"
        items.append(item)
    items.append(
        {"prompt": "Question with no expected answer", "response": "Something."}
    )  # ExactMatch errors
    doc = {
        "schemaVersion": "1.11.0",
        "metadata": {"name": "CI gate check"},
        "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}},
        "items": items,
    }
    path.write_text(json.dumps(doc))
    return path


def noisy(seed: int) -> set[int]:
    return set(random.Random(seed).sample(range(N), 9)) | {3}


def run(capsys, *args) -> tuple[int, str, str]:
    code = cli(["run", *map(str, args), "--custom-dir", str(CUSTOM)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ci")
    doc = document(folder / "base.json", noisy(1))
    assert cli(["run", str(doc), "--out", str(folder / "base")]) == 0
    return folder


def test_rerun_with_another_seed_passes_the_gate(baseline, tmp_path, capsys):
    doc = document(tmp_path / "rerun.json", noisy(2))
    md, xml = tmp_path / "summary.md", tmp_path / "junit.xml"
    code, out, err = run(
        capsys,
        doc,
        "--out",
        tmp_path / "rerun",
        "--fail-on-regression",
        baseline / "base",
        "--summary-md",
        md,
        "--junit",
        xml,
    )
    assert code == 0, err
    assert "No significant regression against base: McNemar exact test" in out
    assert "Regression:" not in out + err
    text = md.read_text()
    assert ":white_check_mark: No significant regression against base" in text
    assert "no significant change" in text
    assert schema().validate(etree.parse(str(xml)))


def test_real_regression_fails_the_gate_naming_evaluator_test_and_level(baseline, tmp_path, capsys):
    worse = noisy(1) | set(range(20, 35))
    doc = document(tmp_path / "worse.json", worse)
    md, xml = tmp_path / "summary.md", tmp_path / "junit.xml"
    code, out, err = run(
        capsys,
        doc,
        "--out",
        tmp_path / "worse",
        "--fail-on-regression",
        baseline / "base",
        "--summary-md",
        md,
        "--junit",
        xml,
    )
    assert code == 1
    line = next(x for x in err.splitlines() if x.startswith("Regression: ExactMatch"))
    assert "against base" in line and "McNemar exact test p = " in line and "(95% level)" in line
    dropped = len(worse - noisy(1))
    assert f"{dropped} pass -> fail, 0 fail -> pass of {N} judged pairs" in line
    assert "Gate failed" in err
    text = md.read_text()
    assert ":x: **Significant regression** against base in ExactMatch, PartialMatch." in text
    before, after = (N - len(noisy(1))) / N, (N - len(worse)) / N
    assert f"| ExactMatch | {before:.1%} | {after:.1%} | {(after - before) * 100:+.1f} |" in text
    tree = etree.parse(str(xml))
    assert schema().validate(tree), schema().error_log
    gate = tree.find("testsuite[@name='regression against base']")
    failure = gate.find("testcase[@name='ExactMatch']/failure")
    assert failure is not None and "McNemar exact test" in failure.get("message")


def test_baseline_without_gating_reports_but_exits_0(baseline, tmp_path, capsys):
    doc = document(tmp_path / "worse.json", noisy(1) | set(range(20, 35)))
    code, out, _ = run(capsys, doc, "--out", tmp_path / "w", "--baseline", baseline / "base")
    assert code == 0
    assert out.count("Regression: ") == 2  # said, not gated


def test_markdown_summary_content_and_escaping(baseline, tmp_path, capsys):
    md = tmp_path / "summary.md"
    code, _, _ = run(
        capsys, document(tmp_path / "d.json", noisy(1)), "--out", tmp_path / "r", "--summary-md", md
    )
    assert code == 0
    text = md.read_text()
    assert text.startswith("## evalkit: CI gate check\n")
    wrong = len(noisy(1))
    rate = (N - wrong) / N
    assert f"| ExactMatch | {rate:.1%} | {N - wrong} | {wrong} | 1 |" in text  # item 60 errors
    assert "### Worst items (10 of 61 rows)" in text
    assert "Question with no expected answer" in text and "needs &#39;expected\\_response&#39;" in text
    assert "Full report: " in text and "report\\.html" in text
    # the hostile response and its reason never become markup, links, mentions or extra cells
    assert "<script" not in text and "<img" not in text
    assert "](https://" not in text and "![" not in text
    assert re.search(r"(?<!\u2060)@octocat", text) is None
    for row in [r for r in text.splitlines() if r.startswith("| ")]:
        cells = re.split(r"(?<!\\)\|", row)
        assert len(cells) - 2 in (4, 5, 9), row  # every row has its table's columns, no more


def test_junit_has_one_case_per_item_and_evaluator(baseline, tmp_path, capsys):
    xml = tmp_path / "junit.xml"
    code, _, _ = run(capsys, document(tmp_path / "d.json", noisy(1)), "--out", tmp_path / "r", "--junit", xml)
    assert code == 0
    tree = etree.parse(str(xml))
    assert schema().validate(tree), schema().error_log
    exact = tree.find("testsuite[@name='ExactMatch']")
    partial = tree.find("testsuite[@name='PartialMatch']")
    wrong = str(len(noisy(1)))
    assert (exact.get("tests"), exact.get("failures"), exact.get("errors")) == ("61", wrong, "1")
    assert len(exact.findall("testcase")) == 61
    assert partial.get("skipped") == "1"
    assert partial.find("testcase[@name='item 10: Question 10: how many units?']/skipped") is not None
    failed = exact.find("testcase[@name='item 3: Question 3: how many units?']/failure")
    assert "differs from expected_response" in failed.get("message")
    error = exact.find("testcase[@name='item 60: Question with no expected answer']/error")
    assert "expected_response" in error.get("message")


def test_missing_baseline_is_exit_2_before_any_work(tmp_path, capsys):
    code, _, err = run(
        capsys,
        document(tmp_path / "d.json", set()),
        "--out",
        tmp_path / "r",
        "--fail-on-regression",
        tmp_path / "nowhere",
    )
    assert code == 2
    assert "--fail-on-regression" in err and "no such folder" in err
    assert not (tmp_path / "r").exists()


def test_spans_folder_as_run_baseline_is_a_clear_error(tmp_path, capsys):
    spans_out = tmp_path / "spans"
    spans_out.mkdir()
    (spans_out / "results.json").write_text('{"evaluationResults": [], "passingLabels": {}}')
    code, _, err = run(
        capsys, document(tmp_path / "d.json", set()), "--out", tmp_path / "r", "--baseline", spans_out
    )
    assert code == 2 and "Error:" in err and "Traceback" not in err


# ------------------------------------------------------------------------------------------- spans eval


def new_id(old: str, copy: int) -> str:
    """A fresh hex id of the same length for copy ``copy`` of an id (no two ids of the file collide)."""
    return hashlib.sha256(f"{old}/{copy}".encode()).hexdigest()[: len(old)]


def span_copies(path: Path, copies: int, *, cut_tool_results: bool = False) -> Path:
    """The demo span file ``copies`` times under new trace, span and session ids (optionally with every
    ``gen_ai.tool.call.result`` cut to a few words: a worse agent)."""
    lines = (REPO / "data" / "agentcore_spans.jsonl").read_text().splitlines()
    ids = set()
    for line in lines:
        span = json.loads(line)
        ids |= {span["traceId"], span["spanId"], span.get("parentSpanId")} - {None}
    sessions = sorted(set(re.findall(r'"(sess-[a-z]+)"', "\n".join(lines))))
    out = []
    for k in range(copies):
        for line in lines:
            for old in ids:
                line = line.replace(f'"{old}"', f'"{new_id(old, k)}"')
            for old in sessions:
                line = line.replace(f'"{old}"', f'"{old}-{k}"')
            span = json.loads(line)
            if cut_tool_results and "gen_ai.tool.call.result" in span.get("attributes", {}):
                span["attributes"]["gen_ai.tool.call.result"] = "n/a"
            out.append(json.dumps(span))
    path.write_text("\n".join(out) + "\n")
    return path


def spans_eval(capsys, spans: Path, out: Path, *extra) -> tuple[int, str, str]:
    code = cli(
        [
            "spans",
            "eval",
            str(spans),
            "--evaluator",
            "tool_response_schema",
            "--custom-dir",
            str(CUSTOM),
            "--out",
            str(out),
            *map(str, extra),
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_spans_eval_rerun_passes_and_worse_tool_results_fail_the_gate(tmp_path, capsys):
    spans = span_copies(tmp_path / "spans.jsonl", 6)
    code, _, err = spans_eval(capsys, spans, tmp_path / "base")
    assert code == 0, err
    md, xml = tmp_path / "rerun.md", tmp_path / "rerun.xml"
    code, out, err = spans_eval(
        capsys,
        spans,
        tmp_path / "rerun",
        "--fail-on-regression",
        tmp_path / "base",
        "--summary-md",
        md,
        "--junit",
        xml,
    )
    assert code == 0, err
    assert "No significant regression against base" in out
    assert "| tool\\_response\\_schema \\(TRACE\\) | 83.3% | 30 | 6 | 0 |" in md.read_text()
    assert "Documents not checked" not in md.read_text()
    assert schema().validate(etree.parse(str(xml)))

    worse = span_copies(tmp_path / "worse.jsonl", 6, cut_tool_results=True)
    md, xml = tmp_path / "worse.md", tmp_path / "worse.xml"
    code, _, err = spans_eval(
        capsys,
        worse,
        tmp_path / "worse",
        "--fail-on-regression",
        tmp_path / "base",
        "--summary-md",
        md,
        "--junit",
        xml,
    )
    assert code == 1
    line = next(x for x in err.splitlines() if x.startswith("Regression: "))
    assert line.startswith("Regression: tool_response_schema (TRACE) pass rate 83.3% -> ")
    assert "McNemar exact test p = " in line and "(95% level)" in line
    text = md.read_text()
    assert "**Significant regression** against base in tool\\_response\\_schema \\(TRACE\\)" in text
    assert f"session sess\\-genai\\-0 / trace {new_id('11111111111111111111111111111111', 0)}" in text
    tree = etree.parse(str(xml))
    assert schema().validate(tree), schema().error_log
    suite = tree.find("testsuite[@name='tool_response_schema (TRACE)']")
    assert suite.get("tests") == "36"
    assert suite.find("testcase/failure") is not None


def test_baseline_that_is_also_the_out_folder_is_read_before_it_is_replaced(tmp_path, capsys):
    out = tmp_path / "results"
    code, _, _ = run(capsys, document(tmp_path / "a.json", noisy(1)), "--out", out)
    assert code == 0
    worse = document(tmp_path / "b.json", noisy(1) | set(range(20, 35)))
    code, _, err = run(capsys, worse, "--out", out, "--fail-on-regression", out)
    assert code == 1
    assert "Regression: ExactMatch" in err


def test_ci_outputs_of_a_spark_run_of_a_parquet_table_are_refused_up_front(tmp_path, capsys):
    table = tmp_path / "cases.parquet"
    table.write_bytes(b"PAR1")
    code = cli(["run", str(table), "--engine", "spark", "--junit", str(tmp_path / "j.xml")])
    err = capsys.readouterr().err
    assert code == 2
    assert "Parquet case table" in err and "results.json" in err


def test_no_evaluator_in_both_runs_is_said_not_passed_silently(tmp_path, capsys):
    def only(evaluator: str, path: Path) -> Path:
        doc = json.loads(document(path, set()).read_text())
        doc["default_evaluators"] = {evaluator: {}}
        for item in doc["items"]:  # item 10 asks for ExactMatch itself
            item.pop("evaluators", None)
            item.pop("evaluators_mode", None)
        path.write_text(json.dumps(doc))
        return path

    assert run(capsys, only("ExactMatch", tmp_path / "a.json"), "--out", tmp_path / "a")[0] == 0
    code, out, err = run(
        capsys,
        only("PartialMatch", tmp_path / "b.json"),
        "--out",
        tmp_path / "b",
        "--fail-on-regression",
        tmp_path / "a",
    )
    assert code == 2 and "Traceback" not in err
    assert err.endswith(
        f"Error: --fail-on-regression {tmp_path / 'a'}: not tested: no evaluator is in both runs, so the gate "
        "cannot pass or fail; give the --out folder of an earlier run of the same document (this run's files "
        "are written)\n"
    )
    assert (tmp_path / "b" / "results.json").exists()


def test_a_gate_against_a_run_of_another_document_is_not_tested_and_says_why_on_the_terminal(
    baseline, tmp_path, capsys
):
    doc = json.loads(document(tmp_path / "other.json", noisy(1)).read_text())
    for item in doc["items"]:
        item["prompt"] = "Another question: " + item["prompt"]
    doc["items"] = doc["items"][5:]  # rows pair by position and prompt: none does
    (tmp_path / "other.json").write_text(json.dumps(doc))
    md = tmp_path / "summary.md"
    code, out, err = run(
        capsys, tmp_path / "other.json", "--out", tmp_path / "o", "--fail-on-regression", baseline / "base",
        "--summary-md", md,
    )  # fmt: skip
    assert code == 2 and "Traceback" not in err
    assert "Warning: Different documents. base ran CI gate check (sha256 " in err
    assert "Holm-adjusted over 0" not in out + err and "No significant regression" not in out + err
    assert "not tested: no evaluator has the 10 judged pairs a test needs (judged pairs: ExactMatch 0" in err
    text = md.read_text()
    assert ":grey\\_question: **Not tested** against base" not in text  # the mark itself is not escaped
    assert ":grey_question: **Not tested** against base: no evaluator has the 10 judged pairs" in text
    assert ":white_check_mark:" not in text
    # without the gate, the comparison is shown and said to have tested nothing, exit 0
    code, out, err = run(
        capsys, tmp_path / "other.json", "--out", tmp_path / "o2", "--baseline", baseline / "base"
    )
    assert code == 0 and "Warning: Different documents." in err
    assert "Not tested against base: no evaluator has the 10 judged pairs" in err
