"""Hostile paths: input files that are not regular files, output paths that are symbolic links, odd file names.

A named pipe with no writer blocked ``open`` for ever before evalkit refused non-regular files; the
``unblocked`` fixture keeps such a test from hanging when the refusal is missing: after a few seconds it opens
the pipe's writing end and closes it, so a blocked reader sees an empty file and the assertions fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

import evalkit
from evalkit.cli import main
from evalkit.errors import DocumentError

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"
SPAN_EVALUATORS = REPO / "custom-evaluators"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes (POSIX)")


def watched_fifo(path: Path):
    """Make ``path`` a named pipe nobody writes to; a watchdog unblocks a reader stuck on it every 5 s."""
    os.mkfifo(path)
    done = threading.Event()

    def unblock():
        while not done.wait(5):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # ENXIO unless a reader is blocked
            except OSError:
                pass

    threading.Thread(target=unblock, daemon=True).start()
    return done


@pytest.fixture
def fifo(tmp_path):
    """A named pipe nobody writes to (watched: a reader blocked on it is let go after 5 s)."""
    path = tmp_path / "spans.json"
    done = watched_fifo(path)
    yield path
    done.set()


def cli(capsys, *args) -> tuple[int, str]:
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def refused(path: Path, kind: str = "a named pipe (FIFO)") -> str:
    return (
        f"Error: {path}: is {kind}, not a regular file; evalkit reads only regular files: save the data to a "
        "file and give that\n"
    )


def test_validate_refuses_a_fifo(fifo, capsys):
    assert cli(capsys, "validate", fifo) == (2, refused(fifo))


def test_run_refuses_a_fifo(fifo, tmp_path, capsys):
    assert cli(capsys, "run", fifo, "--out", tmp_path / "out") == (2, refused(fifo))
    assert cli(capsys, "run", fifo, "--out", tmp_path / "out", "--evaluate-only") == (2, refused(fifo))
    assert not (tmp_path / "out").exists()


def test_spans_eval_refuses_a_fifo(fifo, tmp_path, capsys):
    code, err = cli(
        capsys, "spans", "eval", fifo, "--evaluator", "pii_leak", "--custom-dir", SPAN_EVALUATORS,
        "--out", tmp_path / "out",
    )  # fmt: skip
    assert (code, err) == (2, refused(fifo))


@pytest.fixture
def fifo_run(tmp_path):
    """A results folder whose results.json is a named pipe (watched)."""
    run = tmp_path / "run"
    run.mkdir()
    done = watched_fifo(run / "results.json")
    yield run
    done.set()


def test_compare_refuses_a_fifo_results_file(fifo_run, tmp_path, capsys):
    good = tmp_path / "good"
    assert main(["run", str(DEMO), "--out", str(good), "--custom-dir", str(REPO / "custom-evaluators")]) == 0
    capsys.readouterr()
    results = fifo_run / "results.json"
    assert cli(capsys, "compare", good, results) == (2, refused(results))
    assert cli(capsys, "compare", results, good) == (2, refused(results))


@pytest.mark.slow  # the report command loads papermill and nbconvert first: several seconds on a busy machine
def test_report_refuses_a_fifo_results_file(fifo_run, tmp_path, capsys):
    results = fifo_run / "results.json"
    assert cli(capsys, "report", results, "--out", tmp_path / "r.html") == (2, refused(results))
    assert not (tmp_path / "r.html").exists()


def test_the_python_api_refuses_a_fifo(fifo):
    with pytest.raises(DocumentError, match=r"is a named pipe \(FIFO\), not a regular file"):
        evalkit.load(fifo)
    with pytest.raises(DocumentError, match=r"is a named pipe \(FIFO\), not a regular file"):
        evalkit.spans.load(fifo)


def test_a_gzip_span_file_that_is_a_fifo_is_refused(tmp_path, capsys):
    path = tmp_path / "spans.json.gz"
    done = watched_fifo(path)
    with pytest.raises(DocumentError, match=r"is a named pipe \(FIFO\)"):
        evalkit.spans.load(path)
    done.set()


def test_a_socket_is_refused(tmp_path, capsys):
    path = tmp_path / "doc.json"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        assert cli(capsys, "validate", path) == (2, refused(path, "a socket"))


def test_a_symlink_to_a_fifo_is_refused(fifo, tmp_path, capsys):
    link = tmp_path / "doc.json"
    link.symlink_to(fifo)
    assert cli(capsys, "validate", link) == (2, refused(link))


def test_a_regular_file_still_reads(tmp_path, capsys):
    doc = tmp_path / "doc.json"
    shutil.copy(DEMO, doc)
    code, _ = cli(capsys, "validate", doc)
    assert code == 0
    assert json.loads(doc.read_text())["items"]
