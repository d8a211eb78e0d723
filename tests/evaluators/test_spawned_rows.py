"""A code-only evaluator from its file runs in a spawned worker where forking is unsafe (issue 29, item 7).

With another thread running (a Jupyter kernel, a run with judges), forking is refused; an evaluator from
``custom-evaluators/<name>/<name>.py`` then runs in a fresh interpreter, so one that holds the GIL is still
stopped at the limit, and its results are those of the forked worker. Ad-hoc callables keep the watched thread.
"""

from __future__ import annotations

import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.evaluators.custom import worker_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="spawned workers: Linux")

GREEDY = """
import os


class Greedy:
    def __init__(self, *, threshold, options=None, **_):
        self.threshold = threshold

    def __call__(self, *, prompt="", **_):
        if prompt == "greedy":
            7 ** (10**8)  # holds the GIL: no thread can stop it
        return {"score": 1, "reason": f"{prompt} in {os.getpid()}"}
"""

ORDINARY = """
class Ordinary:
    def __init__(self, *, threshold, options=None, **_):
        self.threshold = threshold
        self.options = options or {}

    def __call__(self, *, prompt="", response="", expected_response="", context="", **_):
        if prompt == "raise":
            raise ValueError("no good")
        if prompt == "bad":
            return {"score": "high"}
        words = len(response.split()) + len(context or "")
        return {"score": min(1.0, words / 7), "reason": f"{self.options.get('tag', '-')} {expected_response!r}"}
"""


def write(root: Path, name: str, source: str) -> None:
    (root / name).mkdir(parents=True, exist_ok=True)
    (root / name / f"{name}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def another_thread():
    """A thread running in this process, as in a Jupyter kernel: forking is unsafe."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="kernel-like", daemon=True)
    thread.start()
    assert not worker_process.can_fork()
    yield
    stop.set()
    thread.join()


def test_an_evaluator_from_its_file_holding_the_gil_is_stopped_at_the_limit(tmp_path, another_thread):
    custom = tmp_path / "custom-evaluators"
    write(custom, "greedy", GREEDY)
    df = pd.DataFrame({"prompt": ["a", "greedy", "b"], "response": ["r"] * 3})
    started = time.monotonic()
    scored = evalkit.evaluate(
        df, evaluators={"greedy": {}}, custom_dir=custom, evaluator_timeout=1, progress=False
    )
    assert time.monotonic() - started < 30
    assert scored["greedy_code"].tolist() == [None, "evaluatorTimeout", None]
    assert "ran longer than the limit of 1 s" in scored["greedy_error"].tolist()[1]
    reasons = scored["greedy_reason"].tolist()
    assert reasons[0].startswith("a in ") and reasons[2].startswith("b in ")
    assert str(__import__("os").getpid()) not in reasons[0]  # scored in a worker, not in this process


def _ordinary_run(custom: Path) -> pd.DataFrame:
    prompts = ["one", "raise", "bad", "two", "three"] * 3
    df = pd.DataFrame(
        {
            "prompt": prompts,
            "response": [f"w {'x ' * i}" for i in range(len(prompts))],
            "expected_response": [f"exp {i}" for i in range(len(prompts))],
            "context": ["", "ctx", "", "c", ""] * 3,
        }
    )
    configs = {"ordinary": {"threshold": 0.5, "options": {"tag": "T"}}}
    return evalkit.evaluate(df, evaluators=configs, custom_dir=custom, evaluator_timeout=30, progress=False)


def test_results_of_ordinary_evaluators_are_those_of_the_forked_worker(tmp_path, monkeypatch):
    custom = tmp_path / "custom-evaluators"
    write(custom, "ordinary", ORDINARY)
    if not worker_process.can_fork():
        pytest.skip("forking is not safe here")
    from evalkit.evaluators.custom import loading

    calls = []  # how each run's workers were started: forked (None) or spawned (a SpawnedRows)

    def spy(loop, order, outputs, limit, name, labels=None, spawned=None):
        calls.append(spawned)
        return worker_process.run_in_workers(loop, order, outputs, limit, name, labels, spawned)

    monkeypatch.setattr(loading, "run_in_workers", spy)
    forked = _ordinary_run(custom)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        spawned = _ordinary_run(custom)
    finally:
        stop.set()
        thread.join()
    assert calls[0] is None and calls[1] is not None  # forked, then spawned
    assert spawned["ordinary_code"].tolist()[:3] == [None, "evaluatorError", "invalidEvaluatorResult"]
    pd.testing.assert_frame_equal(forked, spawned)


def test_options_json_cannot_carry_stay_in_this_process(tmp_path, another_thread):
    custom = tmp_path / "custom-evaluators"
    write(custom, "greedy", GREEDY)
    df = pd.DataFrame({"prompt": ["a"], "response": ["r"]})
    configs = {"greedy": {"options": {"terms": {"a set"}}}}
    scored = evalkit.evaluate(df, evaluators=configs, custom_dir=custom, evaluator_timeout=5, progress=False)
    assert scored["greedy_reason"].tolist() == [f"a in {__import__('os').getpid()}"]  # the watched thread


FUSSY = """
import threading

if threading.active_count() == 1:
    raise RuntimeError("imports only beside other threads")


class Fussy:
    def __init__(self, *, threshold, options=None, **_):
        pass

    def __call__(self, **_):
        return {"score": 1}
"""


def test_a_module_that_imports_here_but_not_in_the_worker_is_a_load_error_on_its_rows(
    tmp_path, another_thread
):
    custom = tmp_path / "custom-evaluators"
    write(custom, "fussy", FUSSY)
    df = pd.DataFrame({"prompt": ["a", "b"], "response": ["r", "r"]})
    scored = evalkit.evaluate(
        df, evaluators={"fussy": {}}, custom_dir=custom, evaluator_timeout=5, progress=False
    )
    path = custom / "fussy" / "fussy.py"
    assert scored["fussy_code"].tolist() == ["evaluatorLoadError"] * 2
    assert (
        scored["fussy_error"].tolist()
        == [
            f"evaluator 'fussy' could not be loaded: Custom evaluator 'fussy' failed to import: RuntimeError: imports "
            f"only beside other threads ({path})"
        ]
        * 2
    )
