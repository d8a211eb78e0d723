"""What the ``evalkit`` command does to its own process (``evalkit.cli.process``, issue 20's memory): pandas
imported without pyarrow, which stays importable for the Spark engine; the heap's free memory given back."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import contextlib, io, sys
import evalkit.cli
with contextlib.redirect_stdout(io.StringIO()):
    code = evalkit.cli.main(["run", sys.argv[1], "--out", sys.argv[2]])
print("run:", code, "pandas imported:", "pandas" in sys.modules)
print("pyarrow imported with the cli:", "pyarrow" in sys.modules)
import pandas as pd
frame = pd.DataFrame({"a": ["x", None], "b": [1.5, float("nan")]})
print("pandas works:", frame["a"].isna().tolist() == [False, True] and frame["b"].sum() == 1.5)
import pyarrow as pa
print("pyarrow importable after:", pa.array([1, 2]).to_pylist() == [1, 2])
print("nothing left hiding it:", not any(type(f).__name__ == "_HidePyarrow" for f in sys.meta_path))
"""


def _run(code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_command_imports_pandas_without_pyarrow_and_pyarrow_still_imports(tmp_path):
    pytest.importorskip("pyarrow")
    doc = REPO / "data" / "demo.json"
    assert _run(PROBE, str(doc), str(tmp_path / "out")).splitlines() == [
        "run: 0 pandas imported: True",
        "pyarrow imported with the cli: False",
        "pandas works: True",
        "pyarrow importable after: True",
        "nothing left hiding it: True",
    ]


def test_a_program_that_imported_pandas_first_keeps_its_pyarrow():
    pytest.importorskip("pyarrow")
    out = _run("import sys, pandas\nimport evalkit.cli\nprint('pyarrow' in sys.modules)")
    assert out.strip() == "True"


HEAP = """
import sys
import numpy as np
from evalkit.cli.process.heap import give_back_free_memory

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

big = np.ones(16 << 20, dtype=np.uint8)  # freeing a mapped chunk raises glibc's mmap threshold past 16 MB
del big
arrays = [np.ones(300_000, dtype=np.uint8) for _ in range(200)]  # now from the heap: 60 MB
keep = arrays[-1]
del arrays  # all but the last: freed into the heap, which keeps them
before = rss()
if sys.argv[1] == "trimmed":
    give_back_free_memory()
print(round(before - rss()), round(rss()))
"""


GLIBC = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="malloc_trim is glibc's",
)


@GLIBC
def test_free_heap_memory_goes_back_to_the_system():
    held = _run(HEAP, "as is").split()
    trimmed = _run(HEAP, "trimmed").split()
    assert int(held[0]) < 10  # glibc keeps the 60 MB freed...
    assert int(trimmed[0]) >= 40  # ...until it is asked to give them back


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_ctrl_c_while_the_document_is_read_ahead_stops_the_run_cleanly(tmp_path):
    """Ctrl-C while the command imports pandas and its child reads the document: ``Interrupted.`` and 130, no
    traceback, and the reading child gone with the command (it printed a traceback before)."""
    import json
    import signal
    import time

    items = [{"prompt": f"question {i}?", "response": "an answer " * 20} for i in range(50_000)]
    (tmp_path / "doc.json").write_text(json.dumps({"schemaVersion": "1.11.0", "items": items}))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", "out", "--evaluator", "ExactMatch"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    reader = None
    deadline = time.monotonic() + 30
    while reader is None and time.monotonic() < deadline and proc.poll() is None:
        alive = children.read_text().split() if children.exists() else []
        reader = int(alive[0]) if alive else None
        time.sleep(0.005)
    assert reader is not None, "the command forked no reader"
    os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.strip() == "Interrupted."
    assert not (tmp_path / "out").exists()
    time.sleep(0.2)
    status = Path(f"/proc/{reader}/status")
    assert not status.exists() or f"PPid:\t{proc.pid}" not in status.read_text()


#: ``python -m evalkit ARGS`` once the interpreter has started: "started" is printed when Python runs code and
#: the package is imported (an interrupt during the interpreter's own start-up, site and .pth files, is Python's,
#: before any evalkit code; the package's ``__init__`` and ``evalkit.__main__`` up to ``run`` are a few bytecodes).
STARTED_THEN_EVALKIT = """
import runpy, signal, sys
import evalkit
sys.argv[0] = "evalkit"
print("started", flush=True)
runpy.run_module("evalkit", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_ctrl_c_at_any_instant_prints_interrupted_and_exits_130_never_a_traceback(tmp_path):
    """SIGINT at instants from the imports of the command line (its first tenth of a second printed a
    traceback) through the run to the teardown after the files are written: each run ends either as a whole
    run (exit 0) or with ``Interrupted.`` and 130, never with a traceback."""
    import json
    import signal
    import time

    items = [{"prompt": f"q{i}", "response": "a", "expected_response": "a"} for i in range(2_000)]
    document = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": items}
    (tmp_path / "doc.json").write_text(json.dumps(document))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-c", STARTED_THEN_EVALKIT, "run", "doc.json", "--out", "out"]
    started = time.monotonic()
    whole = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    length = time.monotonic() - started
    assert whole.returncode == 0, whole.stderr
    outcomes = []
    delays = [0.01, 0.05, 0.1, 0.2] + [length * f for f in (0.4, 0.7, 0.9, 0.97, 1.0, 1.1)]
    for delay in delays:
        proc = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert proc.stdout.readline() == "started\n"
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert "Traceback" not in err and "Exception ignored" not in err, (delay, err)
        if proc.returncode == 130:
            assert err.strip().splitlines()[-1] == "Interrupted.", (delay, err)
        else:
            assert proc.returncode == 0 and "Results:" in out + err, (delay, proc.returncode, out, err)
        outcomes.append(proc.returncode)
    assert 130 in outcomes  # the instants tried did interrupt runs
