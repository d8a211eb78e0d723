"""Nothing a custom evaluator does may lose other results or fake success (issue 10, item 2).

Each case runs the real command line (``python -m evalkit run DOC``) in a subprocess, once the way the command
line runs by default (a forked worker process per code-only evaluator) and once the way a process with other
threads runs (a watched thread): the run ends, writes the other evaluator's results, turns the offending row
into an error result that says what happened, and ``--fail-under`` still fails the gate.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

RUDE = """
import os
import sys
import threading
import time


class Rude:
    def __init__(self, *, threshold, options=None, **_):
        pass

    def __call__(self, *, prompt="", **_):
        if prompt == "base":
            raise Escape("not an Exception")
        if prompt == "kbd":
            raise KeyboardInterrupt
        if prompt == "exit":
            sys.exit(3)
        if prompt == "exit0":
            os._exit(0)
        if prompt == "thread":
            threading.Thread(target=threading.Event().wait, name="stray").start()
        if prompt == "hang":
            time.sleep(3600)
        return {"score": 1, "reason": prompt}


class Escape(BaseException):  # after Rude: the module's first class is the evaluator
    pass
"""

#: Runs the command line with one extra (daemon) thread running, as in a run with judges or in a notebook:
#: forking is then unsafe and code-only evaluators run in a watched thread.
THREADED = (
    "import sys, threading; threading.Thread(target=threading.Event().wait, daemon=True).start(); "
    "from evalkit.cli import main; sys.exit(main())"
)


def _project(tmp_path: Path, prompts: list[str], module: str = RUDE) -> None:
    home = tmp_path / "custom-evaluators" / "rude"
    home.mkdir(parents=True)
    (home / "rude.py").write_text(textwrap.dedent(module))
    items = [{"prompt": p, "response": "same", "expected_response": "same"} for p in prompts]
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"rude": {}, "ExactMatch": {}}, "items": items}
    (tmp_path / "doc.json").write_text(json.dumps(doc))


def _command(way: str) -> list[str]:
    return [sys.executable, "-m", "evalkit"] if way == "process" else [sys.executable, "-c", THREADED]


def _run(tmp_path: Path, way: str, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess:
    args = [*_command(way), "run", "doc.json", "--out", "out", "--fail-under", "1.0", *extra]
    return subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=timeout)


def _scores(tmp_path: Path) -> list[dict]:
    items = json.loads((tmp_path / "out" / "results.json").read_text())["items"]
    return [item["scores"] for item in items]


WAYS = ["process", "thread"]


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(
    "bad, message",
    [
        ("base", "Escape: not an Exception"),
        ("kbd", "KeyboardInterrupt"),
        ("exit", "SystemExit: 3"),
        ("exit0", "evaluator process exited with code 0 while scoring row 3"),
    ],
)
def test_an_escaping_evaluator_costs_its_row_only(tmp_path, way, bad, message):
    if bad == "exit0" and way == "thread":  # no process to exit: os._exit raises in evalkit's worker threads
        message = "evaluator 'rude' called os._exit(0) on this row"
    _project(tmp_path, ["a", "b", bad, "c"])
    proc = _run(tmp_path, way)
    assert proc.returncode == 1, proc.stderr  # the gate: 3 of 4 items pass
    assert "Gate failed" in proc.stderr
    scores = _scores(tmp_path)
    assert [s["exactMatch"]["result"] for s in scores] == ["pass"] * 4
    assert [s["rude"]["result"] for s in scores] == ["pass", "pass", "error", "pass"]
    assert message in scores[2]["rude"]["error"]
    assert "rude" in scores[2]["rude"]["error"] or bad != "exit0"


@pytest.mark.parametrize("way", WAYS)
def test_a_stray_non_daemon_thread_does_not_keep_the_run_alive(tmp_path, way):
    _project(tmp_path, ["a", "thread", "b"])
    started = time.monotonic()
    proc = _run(tmp_path, way, timeout=60)
    assert time.monotonic() - started < 60
    assert proc.returncode == 0, proc.stderr
    assert [s["rude"]["result"] for s in _scores(tmp_path)] == ["pass"] * 3


@pytest.mark.parametrize("way", WAYS)
def test_a_non_daemon_thread_started_by_the_constructor_does_not_keep_the_run_alive(tmp_path, way):
    """The constructor runs in the evalkit process itself: the command ends once its results are written."""
    starts_a_thread = RUDE.replace(
        "        pass\n", '        threading.Thread(target=threading.Event().wait, name="stray").start()\n', 1
    )
    _project(tmp_path, ["a", "b"], module=starts_a_thread)
    proc = _run(tmp_path, way, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [s["rude"]["result"] for s in _scores(tmp_path)] == ["pass", "pass"]
    assert "thread 'stray'" in proc.stderr and "did not wait for it" in proc.stderr


def test_a_constructor_raising_a_base_exception_is_a_load_error_for_its_rows(tmp_path):
    raising = RUDE.replace("        pass\n", '        raise Escape("no constructor")\n', 1)
    _project(tmp_path, ["a", "b"], module=raising)
    proc = _run(tmp_path, "process")
    assert proc.returncode == 1, proc.stderr
    scores = _scores(tmp_path)
    assert [s["exactMatch"]["result"] for s in scores] == ["pass", "pass"]
    assert [s["rude"]["code"] for s in scores] == ["evaluatorLoadError"] * 2
    assert "constructor failed: Escape: no constructor" in scores[0]["rude"]["error"]


@pytest.mark.parametrize("way", WAYS)
def test_a_module_that_hangs_at_import_is_an_error_result(tmp_path, way):
    _project(tmp_path, ["a", "b"], module="import time\ntime.sleep(3600)\n" + RUDE)
    started = time.monotonic()
    proc = _run(tmp_path, way, "--evaluator-timeout", "1", timeout=60)
    assert time.monotonic() - started < 60
    assert proc.returncode == 1, proc.stderr
    scores = _scores(tmp_path)
    assert [s["exactMatch"]["result"] for s in scores] == ["pass", "pass"]
    assert [s["rude"]["result"] for s in scores] == ["error", "error"]
    error = scores[0]["rude"]["error"]
    assert "'rude'" in error and "did not finish importing within 1 s" in error


def _wait_for_worker(proc: subprocess.Popen, way: str) -> None:
    """Until the evaluator is busy on the hanging row (its worker process started, or a moment passed).

    The worker is the child that stays: the command's first child reads the document (``load_ahead``) and is
    gone within milliseconds for this document, the worker hangs on its row."""
    deadline = time.monotonic() + 60
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    first_seen: dict[str, float] = {}
    while time.monotonic() < deadline:
        now = time.monotonic()
        if way == "process" and children.exists():
            alive = children.read_text().split()
            first_seen = {pid: first_seen.get(pid, now) for pid in alive}
            if any(now - seen >= 1.0 for seen in first_seen.values()):
                return
        if way == "thread" and (proc.poll() is not None or now > deadline - 55):
            return
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
@pytest.mark.parametrize("way", WAYS)
def test_a_real_ctrl_c_still_stops_the_run(tmp_path, way):
    _project(tmp_path, ["a", "hang"])
    args = [*_command(way), "run", "doc.json", "--out", "out", "--evaluator-timeout", "600"]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_worker(proc, way)
        os.kill(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "Interrupted" in stderr
    assert not (tmp_path / "out" / "results.json").exists()


def _forks_a_child(*, prompt="", **_):
    """Forks a child that ends with os._exit from this same (worker) thread, as multiprocessing's fork does."""
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    _, status = os.waitpid(pid, 0)
    return {"score": 1, "reason": f"child exit {os.waitstatus_to_exitcode(status)}"}


def test_os_exit_still_ends_a_child_forked_in_a_watched_thread(monkeypatch):
    import pandas as pd

    import evalkit
    from evalkit.evaluators.custom import loading as custom

    monkeypatch.setattr(
        custom, "can_fork", lambda: False
    )  # the watched-thread path, where os._exit is guarded
    df = pd.DataFrame({"prompt": ["a"], "response": ["r"]})
    scored = evalkit.evaluate(df, evaluators={"forks": _forks_a_child}, evaluator_timeout=30, progress=False)
    assert scored["forks_reason"].tolist() == ["child exit 7"]
