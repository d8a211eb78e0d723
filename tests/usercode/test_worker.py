"""The runner's worker (``evalkit.usercode.worker``): answers as JSON data, the limit kept from the parent
(GIL-holding code included), exits and signals as ``EvaluatorCrashed``, nothing a call started left behind,
output kept apart and bounded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.errors import EvaluatorCrashed
from evalkit.usercode.output_tail import LIMIT
from evalkit.usercode.worker import CallTimedOut, Worker

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/proc/self/stat").exists(), reason="Linux with /proc"
)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pids) -> bool:
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(_alive(p) for p in pids)


def _worker(handle) -> Worker:
    return Worker.fork("probe", lambda: handle)


def test_answers_are_json_data_and_output_is_kept_apart():
    def handle(request):
        print("x" * (LIMIT + 1000))
        print("last line")
        return {"echo": request.decode(), "pid": os.getpid(), "group": os.getpgrp()}

    with _worker(handle) as worker:
        answer = worker.call(b"hello", 10)
        logs = worker.logs()
    assert answer["echo"] == "hello"
    assert answer["pid"] == answer["group"] != os.getpgrp()  # the worker leads a process group of its own
    assert logs.text.endswith("last line\n") and len(logs.text) == LIMIT
    assert logs.cut == 1000 + len("\nlast line\n")  # what was printed beyond the limit, from the start
    assert logs.shown().startswith(f"[{logs.cut:,} bytes of output cut; the last {LIMIT:,} bytes follow]\n")


def test_code_holding_the_gil_is_stopped_at_the_limit_with_its_group():
    def handle(request):
        return 7 ** (10**8)

    worker = _worker(handle)
    started = time.monotonic()
    with pytest.raises(CallTimedOut):
        worker.call(b"", 0.3)
    assert time.monotonic() - started < 3
    assert worker.closed and not _alive(worker.pid)


@pytest.mark.parametrize(
    ("ending", "how"),
    [
        (lambda: os._exit(0), "exited with code 0"),
        (lambda: sys.exit(3), "exited with code 3"),
        (lambda: os.kill(os.getpid(), signal.SIGSEGV), "was killed by SIGSEGV"),
    ],
)
def test_a_worker_that_ends_during_a_call_is_evaluator_crashed(ending, how):
    def handle(request):
        ending()
        time.sleep(5)  # a signal may take a moment

    with _worker(handle) as worker:
        with pytest.raises(EvaluatorCrashed) as raised:
            worker.call(b"", 10)
    assert raised.value.how == how
    assert str(raised.value) == (
        f"evaluator 'probe' crashed: its process {how} during the call (os._exit, sys.exit or a signal in the "
        "evaluator's code)"
    )
    assert raised.value.exit_code == 1


def test_processes_a_call_starts_are_killed_when_it_ends():
    def handle(request):
        children = [subprocess.Popen(["sleep", "1000"], start_new_session=s) for s in (False, True)]
        return [child.pid for child in children]

    with _worker(handle) as worker:
        started = worker.call(b"", 10)
        assert _wait_gone(started)  # the worker, warm, is still there
        assert _alive(worker.pid)
        assert len(worker.call(b"", 10)) == 2  # and answers the next call (it reaped the killed ones)


def test_a_load_failure_is_named():
    def load():
        raise ImportError("no module named 'missing'")

    with Worker.fork("probe", load) as worker:
        with pytest.raises(EvaluatorCrashed, match="evaluator 'probe' could not be loaded: no module named"):
            worker.call(b"", 10)
