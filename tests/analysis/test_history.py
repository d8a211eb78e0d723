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
