"""Custom code-only evaluators run through the one runner (issue 29, item 7): what an evaluator starts is gone
when ``evalkit run`` ends, and a row that holds the GIL is stopped at the limit with its process group."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SPAWNER = """
import os, subprocess


class Spawner:
    def __init__(self, *, threshold, options=None, **_):
        pass

    def __call__(self, *, prompt="", **_):
        with open(os.environ["EVALKIT_TEST_PIDS"], "a") as f:
            f.write(f"group {os.getpgrp()}\\n")
        if prompt == "spawn":
            for new_session in (False, True):
                child = subprocess.Popen(["sleep", "1000"], start_new_session=new_session)
                with open(os.environ["EVALKIT_TEST_PIDS"], "a") as f:
                    f.write(f"child {child.pid}\\n")
        if prompt == "gil":
            7 ** (10**8)
        return {"score": 1, "reason": prompt}
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _group_members(group: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                members.append(int(entry))
    return members


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_evalkit_run_kills_what_an_evaluator_started_and_the_group_of_a_row_holding_the_gil(tmp_path):
    home = tmp_path / "custom-evaluators" / "spawner"
    home.mkdir(parents=True)
    (home / "spawner.py").write_text(textwrap.dedent(SPAWNER))
    items = [{"prompt": p, "response": "r"} for p in ("spawn", "gil", "after")]
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"spawner": {}}, "items": items}
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    pids = tmp_path / "pids"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", "out", "--evaluator-timeout", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ, "EVALKIT_TEST_PIDS": str(pids)},
    )  # fmt: skip
    assert time.monotonic() - started < 30
    assert proc.returncode == 0, proc.stderr
    scores = [
        item["scores"]["spawner"] for item in json.loads((tmp_path / "out/results.json").read_text())["items"]
    ]
    assert [s["result"] for s in scores] == ["pass", "error", "pass"]
    assert "ran longer than the limit of 1 s" in scores[1]["error"]
    lines = [line.split() for line in pids.read_text().splitlines()]
    children = [int(value) for kind, value in lines if kind == "child"]
    groups = {int(value) for kind, value in lines if kind == "group"}
    # the GIL row's worker was killed and replaced; the new one ran the spawning row of that range again
    assert len(children) == 4 and len(groups) == 2
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in children)
    assert all(_group_members(group) == [] for group in groups)
