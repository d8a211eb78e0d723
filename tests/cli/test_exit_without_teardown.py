"""The command ends without the interpreter's teardown (issue 20: freeing a large run's objects one by one
cost about 0.3 s), but exactly as a normal exit otherwise: atexit handlers run, buffered output is flushed,
the exit code is the command's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = (
    "import atexit, sys\n"
    "atexit.register(print, 'atexit ran')\n"
    "sys.argv = ['evalkit', *sys.argv[1:]]\n"
    "from evalkit.cli import main\n"
    "main()\n"
    "print('not reached: the process ended in main')\n"
)


def _run(tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    items = [{"prompt": f"q{i}", "expected_response": "a", "response": "a" if i else "b"} for i in range(3)]
    doc = tmp_path / "doc.json"
    doc.write_text(
        json.dumps({"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": items})
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-c", SCRIPT, "run", str(doc), "--out", str(tmp_path / "out"), *options]
    return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_output_and_atexit_handlers_survive(tmp_path):
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "3 rows: 2 pass, 1 fail" in done.stdout
    assert done.stdout.rstrip().endswith("atexit ran")
    assert "not reached" not in done.stdout
    assert (tmp_path / "out" / "results.json").is_file()


def test_the_exit_code_is_the_commands(tmp_path):
    done = _run(tmp_path, "--fail-under", "100%")
    assert done.returncode == 1
    assert "Gate failed" in done.stderr and "atexit ran" in done.stdout
