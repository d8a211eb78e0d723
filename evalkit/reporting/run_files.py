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
from evalkit.reporting.csv_parts import CsvParts, PartClaims
from evalkit.reporting.html_page import write_html

#: From this many rows on, the CLI writes report.html in a forked child process while the parent writes
#: results.json, and results.csv in parts that either takes once it is done (``csv_parts``): the writes are
#: independent and go to the same staging folder. (One child for all: a child per file was slower on a busy
#: two-core machine, 27-36 s against 15-24 s at 100,000 rows.)
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
    process writes the JSON, using a second core, and the CSV in parts that each takes once it is done
    (``csv_parts``); the child dies with this process and is waited for before the swap; ``while_waiting``
    (the CLI's summary) runs here once this process has no part left to take, before it waits for the child.
    When forking is not safe (no ``os.fork``, other threads running) everything is written here, one file after
    the other; when the child fails, this process writes the page and the parts the child did not complete. ``history``: a folder of earlier runs
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

        def write_page() -> None:
            timed(staged["html"], rows, lambda: write_html(df, staged["html"], title=title, history=trend))

        parts = claims = child = None
        if parallel and rows >= PARALLEL_ROWS:
            parts = CsvParts(df, staged["csv"])
            claims = PartClaims(parts.count)
            child = _fork_writer(lambda: (write_page(), parts.write_claimed(claims)))
            if child is None:  # forking is not safe here: every file from this process, one after the other
                claims.close()
                parts = claims = None
        try:
            kill_point("forked")
            timed(staged["json"], rows, lambda: _write_json(df, staged["json"]))
            for name, write in extra.items():
                write(staging / name)
            started = time.perf_counter()
            here = parts.write_claimed(claims) if parts is not None else 0
            if while_waiting is not None:
                while_waiting()
        except BaseException:
            if child is not None:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
            raise
        finally:
            if claims is not None:
                claims.close()
        if child is None or not _child_succeeded(child):
            write_page()
        if parts is None:
            timed(staged["csv"], rows, lambda: write_csv(df, staged["csv"]))
        else:  # the parts the forked writer did not complete are written here, then all are joined
            here += parts.join()
            _log_parts(staged["csv"], rows, parts.count, here, time.perf_counter() - started)
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


def _log_parts(path: Path, rows: int, count: int, here: int, seconds: float) -> None:
    """At DEBUG: results.csv's size and the time from this process's first part to the joined file."""
    if log.isEnabledFor(logging.DEBUG):
        megabytes = path.stat().st_size / 1e6
        log.debug(
            "wrote %s (%s rows, %.1f MB) in %.2f s (%d of %d parts here, the rest in the forked writer)",
            path.name,
            f"{rows:,}",
            megabytes,
            seconds,
            here,
            count,
        )


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
