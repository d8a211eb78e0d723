"""``evalkit report`` leaves nothing in the temp folder: not on success, not when killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import evalkit
from evalkit.reporting.notebook_report import render_report
from evalkit.reporting.notebook_report.scratch import remove_stale

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run") / "demo"
    scored = evalkit.evaluate(
        evalkit.load(REPO / "data/demo.json"), custom_dir=REPO / "custom-evaluators", progress=False
    )
    evalkit.save_results(scored, folder)
    return folder


def _processes_naming(text: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if text in (proc / "cmdline").read_bytes().decode(errors="replace") and state != "Z":
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def _wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to find the kernel")
def test_a_killed_report_leaves_no_notebook_connection_file_or_kernel(tmp_path, run_dir):
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "report", str(run_dir), "--out", str(tmp_path / "r.html")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        # midway: the kernel is up (connection file and sockets written) and the notebook is executing
        assert _wait_until(
            lambda: list(temp.glob("*/report.ipynb")) and list(temp.glob("*/kernel.json")), 120
        )
        scratch = next(temp.glob("*/report.ipynb")).parent
        assert scratch.name.startswith(f"evalkit-report-{proc.pid}-")
        assert [p.name for p in temp.iterdir()] == [
            scratch.name
        ]  # the connection file is in the scratch folder
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _wait_until(lambda: not list(temp.iterdir()), 15), list(temp.rglob("*"))
    assert _wait_until(lambda: not _processes_naming(str(scratch)), 15)  # the kernel shut itself down
    assert not (tmp_path / "r.html").exists()


def test_a_finished_report_leaves_nothing_in_the_temp_folder(tmp_path, run_dir, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    render_report(run_dir, tmp_path / "r.html")
    assert (tmp_path / "r.html").stat().st_size > 0
    assert _wait_until(lambda: not list(temp.iterdir()), 5), list(temp.rglob("*"))


def test_the_next_report_removes_scratch_folders_of_dead_processes(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = tmp_path / f"evalkit-report-{gone.pid}-abc123"
    (stale / "out").mkdir(parents=True)
    (stale / "kernel.json").write_text("{}")
    live = tmp_path / f"evalkit-report-{os.getpid()}-def456"
    live.mkdir()
    other = tmp_path / "evalkit-report-notes"
    other.mkdir()
    assert remove_stale(tmp_path) == [stale]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])


def test_a_kernel_on_tcp_does_not_warn_of_its_unencrypted_sockets(tmp_path, run_dir):
    """A scratch folder too deep for a Unix socket puts the kernel on localhost TCP, where ipykernel warned on
    every run ("Kernel is running over TCP without encryption"); the report's kernel drops that one warning."""
    from evalkit.reporting.kernel_log import KERNEL_TCP_WARNING

    temp = tmp_path / ("t" * 60) / ("u" * 60)  # past the 96 bytes a socket path may take
    temp.mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "report", str(run_dir), "--out", str(tmp_path / "r.html")],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert KERNEL_TCP_WARNING not in done.stderr and "IPKernelApp" not in done.stderr, done.stderr
    assert (tmp_path / "r.html").stat().st_size > 0
