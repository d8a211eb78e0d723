"""``spans invoke``, ``spans eval`` and ``spans serve`` run a handler through the one runner (issue 29, item 7).

A handler holding the GIL still times out (its process group is killed), ``os._exit`` / ``sys.exit`` are
``EvaluatorCrashed`` (exit 1), processes it starts are gone when the call ends, it cannot patch evalkit's
response check, and what it prints is kept apart from its response (bounded, the cut said).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.spans.lambdas.evaluator_workers import EvaluatorWorkers

DATA = Path(__file__).resolve().parent / "data"
EVENT = DATA / "agentcore_sdk_split_format_event.json"
MARKET = Path(__file__).resolve().parents[1] / "data" / "spans" / "market.jsonl"

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def handler(tmp_path: Path, body: str, name: str = "probe") -> Path:
    """A project whose evaluator ``name`` runs ``body``; ``PIDS`` is a file it may write process ids to."""
    custom = tmp_path / "custom-evaluators"
    path = custom / name / f"{name}.py"
    path.parent.mkdir(parents=True)
    source = "import os, subprocess, sys, time\nPIDS = os.environ['EVALKIT_TEST_PIDS']\n"
    source += "EVALUATION_LEVEL = 'SESSION'\n\ndef lambda_handler(event, context):\n"
    path.write_text(source + textwrap.indent(textwrap.dedent(body), "    ") + "\n")
    return custom


def invoke(custom: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", "spans", "invoke", "probe", "--custom-dir", str(custom),
         "--event", str(EVENT), *extra],
        capture_output=True, text=True, timeout=120, env={**os.environ, "EVALKIT_TEST_PIDS": str(tmp_path / "pids")},
    )  # fmt: skip


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def group_members(group: int) -> list[int]:
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


def pids(tmp_path: Path) -> list[int]:
    return [int(p) for p in (tmp_path / "pids").read_text().split()]


WRITE_PID = "with open(PIDS, 'a') as f: f.write(f'{os.getpgrp()}\\n')\n"


def test_a_handler_holding_the_gil_times_out_and_its_process_group_is_gone(tmp_path):
    custom = handler(tmp_path, WRITE_PID + "x = 7 ** (10**8)\nreturn {'label': 'PASS'}")
    started = time.monotonic()
    done = invoke(custom, tmp_path, "--timeout", "1")
    assert time.monotonic() - started < 15
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout) == {"errorMessage": "Task timed out after 1.00 seconds"}
    assert "(Timeout)" in done.stderr
    (group,) = pids(tmp_path)
    assert group != os.getpgrp()
    assert group_members(group) == []


@pytest.mark.parametrize(
    ("body", "how"), [("os._exit(0)", "exited with code 0"), ("sys.exit(3)", "exited with code 3")]
)
def test_a_handler_that_exits_is_evaluator_crashed_and_exit_1(tmp_path, body, how):
    custom = handler(tmp_path, body)
    done = invoke(custom, tmp_path)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["errorType"] == "Runtime.ExitError"
    assert "Error: probe.lambda_handler gave no valid evaluator response (EvaluatorCrashed): " in done.stderr
    assert f"evaluator 'probe' crashed: its process {how} during the call" in done.stderr


SPAWNS = """
for new_session in (False, True):
    child = subprocess.Popen(["sleep", "1000"], start_new_session=new_session)
    with open(PIDS, "a") as f:
        f.write(f"{child.pid}\\n")
return {"label": "PASS", "value": 1.0}
"""


def test_processes_a_handler_starts_are_gone_when_invoke_returns(tmp_path):
    custom = handler(tmp_path, SPAWNS)
    done = invoke(custom, tmp_path)
    assert done.returncode == 0, done.stderr
    started = pids(tmp_path)
    assert len(started) == 2
    deadline = time.monotonic() + 5  # killed before invoke returned; init may take a moment to reap them
    while any(alive(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in started)


def test_processes_a_handler_starts_are_gone_when_each_call_of_spans_eval_ends(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_TEST_PIDS", str(tmp_path / "pids"))
    custom = handler(tmp_path, SPAWNS)
    with EvaluatorWorkers() as workers:
        results = spans.evaluate_spans(MARKET, ["probe"], custom_dir=custom, workers=workers)
        assert [r.get("label") for r in results] == ["PASS", "PASS"]
        started = pids(tmp_path)
        assert len(started) == 4
        deadline = time.monotonic() + 5
        while any(alive(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(p) for p in started)  # the worker itself is still there, warm


PATCHES = """
import evalkit.spans.lambdas.invocation as invocation
invocation.read_response = lambda out, handler="": {"label": "PASS"}
invocation.response_fields = lambda out, function="": {"label": "PASS"}
invocation.data_fields = lambda data, function="": {"label": "PASS"}
return {"label": "FAIL", "value": 7.5}
"""


def test_a_handler_cannot_patch_the_response_check(tmp_path, monkeypatch):
    custom = handler(tmp_path, PATCHES)
    done = invoke(custom, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "(InvalidEvaluatorResponse): 'value' 7.5 is outside 0.0-1.0" in done.stderr
    monkeypatch.setenv("EVALKIT_TEST_PIDS", str(tmp_path / "pids"))
    results = spans.evaluate_spans(MARKET, ["probe"], custom_dir=custom)
    assert [r.get("errorCode") for r in results] == ["InvalidEvaluatorResponse"] * 2


def test_four_megabytes_printed_leave_the_response_intact_and_the_logs_cut(tmp_path):
    custom = handler(tmp_path, "print('start'); print('y' * (4 * 1024 * 1024)); print('the end')\n"
                     "return {'label': 'PASS', 'value': 1.0, 'explanation': 'fine'}")  # fmt: skip
    done = invoke(custom, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"label": "PASS", "value": 1.0, "explanation": "fine"}
    assert "--- what probe printed (standard output and standard error) ---" in done.stderr
    assert "bytes of output cut; the last 65,536 bytes follow]" in done.stderr
    assert "the end" in done.stderr and "start" not in done.stderr
    assert len(done.stderr) < 70_000
    assert done.stderr.rstrip().endswith(
        "probe.lambda_handler: valid AgentCore evaluator response: label 'PASS', value 1"
    )
