"""A time limit per row for code-only evaluators: a runaway call is one evaluatorTimeout row; the run goes on."""

from __future__ import annotations

import csv
import faulthandler
import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import evalkit


def _slow(*, prompt="", **_):
    if prompt == "spin":
        while True:
            pass
    if prompt == "sleep":
        # an hour, in steps: a thread left behind ends at the next step (a later test may want to fork);
        # the command-line test below sleeps in one call
        for _ in range(36000):
            time.sleep(0.1)
    return {"score": 1, "reason": prompt}


@pytest.fixture(params=["process", "thread"])
def runner(request, monkeypatch):
    """Both ways of running under the limit: a forked worker process (where forking is safe) and a watched
    thread (elsewhere, e.g. in a Jupyter kernel)."""
    from evalkit.evaluators.custom import loading as custom
    from evalkit.evaluators.custom import worker_process

    if request.param == "thread":
        monkeypatch.setattr(custom, "can_fork", lambda: False)
    elif not worker_process.can_fork():
        pytest.skip("forking is not safe here")
    return request.param


def _workers(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"evalkit-{name}" and t.is_alive()]


def test_a_runaway_row_is_one_timeout_and_the_run_goes_on(runner):
    prompts = ["a", "spin", "b", "sleep", "c"]
    df = pd.DataFrame({"prompt": prompts, "response": ["r"] * 5})
    started = time.monotonic()
    scored = evalkit.evaluate(df, evaluators={"slow": _slow}, evaluator_timeout=0.3, progress=False)
    assert time.monotonic() - started < 10
    assert scored["slow_result"].tolist() == ["pass", "error", "pass", "error", "pass"]
    assert scored["slow_reason"].tolist()[::2] == ["a", "b", "c"]
    assert scored["slow_code"].tolist()[1::2] == ["evaluatorTimeout", "evaluatorTimeout"]
    assert "ran longer than the limit of 0.3 s" in scored["slow_error"].tolist()[1]
    assert "--evaluator-timeout" in scored["slow_error"].tolist()[1]
    assert scored["status"].tolist() == ["pass", "partial", "pass", "partial", "pass"]


def test_a_busy_loop_is_really_stopped(monkeypatch):
    from evalkit.evaluators.custom import loading as custom

    monkeypatch.setattr(custom, "can_fork", lambda: False)  # the thread way: stopped by an async exception
    df = pd.DataFrame({"prompt": ["spin", "ok"], "response": ["r", "r"]})
    scored = evalkit.evaluate(df, evaluators={"spinner": _slow}, evaluator_timeout=0.2, progress=False)
    assert scored["spinner_code"].tolist() == ["evaluatorTimeout", None]
    deadline = time.monotonic() + 5
    while _workers("spinner") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _workers("spinner") == []


def test_quick_rows_are_untouched_by_the_limit_and_none_disables_it(runner):
    df = pd.DataFrame({"prompt": [f"p{i}" for i in range(500)], "response": ["r"] * 500})
    limited = evalkit.evaluate(df, evaluators={"fast": _slow}, evaluator_timeout=0.5, progress=False)
    unlimited = evalkit.evaluate(df, evaluators={"fast": _slow}, evaluator_timeout=None, progress=False)
    assert (limited["fast_result"] == "pass").all()
    pd.testing.assert_frame_equal(limited, unlimited)


def test_a_failure_in_the_row_loop_itself_still_reaches_the_engine(runner, monkeypatch):
    from evalkit.evaluators.custom import loading as custom

    def broken(*args, **kwargs):
        raise MemoryError("out of memory")

    monkeypatch.setattr(custom, "read_score", broken)
    df = pd.DataFrame({"prompt": ["a", "b"], "response": ["r", "r"]})
    scored = evalkit.evaluate(df, evaluators={"odd": lambda **_: {"score": "x"}}, progress=False)
    # as without a time limit: the engine turns the evaluator's crash into errors on its rows
    assert scored["odd_result"].tolist() == ["error", "error"]
    assert scored["odd_error"].tolist() == ["MemoryError: out of memory"] * 2


SLEEPER = """
import time


class Sleeper:
    def __init__(self, *, threshold, options=None, **_):
        pass

    def __call__(self, *, prompt="", **_):
        if prompt == "hang":
            time.sleep(3600)
        return {"score": 1, "reason": "awake"}
"""


def test_cli_evaluator_timeout_ends_a_hanging_run(tmp_path):
    home = tmp_path / "custom-evaluators" / "sleeper"
    home.mkdir(parents=True)
    (home / "sleeper.py").write_text(textwrap.dedent(SLEEPER))
    items = [{"prompt": p, "response": "r"} for p in ("one", "hang", "two")]
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"sleeper": {}}, "items": items}
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", "out", "--evaluator-timeout", "0.5"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 60
    assert "1 error" in proc.stdout
    rows = list(csv.DictReader((tmp_path / "out/results.csv").open()))
    assert [r["sleeper_result"] for r in rows] == ["pass", "error", "pass"]
    assert "ran longer than the limit of 0.5 s" in rows[1]["sleeper_error"]
    entry = json.loads((tmp_path / "out/results.json").read_text())["items"][1]["scores"]["sleeper"]
    assert entry["result"] == "error" and "ran longer than the limit of 0.5 s" in entry["error"]
    assert entry["code"] == "evaluatorError"  # the upstream schema's closed list has no evaluatorTimeout


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf"])
def test_cli_refuses_a_limit_that_is_not_a_positive_number(tmp_path, value):
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--evaluator-timeout", value],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "positive number of seconds" in proc.stderr or "not a number of seconds" in proc.stderr


def test_results_json_with_a_timeout_is_valid_against_the_upstream_schema(upstream_schema):
    import jsonschema

    df = evalkit.load({"schemaVersion": "1.11.0", "default_evaluators": {}, "items": [
        {"prompt": "sleep", "response": "r"}, {"prompt": "fine", "response": "r"}]})  # fmt: skip
    scored = evalkit.evaluate(df, evaluators={"slow": _slow}, evaluator_timeout=0.2, progress=False)
    jsonschema.Draft202012Validator(upstream_schema).validate(evalkit.to_document(scored))


def test_cli_help_names_the_default():
    from evalkit.cli import run as run_command

    assert run_command.parse_seconds("2.5") == 2.5
    assert Path(run_command.__file__).read_text().count("--evaluator-timeout") == 1


def test_no_worker_thread_outlives_a_run_without_timeouts(runner):
    """A later fork (the parallel CSV/HTML writer) is only safe when no other thread runs."""
    df = pd.DataFrame({"prompt": ["a", "b"], "response": ["r", "r"]})

    # Only evalkit's evaluator threads count: earlier tests may leave daemon threads of their own (abandoned
    # judge calls, servers shutting down) that come and go while this test runs.
    def evaluator_threads():
        return [t for t in threading.enumerate() if t.name == "evalkit-quick"]

    for _ in range(300):
        evalkit.evaluate(df, evaluators={"quick": _slow}, progress=False)
        assert evaluator_threads() == []


def _native(*, prompt="", **_):
    if prompt == "crash":
        import ctypes

        ctypes.string_at(0)  # a segfault, as a broken C extension would cause
    if prompt == "exit":
        import os

        os._exit(4)
    if prompt == "c-loop":
        sum(range(10**13))  # C code that holds the GIL for hours: no thread can stop it
    return {"score": 1, "reason": prompt}


@pytest.mark.parametrize(
    "bad, message, code",
    [
        ("crash", "evaluator process was killed by SIGSEGV while scoring row 701", "evaluatorError"),
        ("exit", "evaluator process exited with code 4 while scoring row 701", "evaluatorError"),
        ("c-loop", "ran longer than the limit of 0.5 s", "evaluatorTimeout"),
    ],
)
def test_in_a_worker_process_crashes_and_native_loops_cost_one_row(bad, message, code):
    from evalkit.evaluators.custom import worker_process

    if not worker_process.can_fork():
        pytest.skip("forking is not safe here")
    prompts = [f"p{i}" for i in range(1200)]
    prompts[700] = bad  # in the second batch: the rows of the first are kept, the rest re-run
    df = pd.DataFrame({"prompt": prompts, "response": ["r"] * len(prompts)})
    started = time.monotonic()
    handler = faulthandler.is_enabled()
    faulthandler.disable()  # pytest's: it would print the worker's segfault traceback into the test output
    try:
        scored = evalkit.evaluate(df, evaluators={"native": _native}, evaluator_timeout=0.5, progress=False)
    finally:
        if handler:
            faulthandler.enable()
    assert time.monotonic() - started < 30
    results = scored["native_result"].tolist()
    assert results[700] == "error" and results.count("pass") == len(prompts) - 1
    assert message in scored["native_error"].tolist()[700]
    assert scored["native_code"].tolist()[700] == code
    assert scored["native_reason"].tolist()[:3] == ["p0", "p1", "p2"]
    assert scored["native_reason"].tolist()[-1] == "p1199"


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_the_worker_process_dies_with_a_killed_run(tmp_path):
    from evalkit.evaluators.custom import worker_process

    if not worker_process.can_fork():
        pytest.skip("forking is not safe here")
    home = tmp_path / "custom-evaluators" / "sleeper"
    home.mkdir(parents=True)
    (home / "sleeper.py").write_text(textwrap.dedent(SLEEPER))
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"sleeper": {}}, "items": [
        {"prompt": "hang", "response": "r"}]}  # fmt: skip
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", "out", "--evaluator-timeout", "600"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not _children(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _children(proc.pid)
        assert workers, "the run started no worker process"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 5
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)
