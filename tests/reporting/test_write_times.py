"""``--log-level debug`` prints each file's write time and size (issue 20), also from the forked writers."""

from __future__ import annotations

import json
import logging
import re

import evalkit.reporting.run_files as run_files
from evalkit.cli import main as cli

LINE = r"DEBUG evalkit\.reporting\.run_files: wrote {} \(3 rows, \d+\.\d MB\) in \d+\.\d\d s"


def _document(tmp_path):
    items = [{"prompt": f"q{i}", "expected_response": "a", "response": "a"} for i in range(3)]
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": items}
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    return path


def _run(tmp_path, *options) -> str:
    return cli(["run", str(_document(tmp_path)), "--out", str(tmp_path / "out"), *options])


def test_debug_prints_each_file_write(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    assert _run(tmp_path, "--log-level", "debug") == 0
    err = capfd.readouterr().err
    for name in ("results.json", "results.csv", "report.html"):
        assert re.search(LINE.format(re.escape(name)), err), err


def test_forked_writers_print_their_times_too(tmp_path, monkeypatch, capfd):
    """From PARALLEL_ROWS rows on, the CSV and the page are written by a forked child: its lines show."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_files, "PARALLEL_ROWS", 1)
    forks = []
    real_fork = run_files._fork_writer
    monkeypatch.setattr(run_files, "_fork_writer", lambda write: forks.append(1) or real_fork(write))
    assert _run(tmp_path, "--log-level", "debug") == 0
    err = capfd.readouterr().err
    assert len(forks) == 1
    for name in ("results.json", "results.csv", "report.html"):
        assert len(re.findall(LINE.format(re.escape(name)), err)) == 1, err


def test_no_write_lines_by_default(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    assert _run(tmp_path) == 0
    assert "wrote results" not in capfd.readouterr().err
    logging.getLogger("evalkit").setLevel(logging.WARNING)
