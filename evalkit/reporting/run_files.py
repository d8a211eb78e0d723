"""A run's files: ``results.json`` (the document enriched with outputs), ``results.csv`` and ``report.html``
(and, with an agent, ``spans.jsonl``), replaced as one set.

The files are written into a staging folder beside the results folder, which then takes the results folder's
place in one atomic exchange (:mod:`evalkit.documents.files.folder_swap`): after a crash or ``kill -9`` at any
moment the folder holds the complete old set or the complete new set, never a mix and never a temporary file.

At ``--log-level debug`` (the ``evalkit`` logger at DEBUG) each file's write is logged with its size and time:
``wrote results.csv (100,000 rows, 43.1 MB) in 2.10 s``.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.documents.files.folder_swap import die_with_parent, kill_point, replaced_folder
from evalkit.documents.results import results_metadata, write_document
from evalkit.documents.write_back import document_root, iter_items
from evalkit.reporting.csv_file import write_csv
from evalkit.reporting.html_page import write_html

#: From this many rows on, the CLI writes report.html in a forked child process while the parent writes
#: results.json, and results.csv in whichever of the two is done first: the writes are independent and go to
#: the same staging folder. (One child
#: for both: a child per file was slower on a busy two-core machine, 27-36 s against 15-24 s at 100,000 rows.)
PARALLEL_ROWS = 20_000

#: The files a run owns in its results folder: a run replaces all of them; a file of this set that the run does
#: not write (``spans.jsonl`` of an earlier run with an agent) goes. Other files in the folder are kept.
RUN_FILES = ("results.json", "results.csv", "report.html", "spans.jsonl")

_NAMES = {"json": "results.json", "csv": "results.csv", "html": "report.html"}
log = logging.getLogger(__name__)


def save_results(
    df: pd.DataFrame,
    out_dir: str | os.PathLike,
    *,
    title: str | None = None,
    parallel: bool = False,
    extra: dict[str, Callable[[Path], Any]] | None = None,
    history: str | os.PathLike | None = None,
    while_waiting: Callable[[], Any] | None = None,
) -> dict[str, Path]:
    """Write results.json, results.csv and report.html into ``out_dir``, replacing the earlier set as a whole.

    ``extra`` maps more file names of the set (``spans.jsonl``) to a function that writes that file at the
    path it is given. Returns the final paths by kind (``json``, ``csv``, ``html``, then the ``extra`` names).
    ``parallel=True`` (the CLI's choice for large runs) writes the HTML report in a forked child while this
    process writes the JSON, using a second core, and the CSV in whichever is done first; the child dies with
    this process and is waited for before the swap; ``while_waiting`` (the CLI's summary) runs here once this
    process has written its files, before it waits for the child. When forking is not safe (no ``os.fork``, other threads running) or the child fails,
    everything is written here, one file after the other. ``history``: a folder of earlier runs
    (:func:`evalkit.runs`); report.html then shows the trend of pass rates across them and this run.
    """
    extra = dict(extra or {})
    out = Path(out_dir)
    trend = None
    if history is not None:
        from evalkit.analysis.history import runs

        trend = runs(history, current=df, current_dir=out)
    with replaced_folder(out, owned=(*RUN_FILES, *extra)) as staging:
        staged = {kind: staging / name for kind, name in _NAMES.items()}
        rows = len(df)
        tables = {
            "csv": lambda: timed(staged["csv"], rows, lambda: write_csv(df, staged["csv"])),
            "html": lambda: timed(
                staged["html"], rows, lambda: write_html(df, staged["html"], title=title, history=trend)
            ),
        }

        written: set[str] = set()  # the tables this process has written already

        def write_tables() -> None:
            for kind, write in tables.items():
                if kind not in written:
                    write()

        token = _Token() if parallel and rows >= PARALLEL_ROWS else None
        child = None

        def child_writes() -> None:
            tables["html"]()
            if token.take():
                tables["csv"]()

        if token is not None:
            child = _fork_writer(child_writes)
        try:
            kill_point("forked")
            timed(staged["json"], rows, lambda: _write_json(df, staged["json"]))
            for name, write in extra.items():
                write(staging / name)
            if child is not None and token.take():  # the child is still on the page: the CSV is written here
                tables["csv"]()
                written.add("csv")
            if while_waiting is not None:
                while_waiting()
        except BaseException:
            if child is not None:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
            raise
        finally:
            if token is not None:
                token.close()
        if child is None or not _child_succeeded(child):
            write_tables()
    return {**{kind: out / name for kind, name in _NAMES.items()}, **{name: out / name for name in extra}}


def _write_json(df: pd.DataFrame, path: Path) -> None:
    """results.json; its root (and the sha256 of the document in its metadata) is made here, after the fork,
    so the forked writer starts on report.html without waiting for it."""
    root = document_root(df)
    root["metadata"] = results_metadata(df, root.get("metadata") or {})
    root["items"] = iter_items(df, encoded=True)
    with open(path, "wb") as handle:
        write_document(root, handle)


def timed(path: Path, rows: int, write: Callable[[], Any]) -> None:
    """Run ``write`` (which writes ``path``); at DEBUG, log the file's name, rows, size and the time taken."""
    started = time.perf_counter()
    write()
    if log.isEnabledFor(logging.DEBUG):
        seconds = time.perf_counter() - started
        megabytes = path.stat().st_size / 1e6
        log.debug("wrote %s (%s rows, %.1f MB) in %.2f s", path.name, f"{rows:,}", megabytes, seconds)


class _Token:
    """One byte in a pipe shared with the forked writer: whichever process reads it first writes results.csv
    (the parent once results.json is written, the child once report.html is), so neither waits idle while the
    other has two files left (issue 20)."""

    def __init__(self) -> None:
        self._read, write = os.pipe()
        os.write(write, b"1")
        os.close(write)
        os.set_blocking(self._read, False)

    def take(self) -> bool:
        try:
            return os.read(self._read, 1) == b"1"
        except (BlockingIOError, OSError):
            return False

    def close(self) -> None:
        os.close(self._read)


def _fork_writer(write: Callable[[], Any]) -> int | None:
    """Start a child that runs ``write``; its pid, or None when forking is not safe."""
    import threading

    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        die_with_parent(parent)
        write()
        code = 0
    except BaseException:  # noqa: BLE001 - reported here, then the parent writes the files itself
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def _child_succeeded(pid: int) -> bool:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
