"""evalkit's CSV writer (``csv_text``, issue 20) writes the bytes ``DataFrame.to_csv`` writes, for every column
kind it takes, including the cells where a hand-written writer would go wrong; other kinds still go to to_csv."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from evalkit.documents.encoding import csv_cells
from evalkit.documents.encoding.csv_cells import guard_frame, write_frame


def _written(frame: pd.DataFrame, **kwargs) -> str:
    handle = io.StringIO()
    write_frame(frame, handle, **kwargs)
    return handle.getvalue()


def _to_csv(frame: pd.DataFrame, header: bool = True) -> str:
    return guard_frame(frame.copy()).to_csv(None, index=False, header=header, lineterminator="\n")


def _frames() -> dict[str, pd.DataFrame]:
    floats = [0.5, -0.0, 0.0, float("nan"), 1e-05, 1e16, 0.1 + 0.2, float("inf"), -1e-7, 123456789.123456789]
    return {
        "floats": pd.DataFrame({"f": floats, "g": np.array(floats, dtype=np.float32)}),
        "integers and booleans": pd.DataFrame(
            {
                "i": [1, -2, 3, 2**62, 0],
                "u": np.array([1, 2, 3, 4, 5], dtype=np.uint8),
                "b": [True, False, True, True, False],
                "n": pd.array([1, None, 3, None, -5], dtype="Int64"),
                "nb": pd.array([True, None, False, True, None], dtype="boolean"),
            }
        ),
        "mixed objects": pd.DataFrame(
            {
                "o": [None, float("nan"), pd.NA, True, -0.5],
                "t": ["a,b", 'say "hi"', "line\nbreak", "", "=1+1"],
                "n": [np.float64(0.25), np.int64(3), [1, 2], {"k": 1}, "'@x"],
            }
        ),
        "text with missing cells": pd.DataFrame(
            {"t": ["x", None, "y, z", float("nan"), "-3"], "u": [None] * 5}
        ),
        "one column of empty cells": pd.DataFrame({"only": ["", None, "a", float("nan"), ""]}),
        "no rows": pd.DataFrame({"a": pd.Series([], dtype=object), "b": pd.Series([], dtype=float)}),
        "guarded names": pd.DataFrame({"=sum": [1], "a,b": ["x"], '"q"': [2.5]}),
        # few distinct values among many rows: guarded, quoted and written once per distinct value
        "repeated cells": pd.DataFrame(
            {
                "formula": ["=1", "ok", "-2", "'@x"] * 10,
                "quoted": ['a, "b"', "plain", "line\nbreak", "tab\tx"] * 10,
                "harmless": ["pass", "fail"] * 20,
                "match": np.array([True, False, None, True] * 10, dtype=object),
                "none": np.array([None] * 40, dtype=object),
            }
        ),
    }


@pytest.mark.parametrize("name", list(_frames()))
@pytest.mark.parametrize("header", [True, False])
def test_writes_the_bytes_of_to_csv(name, header):
    frame = _frames()[name]
    assert _written(frame.copy(), header=header) == _to_csv(frame, header)


def test_chunk_edges_change_nothing(monkeypatch):
    frame = pd.DataFrame({"a": [f"row {i}, x" for i in range(10)], "b": np.arange(10) / 3})
    whole = _written(frame.copy())
    monkeypatch.setattr(csv_cells, "CHUNK_ROWS", 3)
    assert _written(frame.copy()) == whole == _to_csv(frame)


def test_carriage_returns_are_quoted():
    """A cell holding ``\\r`` alone is quoted (Python's csv leaves it bare with ``\\n`` line ends)."""
    frame = pd.DataFrame({"a": ["x\r=1", "plain"], "b": [1, 2]})
    assert _written(frame) == 'a,b\n"x\r=1",1\nplain,2\n'


def test_the_frame_is_left_as_it_is():
    frame = pd.DataFrame({"a": ["=1", "b"]})
    _written(frame)
    assert frame["a"].tolist() == ["=1", "b"]


def test_other_column_kinds_go_through_to_csv():
    frame = pd.DataFrame(
        {
            "when": pd.to_datetime(["2024-01-02", None]),
            "kind": pd.Categorical(["a", "=b"]),
            "c": [1 + 2j, 3j],
        }
    )
    assert _written(frame.copy()) == _to_csv(frame)
    assert "'=b" in _written(frame.copy())
