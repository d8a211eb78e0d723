"""``evalkit run --evaluate-only`` (upstream 1.10): score the recorded responses without calling an agent."""

from __future__ import annotations

import json

from evalkit.cli import main as cli

DOC = {
    "schemaVersion": "1.11.0",
    "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}},
    "items": [
        {"prompt": "Capital of France?", "expected_response": "Paris", "response": "Paris"},
        {"prompt": "2 + 2?", "expected_response": "4", "response": "five"},
        {"prompt": "Not answered yet", "expected_response": "x"},
    ],
}

AGENT = """
from pathlib import Path

def answer(prompt, history):
    Path(__file__).with_name("called").write_text(prompt)
    return "Paris"
"""


def _items(out) -> list[dict]:
    return json.loads((out / "results.json").read_text())["items"]


def test_evaluate_only_scores_the_recorded_responses(tmp_path, capsys):
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(DOC))
    assert cli(["run", str(doc), "--evaluate-only", "--out", str(tmp_path / "only")]) == 0
    assert cli(["run", str(doc), "--out", str(tmp_path / "plain")]) == 0
    only, plain = _items(tmp_path / "only"), _items(tmp_path / "plain")
    assert [i["status"] for i in only] == ["pass", "fail", "error"]
    assert [i.get("scores") for i in only] == [i.get("scores") for i in plain]
    assert [i["response"] for i in only[:2]] == ["Paris", "five"]


def test_evaluate_only_with_an_agent_is_an_error(tmp_path, capsys):
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(DOC))
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    code = cli(
        ["run", str(doc), "--evaluate-only", "--agent", f"{agent}:answer", "--out", str(tmp_path / "o")]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: --evaluate-only") and "--agent" in err and str(doc) in err
    assert not (tmp_path / "called").exists()  # the agent was never called
    assert not (tmp_path / "o").exists()  # nothing was written
