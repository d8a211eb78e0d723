"""A run's files: ``results.json`` (the document enriched with outputs), ``results.csv`` and ``report.html``."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from evalkit.documents.atomic import atomic_write
from evalkit.documents.results import results_metadata, write_document
from evalkit.documents.write_back import document_root, iter_items
from evalkit.reporting.csv_file import write_csv
from evalkit.reporting.html_page import write_html

#: From this many rows on, the CLI writes results.csv and report.html in a forked child process while the
#: parent writes results.json: the three writes are independent and each is atomic.
PARALLEL_ROWS = 20_000


def save_results(
    df: pd.DataFrame,
    out_dir: str | os.PathLike,
    *,
    title: str | None = None,
    parallel: bool = False,
    history: str | os.PathLike | None = None,
) -> dict[str, Path]:
    """Write results.json, results.csv and report.html into ``out_dir``, each replaced atomically.

    ``parallel=True`` (the CLI's choice for large runs) writes the CSV and the HTML report in a forked child
    while this process writes the JSON, using a second core; when forking is not safe (no ``os.fork``,
    other threads running) or the child fails, everything is written here, one file after the other.
    ``history``: a folder of earlier runs (:func:`evalkit.runs`); report.html then shows the trend of pass rates
    across them and this run.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    root = document_root(df)
    root["metadata"] = results_metadata(df, root.get("metadata") or {})
    root["items"] = iter_items(df)
    paths = {"json": out / "results.json", "csv": out / "results.csv", "html": out / "report.html"}
    trend = None
    if history is not None:
        from evalkit.analysis.history import runs

        trend = runs(history, current=df, current_dir=out)
    child = _fork_writer(df, paths, title, trend) if parallel and len(df) >= PARALLEL_ROWS else None
    with atomic_write(paths["json"]) as handle:
        write_document(root, handle)
    if child is None or not _child_succeeded(child):
        _write_tables(df, paths, title, trend)
    return paths


def _write_tables(df: pd.DataFrame, paths: dict[str, Path], title: str | None, history=None) -> None:
    write_csv(df, paths["csv"])
    write_html(df, paths["html"], title=title, history=history)


def _fork_writer(df: pd.DataFrame, paths: dict[str, Path], title: str | None, history=None) -> int | None:
    """Start a child that writes the CSV and HTML files; its pid, or None when forking is not safe."""
    import threading

    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        _write_tables(df, paths, title, history)
        code = 0
    except BaseException:  # noqa: BLE001 - reported here, then the parent writes the files itself
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def _child_succeeded(pid: int) -> bool:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
