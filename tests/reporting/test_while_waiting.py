"""save_results runs ``while_waiting`` (the CLI's summary) in this process, once, while the forked writer works."""

from __future__ import annotations

import os

import pytest

import evalkit
from evalkit.reporting.run_files import PARALLEL_ROWS, save_results


@pytest.mark.slow  # 20,000 rows evaluated and written: the fork starts at PARALLEL_ROWS
def test_while_waiting_runs_once_here_and_the_files_are_whole(tmp_path):
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": [
        {"prompt": f"q{i}", "expected_response": "a", "response": "a"} for i in range(PARALLEL_ROWS)]}  # fmt: skip
    scored = evalkit.evaluate(evalkit.load(doc), progress=False)
    calls = []
    paths = save_results(scored, tmp_path, parallel=True, while_waiting=lambda: calls.append(os.getpid()))
    assert calls == [os.getpid()]
    assert paths["csv"].read_text().count("\n") == PARALLEL_ROWS + 1
    assert paths["html"].stat().st_size > 0 and paths["json"].stat().st_size > 0
