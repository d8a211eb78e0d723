"""A large run's results.csv is written in parts by both processes (issue 20): the parent once results.json is
written, the forked writer once report.html is; every part exactly once, and the joined file is byte for byte
the one ``write_csv`` writes, also when the forked writer dies half way.

The runs go through a fresh interpreter (``python -c``): pytest's workers may run threads, and a process with
threads refuses to fork, so only a subprocess makes sure the forked writer really runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.reporting.csv_file import write_csv, write_csv_rows

SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    import evalkit
    import evalkit.reporting.run_files as run_files
    from evalkit.reporting import csv_parts
    from evalkit.reporting.csv_file import write_csv

    mode, folder = sys.argv[1], Path(sys.argv[2])
    run_files.PARALLEL_ROWS = 1
    csv_parts.PART_ROWS = 5
    items = [{"prompt": f"q{i}", "expected_response": "a b", "response": ["a b", "=1+1", "b\\r\\nc"][i % 3]}
             for i in range(62)]
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}},
           "items": items}
    df = evalkit.evaluate(evalkit.load(doc), progress=False)
    log = folder / "parts.log"
    real_part = csv_parts.CsvParts.write_part
    parent = os.getpid()

    def write_part(self, number):
        with open(log, "a") as handle:
            handle.write(f"{'parent' if os.getpid() == parent else 'child'} {number}\\n")
        if os.getpid() != parent and mode == "child dies":
            os._exit(9)  # took a part and died before writing it
        deadline = time.monotonic() + 60
        while os.getpid() == parent and "child" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)  # the parent holds its first part until the forked writer has one too
        real_part(self, number)
    csv_parts.CsvParts.write_part = write_part

    paths = evalkit.save_results(df, folder / "out", parallel=True)
    write_csv(df, folder / "expected.csv")
    print(json.dumps({"files": sorted(p.name for p in (folder / "out").iterdir()),
                      "same": (folder / "expected.csv").read_bytes() == paths["csv"].read_bytes(),
                      "html": paths["html"].stat().st_size > 0,
                      "log": log.read_text().split("\\n")[:-1]}))
    """
)


def _save(mode: str, tmp_path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_both_processes_write_parts_each_once_and_the_file_is_write_csvs(tmp_path):
    out = _save("both", tmp_path)
    assert out["same"] and out["html"]
    assert out["files"] == ["report.html", "results.csv", "results.json"]  # no part file left
    writers = [line.split() for line in out["log"]]
    assert sorted(int(number) for _, number in writers) == list(range(13))  # 62 rows in parts of 5
    assert {who for who, _ in writers} == {"parent", "child"}


def test_a_forked_writer_that_dies_costs_no_rows(tmp_path):
    out = _save("child dies", tmp_path)
    assert out["same"] and out["html"]
    assert out["files"] == ["report.html", "results.csv", "results.json"]
    lines = [line.split() for line in out["log"]]
    died = [number for who, number in lines if who == "child"]
    assert len(died) == 1  # the part it took is written by the parent after all
    assert sorted(int(number) for who, number in lines if who == "parent") == list(range(13))


def _varied() -> pd.DataFrame:
    items = [
        {"prompt": f"q{i}", "expected_response": "a b c", "response": r}
        for i, r in enumerate(
            ["a b c", "=HYPERLINK(1)", "x\ry", "", "+1", "a,b", '"q"', "é ü", "@x", "-3"] * 3
        )
    ]
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}}}
    return evalkit.evaluate(evalkit.load({**doc, "items": items}), progress=False)


@pytest.mark.parametrize("kind", ["fast", "to_csv"])
def test_ranges_joined_are_the_whole_file(kind, tmp_path):
    df = _varied()
    if kind == "to_csv":  # a column kind only DataFrame.to_csv renders
        df["status"] = df["status"].astype("category")
    write_csv(df, tmp_path / "whole.csv")
    with open(tmp_path / "joined.csv", "w", encoding="utf-8", newline="") as handle:
        write_csv_rows(df, handle, 0, 0)
        for start in np.arange(0, len(df), 7).tolist():
            write_csv_rows(df, handle, start, start + 7, header=False)
    whole = (tmp_path / "whole.csv").read_bytes()
    assert whole.count(b"\n") > len(df)  # the header and every row (and a quoted carriage return)
    assert (tmp_path / "joined.csv").read_bytes() == whole
