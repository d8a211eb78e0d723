"""A document read in a forked child (``documents.load_ahead``, issue 20): the same table as ``load``, the same
errors and warnings, and a child that dies or is not waited for costs nothing but time.

Each scenario runs in a fresh interpreter: a test process whose other tests left threads behind refuses to
fork, so only a subprocess makes sure the child really reads the document. The upstream samples are the
material (``tests/reference/m365-copilot-eval/samples``, copied from the format's public repository, MIT
licence: ``tests/reference/m365-copilot-eval/README.md``): single-turn, threads, retrieval, citations,
evaluator maps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLES = sorted((REPO / "tests" / "reference" / "m365-copilot-eval" / "samples").glob("*.json"))

PREAMBLE = """
import os, signal, sys, warnings
import pandas as pd
from evalkit.documents import case_table
from evalkit.documents.empty_cells import EMPTY_DICT, EMPTY_LIST
from evalkit.documents.load_ahead import LoadAhead
from evalkit.errors import DocumentError

def ahead(path):
    started = LoadAhead.start(path)
    assert started is not None, "the reader was not forked"
    return started

def read_ahead_only(path):
    # The table read ahead and the one load gives; fails if the table was read here (the fallback).
    reader = ahead(path)
    expected = case_table.load(path)
    original = case_table.load

    def refuse(*args, **kwargs):
        raise AssertionError("read here, not in the forked reader")

    case_table.load = refuse
    try:
        return reader.table(), expected
    finally:
        case_table.load = original

def same_table(got, expected):
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs == expected.attrs
    for column in ("citations", "retrieval_executions", "spans", "extensions"):  # the shared read-only cells
        empty = EMPTY_DICT if column == "extensions" else EMPTY_LIST
        assert [c is empty for c in got[column]] == [c is empty for c in expected[column]], column
    # rows without a map of their own share one object
    assert got["evaluators"].map(id).nunique() == expected["evaluators"].map(id).nunique()
"""


def _fresh(script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = PREAMBLE + textwrap.dedent(script)
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_upstream_samples_read_ahead_give_the_table_load_gives():
    out = _fresh(
        """
        for path in sys.argv[1:]:
            same_table(*read_ahead_only(path))
            print("same", os.path.basename(path))
        """,
        *map(str, SAMPLES),
    )
    assert out.split() == [word for sample in SAMPLES for word in ("same", sample.name)]
    assert len(SAMPLES) >= 10


def test_allowlists_and_own_evaluator_maps_come_across(tmp_path):
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"ExactMatch": {}},
        "default_allowed_tools": ["search"],
        "items": [
            {"prompt": "a", "response": "a", "evaluators": {"Citations": {}}, "allowed_tools": ["fetch"]},
            {"prompt": "b", "evaluators": {"PartialMatch": {}}, "evaluators_mode": "replace", "tags": ["x"]},
            {"prompt": "c", "diagnostics": {"retrieval_executions": [{"query": "q", "results": []}]}},
        ],
    }
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = _fresh(
        """
        got, expected = read_ahead_only(sys.argv[1])
        same_table(got, expected)
        print(got["allowed_tools"].tolist(), got["evaluators"].tolist()[1])
        """,
        str(path),
    )
    assert out.strip() == "[['search', 'fetch'], ['search'], ['search']] {'PartialMatch': {}}"


def test_a_mistake_in_the_document_is_the_same_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"schemaVersion": "1.11.0", "items": [{"prompt": ""}]}', encoding="utf-8")
    out = _fresh(
        """
        def error(load):
            try:
                load()
            except DocumentError as exc:
                return str(exc)
        here, there = error(lambda: case_table.load(sys.argv[1])), error(lambda: ahead(sys.argv[1]).table())
        print(here == there, there)
        """,
        str(path),
    )
    assert out.startswith("True ")
    assert "items[0].prompt" in out


def test_the_readers_warnings_are_given_here(tmp_path):
    path = tmp_path / "legacy.json"
    path.write_text('[{"prompt": "hello"}]', encoding="utf-8")  # upgraded in memory, with a warning
    out = _fresh(
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = ahead(sys.argv[1]).table()
        print(table["prompt"].tolist(), [str(w.message) for w in caught])
        """,
        str(path),
    )
    assert out.startswith("['hello'] [")
    assert "legacy bare-array document upgraded in memory" in out


def test_a_reader_that_dies_costs_time_not_the_table():
    out = _fresh(
        """
        reader = ahead(sys.argv[1])
        os.kill(reader.pid, signal.SIGKILL)
        loads = []
        original = case_table.load
        case_table.load = lambda path: loads.append(path) or original(path)
        same_table(reader.table(), original(sys.argv[1]))
        print("read here:", len(loads))
        try:
            os.waitpid(reader.pid, 0)
        except ChildProcessError:
            print("reaped")
        """,
        str(SAMPLES[0]),
    )
    assert out.split("\n")[:2] == ["read here: 1", "reaped"]


def test_closing_without_the_table_reaps_the_reader():
    out = _fresh(
        """
        reader = ahead(sys.argv[1])
        reader.close()
        reader.close()  # twice is harmless
        try:
            os.waitpid(reader.pid, 0)
        except ChildProcessError:
            print("reaped")
        """,
        str(SAMPLES[0]),
    )
    assert out.strip() == "reaped"


def test_the_command_line_imports_neither_pandas_nor_numpy():
    """The reader is forked before pandas is imported, so that the two overlap; importing the command line
    must not import pandas itself (it did: 0.4 s before the fork)."""
    code = "import sys, evalkit.cli; print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_reader_imports_neither_pandas_nor_numpy():
    code = (
        "import sys\n"
        "from evalkit.documents.case_cells import read_cells\n"
        "cells = read_cells(sys.argv[1]).listed()\n"
        "print(cells.rows, sorted(m for m in ('pandas', 'numpy') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(SAMPLES[0])], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 1)[1].strip() == "[]"
