"""Empty ``citations`` / ``retrieval_executions`` / ``spans`` / ``extensions`` cells share one read-only object.

A user who changes one row's empty cell in place must not change the other rows: the shared empty refuses, with
a message saying how to give the row its own value, and assigning a new value changes that row only.
Material: the upstream corpus vendored in tests/reference (origin and licence in its README).
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest

import evalkit
from evalkit.documents.empty_cells import EMPTY_DICT, EMPTY_LIST, SharedCellError

SAMPLES = Path(__file__).resolve().parents[1] / "reference" / "m365-copilot-eval" / "samples"
LIST_COLUMNS = ("citations", "retrieval_executions", "spans")


def _table():
    return evalkit.load(SAMPLES / "hr_benefits_leave.json")


def test_empty_cells_are_the_shared_read_only_ones():
    df = _table()
    assert len(df) > 1
    for column in LIST_COLUMNS:
        assert all(cell is EMPTY_LIST for cell in df[column]), column
    assert all(cell is EMPTY_DICT for cell in df["extensions"])
    assert isinstance(EMPTY_LIST, list) and EMPTY_LIST == []
    assert isinstance(EMPTY_DICT, dict) and EMPTY_DICT == {}


@pytest.mark.parametrize("column", LIST_COLUMNS)
@pytest.mark.parametrize(
    "change",
    [
        lambda cell: cell.append({"index": 1}),
        lambda cell: cell.extend([1]),
        lambda cell: cell.insert(0, 1),
        lambda cell: cell.__iadd__([1]),
        lambda cell: cell.__setitem__(slice(0, 0), [1]),
    ],
)
def test_changing_one_rows_empty_list_in_place_is_refused_and_no_row_changes(column, change):
    df = _table()
    with pytest.raises(SharedCellError, match=r"shared by every row .* df\.at\[row, column\] = \[\.\.\.\]"):
        change(df.at[0, column])
    assert all(cell == [] for cell in df[column])


def test_changing_one_rows_empty_extensions_in_place_is_refused():
    df = _table()
    for change in (
        lambda cell: cell.__setitem__("k", 1),
        lambda cell: cell.update(k=1),
        lambda cell: cell.setdefault("k", 1),
        lambda cell: cell.__ior__({"k": 1}),
    ):
        with pytest.raises(SharedCellError, match=r"df\.at\[row, column\] = \{\.\.\.\}"):
            change(df.at[0, "extensions"])
    assert all(cell == {} for cell in df["extensions"])


def test_assigning_a_new_value_changes_that_row_only_and_is_written_back():
    df = _table()
    df.at[0, "citations"] = [{"index": 1, "title": "Leave policy"}]
    df.at[0, "extensions"] = {"dev.example": {"reviewed": True}}
    own = list(df.at[1, "citations"])  # a copy of a shared empty is an ordinary list
    own.append({"index": 2})
    assert df.at[1, "citations"] == [] and df.at[1, "extensions"] == {}
    items = evalkit.to_document(df)["items"]
    assert items[0]["citations"] == [{"index": 1, "title": "Leave policy"}]
    assert items[0]["extensions"] == {"dev.example": {"reviewed": True}}
    assert "citations" not in items[1] and "extensions" not in items[1]


def test_copies_and_pickles_of_the_shared_empties():
    assert pickle.loads(pickle.dumps(EMPTY_LIST)) is EMPTY_LIST
    assert pickle.loads(pickle.dumps(EMPTY_DICT)) is EMPTY_DICT
    assert copy.deepcopy(_table())["spans"].iloc[0] is EMPTY_LIST
    fresh = EMPTY_LIST.copy()
    fresh.append(1)
    assert type(fresh) is list and EMPTY_LIST == []
    assert json.dumps([EMPTY_LIST, EMPTY_DICT]) == "[[], {}]"


def test_evaluating_does_not_change_the_shared_empties(tmp_path):
    df = _table()
    df["evaluators"] = [{"ExactMatch": {}, "PartialMatch": {}, "Citations": {}}] * len(
        df
    )  # no judge model here
    scored = evalkit.evaluate(df, progress=False)
    evalkit.save_results(scored, tmp_path / "out")
    assert EMPTY_LIST == [] and EMPTY_DICT == {}
    assert json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["items"]
