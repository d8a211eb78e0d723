"""``evalkit run --evaluator NAME[=JSON]`` adds evaluators to every item; ``--custom-dir`` says it replaces the
project folder. Run as a user runs them (the real CLI in a subprocess); exact output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from evalkit.testing import ModelServer

REPO = Path(__file__).resolve().parents[2]
DOC = {
    "schemaVersion": "1.6.0",
    "default_evaluators": {"ExactMatch": {}},
    "items": [
        {"prompt": "Capital of France?", "response": "paris", "expected_response": "Paris"},
        {"prompt": "Two plus two?", "response": "4", "expected_response": "4"},
    ],
}


def run(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    (tmp_path / "doc.json").write_text(json.dumps(DOC))
    (tmp_path / "custom-evaluators").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", "out", "--no-cache", *args],
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def summary_lines(stdout: str) -> list[str]:
    """The per-evaluator lines (without the first line's timing)."""
    return [line for line in stdout.splitlines() if line.startswith("  ")]


def test_evaluators_are_added_to_every_item_with_their_options(tmp_path):
    plain = run(tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert summary_lines(plain.stdout) == ["  ExactMatch   50.0%  (1 pass, 1 fail, 0 error)"]
    added = run(
        tmp_path, "--evaluator", "PartialMatch", "--evaluator", 'ExactMatch={"case_sensitive": false}'
    )
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("2 rows: 2 pass, 0 fail, 0 partial, 0 error (pass rate 100.0%) in ")
    assert summary_lines(added.stdout) == [
        "  ExactMatch    100.0%  (2 pass, 0 fail, 0 error)",  # its entry replaced the document's
        "  PartialMatch  100.0%  (2 pass, 0 fail, 0 error)",
    ]
    items = json.loads((tmp_path / "out" / "results.json").read_text())["items"]
    assert all("partialMatch" in item["scores"] for item in items), items[0]


def test_an_added_llm_judge_runs_on_the_configured_judge(tmp_path):
    with ModelServer() as server:
        env = {
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_API_KEY": "local",
            "OPENAI_MODEL": "judge",
            "AZURE_AI_OPENAI_ENDPOINT": "",
            "AZURE_OPENAI_ENDPOINT": "",
        }
        done = run(tmp_path, "--evaluator", 'Relevance={"threshold": 1}', env=env)
        asked = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert done.returncode == 0, done.stderr
    assert len(asked) == 2  # one judgment per item
    assert {"Capital of France?" in json.dumps(r["body"]) for r in asked} == {True, False}
    assert summary_lines(done.stdout)[1] == "  Relevance   100.0%  (2 pass, 0 fail, 0 error)"


def test_an_unknown_added_evaluator_names_the_option_and_what_custom_dir_means(tmp_path):
    done = run(tmp_path, "--evaluator", "tone_check", "--custom-dir", "judges")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "Error: Unknown evaluator 'tone_check' (evaluators= / --evaluator): no folder judges/tone_check. Check that "
        "the folder is at <your_project>/custom-evaluators/tone_check/, that the file basenames match the folder "
        "name, and that you run from the project root (or pass --custom-dir). Only judges was searched: "
        "--custom-dir (custom_dir=) replaces the project's custom-evaluators/ folder, it is not added to it.\n"
    )
    default = run(tmp_path, "--evaluator", "tone_check")
    assert (
        default.returncode == 2 and "Only " not in default.stderr
    )  # the project's own folder: nothing to add


def test_evaluator_options_that_are_not_a_json_object_are_refused(tmp_path):
    for given, says in (
        ("ExactMatch={case_sensitive: false}", "the options of --evaluator ExactMatch are not JSON"),
        ("ExactMatch=[1]", "the options of --evaluator ExactMatch must be a JSON object"),
        ("=1", "'=1' names no evaluator"),
    ):
        done = run(tmp_path, "--evaluator", given)
        assert done.returncode == 2 and says in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_help_says_custom_dir_replaces_the_project_folder():
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "it replaces that folder, it is not added to it" in done.stdout
    assert "--evaluator NAME[=JSON]" in done.stdout
