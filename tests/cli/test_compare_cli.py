"""``evalkit compare`` in the terminal: counts with the right plural, and the page's warnings on stderr. Runs made
by the real ``evalkit run`` of two versions of a small document; exact output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ITEMS = [
    {"prompt": "Capital of France?", "response": "Paris", "expected_response": "Paris"},
    {"prompt": "Two plus two?", "response": "4", "expected_response": "4"},
    {"prompt": "Largest planet?", "response": "Jupiter", "expected_response": "Jupiter"},
]


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
    )


def make_run(tmp_path: Path, name: str, items: list[dict]) -> str:
    doc = {"schemaVersion": "1.6.0", "metadata": {"name": name}, "default_evaluators": {"ExactMatch": {}}}
    (tmp_path / f"{name}.json").write_text(json.dumps({**doc, "items": items}))
    done = cli(tmp_path, "run", f"{name}.json", "--out", name)
    assert done.returncode == 0, done.stderr
    return name


def test_one_regressed_row_and_the_warnings_of_the_page(tmp_path):
    a = make_run(tmp_path, "v1", ITEMS[:2])
    b = make_run(tmp_path, "v2", [{**ITEMS[0], "response": "Lyon"}, ITEMS[1]])
    done = cli(tmp_path, "compare", a, b)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[2] == "2 paired rows; 0 unpaired (0 only in A, 0 only in B, 0 prompt changed)"
    assert lines[-2] == "1 row regressed, 0 improved."
    warnings = done.stderr.splitlines()
    assert len(warnings) == 2, done.stderr
    assert warnings[0].startswith("Warning: Different documents. v1 ran v1 (sha256 ")
    assert warnings[0].endswith(
        "Rows are paired by position and prompt, so only the rows whose prompts match are compared, and their "
        "expected answers or evaluators may differ: read the deltas with care."
    )
    assert warnings[1] == (
        "Warning: Too few pairs for a test. 2 paired rows (at least 10 are needed): no change is marked significant."
    )
    same = cli(tmp_path, "compare", a, a)
    assert same.stderr.splitlines() == [
        "Warning: Too few pairs for a test. 2 paired rows (at least 10 are needed): no change is marked significant."
    ]


def test_one_paired_row_of_few_shared_rows(tmp_path):
    a = make_run(tmp_path, "v1", ITEMS)
    b = make_run(tmp_path, "v2", ITEMS[:1])
    done = cli(tmp_path, "compare", a, b)
    assert (
        done.stdout.splitlines()[2] == "1 paired row; 2 unpaired (2 only in A, 0 only in B, 0 prompt changed)"
    )
    assert done.stdout.splitlines()[-2] == "0 rows regressed, 0 improved."
    warnings = done.stderr.splitlines()
    assert warnings[1:] == [
        "Warning: Few shared rows. Only 1 of 3 rows is paired (33%); v1 has 3 rows, v2 1. Every number below is "
        "about the paired rows only.",
        "Warning: Too few pairs for a test. 1 paired row (at least 10 are needed): no change is marked significant.",
    ]
