"""Run history: evalkit.runs(DIR) and `evalkit runs DIR` list the runs saved under a folder."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.analysis.history import FIXED_COLUMNS
from evalkit.errors import DocumentError

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Two runs of the demo under runs/: the recorded answers, then a copy whose item 2 answer was fixed."""
    root = tmp_path_factory.mktemp("history")
    changed = json.loads((REPO / "data" / "demo.json").read_text("utf-8"))
    changed["items"][2]["response"] = "Form HR-12"
    (root / "changed.json").write_text(json.dumps(changed), "utf-8")
    assert run_cli("run", "data/demo.json", "--out", str(root / "runs" / "first")).returncode in (0, 1)
    done = run_cli("run", str(root / "changed.json"), "--out", str(root / "runs" / "second"))
    assert done.returncode in (0, 1), done.stderr
    return root / "runs"


def test_runs_lists_every_run_oldest_first(history):
    table = evalkit.runs(history)
    assert list(table["run"]) == ["first", "second"]
    assert list(table.columns[: len(FIXED_COLUMNS)]) == list(FIXED_COLUMNS)
    assert table["time"].is_monotonic_increasing and str(table["time"].dtype).startswith("datetime64")
    assert list(table["rows"]) == [12, 12]
    assert table.loc[0, "document"] == "Contoso HR assistant: recorded answers"
    sha = table["document_sha256"].tolist()
    assert all(len(s) == 64 for s in sha) and sha[0] != sha[1]  # the second document differs
    assert set(table["evalkit_version"]) == {evalkit.__version__}
    # the numbers are evalkit.summary's: ExactMatch went from 1 of 2 judged to 2 of 2
    first = evalkit.summary(evalkit.read_run(history / "first"))
    assert table.loc[0, "pass_rate:ExactMatch"] == pytest.approx(first.loc["ExactMatch", "pass_rate"])
    assert table.loc[1, "pass_rate:ExactMatch"] == 1.0
    assert table.loc[0, "pass_rate"] == pytest.approx(5 / 12)
    assert list(table["prompt_tokens"]) == [0, 0] and table["judge_model"].isna().all()


def test_the_run_being_written_is_listed_from_memory(history):
    current = evalkit.read_run(history / "first")
    table = evalkit.runs(history, current=current.iloc[:6], current_dir=history / "first")
    # the folder's older results.json is replaced by the table in memory (6 rows), listed last
    assert list(table["run"]) == ["second", "first"] and list(table["rows"]) == [12, 6]


def test_runs_of_a_folder_without_runs_is_a_user_mistake(tmp_path):
    with pytest.raises(DocumentError, match="no run found"):
        evalkit.runs(tmp_path)
    with pytest.raises(DocumentError, match="not a folder"):
        evalkit.runs(tmp_path / "missing")
    done = run_cli("runs", str(tmp_path))
    assert done.returncode == 2 and done.stderr.startswith("Error: ") and "no run found" in done.stderr


def test_runs_command_prints_the_table(history, tmp_path):
    out = tmp_path / "runs.csv"
    done = run_cli("runs", str(history), "--csv", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "ExactMatch" in lines[0] and "pass_rate" in lines[0]
    assert lines[1].split()[2] == "first" and "41.7%" in lines[1] and "100.0%" in lines[2]
    saved = pd.read_csv(out)
    assert len(saved) == 2 and len(saved.loc[0, "document_sha256"]) == 64
    assert not math.isnan(saved.loc[1, "pass_rate:ExactMatch"])


def _span_run(folder: Path) -> Path:
    """A results.json as 'evalkit spans eval --out' writes it: two results, one passing, one erroring."""
    folder.mkdir(parents=True)
    entries = [
        {
            "evaluatorName": "pii_leak",
            "evaluatorId": "pii_leak",
            "context": {"spanContext": {"sessionId": "s1"}},
            "label": "CLEAN",
            "value": 1.0,
        },
        {
            "evaluatorName": "pii_leak",
            "evaluatorId": "pii_leak",
            "context": {"spanContext": {"sessionId": "s2"}},
            "errorCode": "Timeout",
            "errorMessage": "took too long",
        },
    ]
    data = {"evaluationResults": entries, "passingLabels": {"pii_leak": ["CLEAN"]}}
    (folder / "results.json").write_text(json.dumps(data), "utf-8")
    return folder


def test_span_evaluations_are_listed_apart_not_read_as_runs(history, tmp_path):
    """The demo writes span evaluations next to document runs: runs() lists them apart, the command prints
    them under their own heading, and nothing ends in a traceback (it was KeyError: 'items')."""
    import shutil

    root = tmp_path / "results"
    shutil.copytree(history / "first", root / "demo")
    _span_run(root / "agentcore-spans")
    table = evalkit.runs(root)
    assert list(table["run"]) == ["demo"]
    assert table.attrs["span_runs"] == [
        {"run": "agentcore-spans", "results": 2, "passed": 1, "failed": 0, "errors": 1, "pass_rate": 0.5}
    ]
    done = run_cli("runs", str(root))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "skipped" not in done.stderr
    lines = done.stdout.splitlines()
    heading = lines.index("Span evaluations (evalkit spans eval):")
    assert lines[heading + 1].split() == ["run", "results", "pass_rate", "errors"]
    assert lines[heading + 2].split() == ["agentcore-spans", "2", "50.0%", "1"]
    # a folder of span evaluations only holds no run of a document: a user mistake, named
    done = run_cli("runs", str(root / "agentcore-spans"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        done.stderr.startswith("Error: ") and "only span evaluations of 'evalkit spans eval'" in done.stderr
    )
    # the report's trend of pass rates reads the same folder
    done = run_cli("report", str(root / "demo"), "--history", str(root), "--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr


def test_a_results_json_that_is_no_run_is_skipped_with_a_warning(history, tmp_path):
    import shutil

    root = tmp_path / "results"
    shutil.copytree(history / "first", root / "demo")
    (root / "other").mkdir()
    (root / "other" / "results.json").write_text('{"something": "else"}', "utf-8")
    with pytest.warns(UserWarning, match="results.json: skipped, not a readable run"):
        table = evalkit.runs(root)
    assert list(table["run"]) == ["demo"] and table.attrs["span_runs"] == []


def test_a_span_evaluation_given_as_a_run_is_named(tmp_path):
    from evalkit.documents.versions import SpanRunError

    folder = _span_run(tmp_path / "agentcore-spans")
    with pytest.raises(SpanRunError) as caught:
        evalkit.read_run(folder)
    assert str(caught.value) == (
        f"{folder / 'results.json'}: the results of 'evalkit spans eval' (span evaluation results), not an eval "
        "document or a run of one; give an eval document, or a folder written by 'evalkit run DOC --out DIR'."
    )
    done = run_cli("run", str(folder / "results.json"), "--out", str(tmp_path / "out"))
    assert (
        done.returncode == 2 and done.stderr.startswith("Error: ") and "'evalkit spans eval'" in done.stderr
    )
