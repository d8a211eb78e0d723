"""A large run's results.csv is written by whichever process is free first (issue 20): the parent once
results.json is written, or the forked child once report.html is; exactly once, and the set is complete."""

from __future__ import annotations

import os
import threading
import time

import pytest

import evalkit
import evalkit.reporting.run_files as run_files


def _scored():
    items = [{"prompt": f"q{i}", "expected_response": "a", "response": "a"} for i in range(4)]
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": items}
    return evalkit.evaluate(evalkit.load(doc), progress=False)


@pytest.mark.parametrize("slow", ["json", "html"])
def test_the_free_process_writes_the_csv_once(slow, tmp_path, monkeypatch):
    if not hasattr(os, "fork") or threading.active_count() > 1:  # save_results then writes every file itself
        pytest.skip("forking is not safe here: another thread runs in this test process")
    monkeypatch.setattr(run_files, "PARALLEL_ROWS", 1)
    writers = tmp_path / "csv-writers"
    real_csv, real_json, real_html = run_files.write_csv, run_files._write_json, run_files.write_html

    def csv(df, path):
        with open(writers, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        real_csv(df, path)

    def wait_for_the_other():  # the slow writer ends only once the other process has taken the CSV
        deadline = time.monotonic() + 60
        while not writers.exists() and time.monotonic() < deadline:
            time.sleep(0.02)

    def json_file(root, path):
        if slow == "json":
            wait_for_the_other()
        real_json(root, path)

    def html(df, path, **kwargs):
        if slow == "html":
            wait_for_the_other()
        real_html(df, path, **kwargs)

    monkeypatch.setattr(run_files, "write_csv", csv)
    monkeypatch.setattr(run_files, "_write_json", json_file)
    monkeypatch.setattr(run_files, "write_html", html)
    paths = evalkit.save_results(_scored(), tmp_path / "out", parallel=True)
    pids = writers.read_text().split()
    assert len(pids) == 1
    assert (pids[0] == str(os.getpid())) == (slow == "html")  # the parent writes it when the page is slow
    assert paths["csv"].read_text().startswith("item,turn,thread,prompt")
    assert paths["html"].is_file() and paths["json"].is_file()
