"""End to end: `evalkit run` / `validate` / `new` as a user runs them, and the results files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import evalkit
from evalkit.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"


def evalkit_cmd(*args, cwd=None, env=None):
    """Run the real CLI in a subprocess; returns the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)],
        cwd=cwd or REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    proc = evalkit_cmd("run", DEMO, "--out", out)
    return proc, out


def test_demo_run_completes_and_writes_three_files(demo_run):
    proc, out = demo_run
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for name in ("results.json", "results.csv", "report.html"):
        assert (out / name).stat().st_size > 0
    assert f"Report:  {out / 'report.html'}" in proc.stdout


def test_demo_results_validate_against_the_upstream_schema(demo_run, upstream_schema):
    _, out = demo_run
    document = json.loads((out / "results.json").read_text())
    jsonschema.Draft202012Validator(upstream_schema).validate(document)
    evalkit.validate(document, "results.json")  # and evalkit's own


def test_demo_statuses_and_scores(demo_run):
    _, out = demo_run
    items = json.loads((out / "results.json").read_text())["items"]
    statuses = [item.get("status") for item in items[:9]]
    assert statuses == ["pass", "fail", "fail", "pass", "pass", "fail", "fail", "partial", "error"]
    assert items[0]["scores"]["citations"]["citations"][0]["source"].endswith("Leave-Policy.docx")
    assert items[2]["scores"]["exactMatch"] == {
        "match": False,
        "result": "fail",
        "reason": items[2]["scores"]["exactMatch"]["reason"],
    }
    assert items[3]["scores"]["exactMatch"]["match"] is True
    assert items[5]["scores"]["retrievalQuery"]["diagnostic_code"] == "mixed_term_failure"
    assert items[5]["scores"]["retrievalResult"]["score"] == 0.33
    assert items[6]["scores"]["forbidden_terms"] == {
        "forbidden_terms": 0.0, "result": "fail", "threshold": 1, "reason": "Found forbidden term(s): guarantee"
    }  # fmt: skip
    assert items[7]["error"] == {
        "code": "evaluatorsFailed",
        "message": "Agent response obtained. 2 of 4 evaluators failed to run.",
    }
    assert "ExactMatch needs 'expected_response'" in items[7]["scores"]["exactMatch"]["error"]
    assert items[7]["scores"]["keyword_coverage"]["error"].startswith(
        "Evaluator failed: no keywords configured"
    )
    # no agent was asked: not agentRequestFailed, but upstream's code for an item that could not be scored
    assert items[8]["error"]["code"] == "evaluationCrashed" and "scores" in items[8]
    assert items[8]["error"]["message"].startswith(
        "No response: the document records no 'response' for this item"
    )
    thread = items[9]
    assert thread["summary"] == {
        "turns_total": 3, "turns_passed": 2, "turns_failed": 1, "turns_partial": 0, "turns_errored": 0,
        "overall_status": "fail",
    }  # fmt: skip
    assert thread["tags"] == ["onboarding", "multi-turn"] and thread["conversation_id"] == "demo-onboarding-1"


def test_recorded_citations_survive_the_citations_evaluator(demo_run):
    """The Citations evaluator's output key is also an input column: its scores go to citations_score."""
    _, out = demo_run
    written = json.loads((out / "results.json").read_text())["items"]
    source = json.loads(DEMO.read_text())["items"]
    for before, after in zip(source, written):
        assert after.get("citations") == before.get("citations")
    scored = evalkit.evaluate(evalkit.load(DEMO), custom_dir=REPO / "custom-evaluators")
    assert scored.loc[0, "citations"][0]["index"] == 1 and scored.loc[0, "citations_score"] == 1


def test_demo_csv_has_custom_evaluators_under_their_folder_name(demo_run):
    import pandas as pd

    _, out = demo_run
    table = pd.read_csv(out / "results.csv")
    assert {"forbidden_terms", "answer_length", "keyword_coverage", "exactMatch", "partialMatch"} <= set(
        table.columns
    )
    assert len(table) == 12


def test_malformed_json_is_exit_2_with_line_and_column(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schemaVersion": "1.6.0",\n "items": [\n  {"prompt": "x",}\n ]\n}')
    proc = evalkit_cmd("run", bad, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert "Error:" in proc.stderr and "line 3, column" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_schema_problems_are_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"schemaVersion": "1.6.0", "items": [{"prompt": "x", "expeceted_response": "y"}]})
    )
    proc = evalkit_cmd("run", bad, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert "items[0]: 'expeceted_response' is not allowed" in proc.stderr


def test_unknown_evaluator_is_exit_2_with_the_seed_text(tmp_path):
    doc = tmp_path / "doc.json"
    doc.write_text(
        json.dumps(
            {
                "schemaVersion": "1.6.0",
                "items": [
                    {
                        "prompt": "x",
                        "response": "y",
                        "evaluators": {"Relevence": {}},
                        "evaluators_mode": "replace",
                    }
                ],
            }
        )
    )
    proc = evalkit_cmd("run", doc, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Error: Unknown evaluator 'Relevence'" in proc.stderr
    assert "Did you mean the built-in evaluator 'Relevance'?" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_llm_evaluator_without_a_judge_is_exit_3_before_any_work(tmp_path, reference):
    starter = reference / "m365-copilot-eval/samples/starter.json"
    env = {k: "" for k in ("AZURE_AI_OPENAI_ENDPOINT", "AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL")}
    proc = evalkit_cmd("run", starter, "--out", tmp_path / "out", cwd=tmp_path, env=env)
    assert proc.returncode == 3
    assert "Relevance, Coherence" in proc.stderr and "AZURE_AI_OPENAI_ENDPOINT" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_fail_under_gate(tmp_path):
    assert (
        cli(
            [
                "run",
                str(DEMO),
                "--out",
                str(tmp_path / "a"),
                "--fail-under",
                "0.3",
                "--custom-dir",
                str(REPO / "custom-evaluators"),
            ]
        )
        == 0
    )
    assert (
        cli(
            [
                "run",
                str(DEMO),
                "--out",
                str(tmp_path / "b"),
                "--fail-under",
                "90%",
                "--custom-dir",
                str(REPO / "custom-evaluators"),
            ]
        )
        == 1
    )


def test_fail_under_rejects_a_bad_rate(capsys):
    with pytest.raises(SystemExit) as info:
        cli(["run", str(DEMO), "--fail-under", "1.5"])
    assert info.value.code == 2
    assert "not a rate" in capsys.readouterr().err


def test_debug_log_shows_discovery_and_timings(tmp_path):
    proc = evalkit_cmd("run", DEMO, "--out", tmp_path, "--log-level", "debug")
    assert proc.returncode == 0
    assert "custom evaluator 'forbidden_terms'" in proc.stderr
    assert "evaluator PartialMatch:" in proc.stderr and " s" in proc.stderr


def test_new_scaffolds_a_working_code_only_evaluator(tmp_path, monkeypatch):
    monkeypatch.chdir(
        tmp_path
    )  # restored after the test: a later test in this worker finds no custom-evaluators here
    assert cli(["new", "word_limit"]) == 0
    assert (tmp_path / "custom-evaluators/word_limit/word_limit.py").is_file()
    doc = {"schemaVersion": "1.7.0", "default_evaluators": {}, "items": [
        {"prompt": "p", "response": "short answer", "evaluators": {"word_limit": {"options": {"max_words": 5}}}},
        {"prompt": "p", "response": "one two three four five six", "evaluators": {"word_limit": {"options": {"max_words": 5}}}},
    ]}  # fmt: skip
    scored = evalkit.evaluate(evalkit.load(doc))
    assert scored["word_limit_result"].tolist() == ["pass", "fail"]


def test_new_scaffolds_an_llm_judge_pair(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli(["new", "tone_check", "--llm"]) == 0
    home = tmp_path / "custom-evaluators/tone_check"
    assert (home / "tone_check.prompty").read_text().count("{{user_prompt}}") == 1
    assert "load_flow" in (home / "tone_check.py").read_text()


@pytest.mark.parametrize("name", ["exactmatch", "1bad", "Relevance"])
def test_new_refuses_bad_names(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    assert cli(["new", name]) == 2
    assert capsys.readouterr().err.startswith("Error:")


def test_results_are_replaced_atomically(tmp_path, monkeypatch):
    scored = evalkit.evaluate(evalkit.load(DEMO), custom_dir=REPO / "custom-evaluators")
    paths = evalkit.save_results(scored, tmp_path)
    before = paths["html"].read_bytes()

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("evalkit.reporting.inline.json.dumps", broken)
    with pytest.raises(RuntimeError):
        evalkit.save_results(scored, tmp_path)
    assert paths["html"].read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _big_table(n=25_000):
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": [
        {"prompt": f"q{i}", "expected_response": "a", "response": "a" if i % 2 else "b"} for i in range(n)]}  # fmt: skip
    return evalkit.evaluate(evalkit.load(doc), progress=False)


def test_parallel_save_writes_the_same_files(tmp_path):
    scored = _big_table()
    one = evalkit.save_results(scored, tmp_path / "one")
    two = evalkit.save_results(scored, tmp_path / "two", parallel=True)
    assert one["csv"].read_bytes() == two["csv"].read_bytes()
    for kind in ("json", "html"):
        assert len(one[kind].read_bytes()) == len(two[kind].read_bytes())  # only evaluatedAt may differ


FALLBACK = """
import os, sys
import evalkit
import evalkit.reporting.run_files as results

doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": [
    {"prompt": f"q{i}", "expected_response": "a", "response": "a" if i % 2 else "b"} for i in range(25_000)]}
scored = evalkit.evaluate(evalkit.load(doc), progress=False)
parent, marks = os.getpid(), sys.argv[2]
real = results.write_html

def write_html(*args, **kwargs):
    with open(marks, "a") as out:
        out.write("child\\n" if os.getpid() != parent else "parent\\n")
    if os.getpid() != parent:
        raise OSError("child cannot write")
    real(*args, **kwargs)

results.write_html = write_html
paths = evalkit.save_results(scored, sys.argv[1] + "/parallel", parallel=True)
alone = evalkit.save_results(scored, sys.argv[1] + "/alone")
print(paths["csv"].read_bytes() == alone["csv"].read_bytes(), paths["html"].stat().st_size > 0)
"""


def test_parallel_save_falls_back_when_the_child_fails(tmp_path):
    """The forked writer fails on the page: the parent writes it, and every part of results.csv. In a fresh
    interpreter, so that the fork really happens (a test process with threads left behind does not fork)."""
    marks = tmp_path / "writes.txt"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", FALLBACK, str(tmp_path), str(marks)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]  # results.csv whole and the same; the page written
    assert marks.read_text().split() == ["child", "parent", "parent"]  # the child failed, the parent wrote it
