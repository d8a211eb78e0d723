"""An evaluator name of 300 characters is refused in one line, before evalkit looks for a file under it (the
name is longer than a file name may be: looking raised ``OSError: File name too long`` with a traceback), by
every ``spans`` command that takes a span evaluator's name (issue 29, item 8)."""

from __future__ import annotations

import pytest

from evalkit.cli import main

LONG = "a" * 300
SPANS = "data/agentcore_spans.jsonl"
EXPECTED = (
    f"Error: span evaluator name {LONG[:59]!r}…(300 characters) is not valid: AgentCore names start with a "
    "letter and hold at most 48 letters, digits and underscores\n"
)


@pytest.mark.parametrize(
    "args",
    [
        ["spans", "eval", SPANS, "--evaluator", LONG, "--out", "r"],
        ["spans", "eval", SPANS, "--evaluator", f"{LONG}:TRACE", "--out", "r"],
        ["spans", "invoke", LONG, "--event", "event.json"],
    ],
    ids=["eval", "eval with a level", "invoke"],
)
def test_a_300_character_name_is_one_error_line(args, tmp_path, monkeypatch, capsys):
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "custom-evaluators").mkdir()  # a project folder: the name is looked up in it
    event = repo / "tests" / "spans" / "data" / "agentcore_sdk_decorator_event.json"
    (tmp_path / "event.json").write_bytes(event.read_bytes())
    args = [str(repo / a) if a == SPANS else a for a in args]
    assert main(args) == 2
    assert capsys.readouterr().err == EXPECTED
