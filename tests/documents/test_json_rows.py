"""results.json's plain items encoded column by column (``iter_items(df, encoded=True)``, issue 20) have the
bytes of the items ``iter_items`` builds as dicts, for every row: plain rows, rows the fast way must leave to
the dict way (threads, extra source fields, odd details, values an encoder refuses) and chunks mixing both.

Material: the golden documents of tests/reporting/data/golden (two of them upstream samples, see its
SOURCE.md), evaluated by the real evaluators, and tables made hostile cell by cell from them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import evalkit
from evalkit.documents import results, write_back
from evalkit.documents.encoding import json_items, json_scores
from evalkit.documents.encoding.json_items import json_encoder
from evalkit.documents.write_back import iter_items

GOLDEN = Path(__file__).resolve().parents[1] / "reporting" / "data" / "golden"
HOSTILE = ['a, b: "c"', "back\\slash \\", "x\u0000\u001f\u007f\u2028", "😀 é", "null 1e-05 %b %s", ""]


def _encoded_and_reference(df) -> tuple[list[bytes], list[bytes], int]:
    """The items by the column way (dicts it leaves encoded by the standard encoder), by the dict way, and how
    many rows the column way encoded itself."""
    encode = json_encoder()
    fast = list(iter_items(df, encoded=True))
    taken = sum(isinstance(item, bytes) for item in fast)
    fast = [item if isinstance(item, bytes) else encode(item).encode("utf-8") for item in fast]
    reference = [encode(item).encode("utf-8") for item in iter_items(df)]
    return fast, reference, taken


def _plain_table(rows: int = 40):
    items = [
        {"prompt": f"{HOSTILE[i % 6]} q{i}", "expected_response": f"e {i % 3}", "response": f"e {i % 3} [1]"}
        for i in range(rows)
    ]
    document = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {
            "ExactMatch": {},
            "PartialMatch": {},
            "Citations": {"citation_format": "mixed"},
        },
        "items": items,
    }
    return evalkit.evaluate(evalkit.load(document), progress=False)


@pytest.mark.parametrize("name", ["varied", "hr_benefits_leave", "prompts-retrieval-complex"])
def test_golden_documents_have_the_same_bytes(name):
    doc = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    for item in doc["items"]:
        for entry in [item, *item.get("turns", [])]:
            entry.pop("evaluators", None)  # their LLM judges: not run here
    doc["default_evaluators"] = {"ExactMatch": {}, "PartialMatch": {}, "Citations": {}}
    df = evalkit.evaluate(evalkit.load(doc), progress=False)
    fast, reference, _ = _encoded_and_reference(df)
    assert fast == reference


def test_plain_rows_take_the_column_way():
    df = _plain_table()
    fast, reference, taken = _encoded_and_reference(df)
    assert fast == reference
    assert taken == len(df)  # the fast way is taken: a fallback everywhere would also be byte-equal


def test_a_loaded_plain_table_takes_one_template_per_chunk(monkeypatch):
    """A loaded table's empty citations are the shared read-only list (documents/empty_cells.py): its chunks
    still take the one-template way, not the row-by-row one (which is right too, only slower)."""
    from evalkit.documents.encoding import json_rows

    def row_by_row(*_args):
        raise AssertionError("a plain chunk went row by row")

    monkeypatch.setattr(json_rows, "_by_row", row_by_row)
    df = _plain_table()
    assert all(type(cell).__name__ == "EmptyList" for cell in df["citations"])
    fast, reference, taken = _encoded_and_reference(df)
    assert fast == reference and taken == len(df)


@pytest.mark.parametrize("chunk", [1, 3, 5_000])
def test_hostile_cells_keep_their_bytes(chunk, monkeypatch):
    """Cells set one by one to what the column way must encode exactly or leave to the dict way, in chunks
    that mix plain rows and others."""
    monkeypatch.setattr(results, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(write_back, "PLAIN_SHARE", 0.0)  # the row-by-row way even for mostly odd chunks
    df = _plain_table()
    source = df["source"].tolist()
    source[1] = {**(source[1] or {}), "tags": ["x"]}  # a field the columns do not rewrite
    source[2] = {"response": "old", "prompt": "p", "error": {"code": "x"}}  # source order, error popped
    source[3] = None
    source[4] = {**(source[4] or {}), "scores": {"old": 1}, "status": "pass"}
    df["source"] = np.array(source, dtype=object)
    df.loc[5, "response"] = None  # no response: the source's stays (row 5 has one)
    df.loc[6, "expected_response"] = np.nan
    df.loc[7, "context"] = "a context, with: separators"
    df.at[8, "citations"] = [{"index": 1, "title": 't, "x"'}]
    df.at[9, "extensions"] = {"x-ext": 1}
    df.at[10, "tool_calls"] = {"calls": []}
    df.loc[11, "prompt"] = float("nan")
    df.loc[12, "exactMatch_result"] = "error"
    df.loc[12, "exactMatch_error"] = 'boom, it said: "no"'
    df.loc[12, "exactMatch_code"] = "evaluatorTimeout"
    df.loc[13, "partialMatch_result"] = None  # no entry for this evaluator
    df.loc[14, "partialMatch"] = float("nan")
    df.loc[15, "partialMatch"] = 1e-07
    df.loc[16, "partialMatch_reason"] = None
    df.loc[17, "partialMatch_threshold"] = np.nan
    df.at[18, "citations_details"] = {"result": "rewritten", "format": "x"}  # rewrites the entry's own field
    df.at[19, "citations_details"] = {"nested": {"deep": [1.5e16, None, True]}}
    df.loc[20, "status"] = None
    df.loc[21, "error_code"] = "evaluatorError"
    df.loc[21, "error_message"] = "it failed: 1e5"
    df.loc[22, "status"] = "error"
    df.loc[22, "error_code"] = ""
    df.loc[23, "citations_reason"] = None
    df.loc[24, "exactMatch"] = None
    df.loc[23, "citations_reason"] = None
    df.loc[24, "exactMatch_score" if "exactMatch_score" in df.columns else "exactMatch"] = None
    fast, reference, taken = _encoded_and_reference(df)
    assert fast == reference
    assert 0 < taken < len(df)


def test_numbers_and_texts_of_a_column():
    """encode_column: the standard encoder's bytes for columns of one kind (few distinct values or many) and
    mixed ones; -0.0 is not taken for 0.0 when distinct values are shared."""
    encode = json_encoder()
    columns = [
        [0.0, -0.0] * 10,
        [0.5, 1e16, 1e-05, 1.5, float("nan"), float("inf")],
        [0.25] * 20,
        [1, 2**70, -3] * 5,
        [True, False] * 6,
        ["a", "b"] * 10,
        HOSTILE,
        [None, 1, "x", 2.5, [1, {"k": None}], {"a": [True]}, {1: "int key"}],
        [[], [{"i": 1}], [{"i": 2}, {"i": 3}]],
        [{"a": 1, "b": [0.1]}, {"a": 2, "b": []}],
        [{"a": 1}, {"b": 2}],
        [{}, {}],
    ]
    for column in columns:
        assert json_scores.encode_column(column) == [encode(v).encode("utf-8") for v in column], column


def test_refused_values_fail_as_before(tmp_path):
    df = _plain_table(4)
    df.loc[1, "response"] = "lone \ud800"
    with pytest.raises(UnicodeEncodeError):
        evalkit.save_results(df, tmp_path / "out")
    df = _plain_table(4)
    df.loc[0, "partialMatch_reason"] = None  # a chunk whose reasons are not all text
    df.loc[1, "partialMatch_reason"] = "lone \ud800"
    with pytest.raises(UnicodeEncodeError):
        evalkit.save_results(df, tmp_path / "out2")
    df = _plain_table(4)
    df.loc[0, "partialMatch_reason"] = None  # a chunk whose reasons are not all text
    df.loc[1, "partialMatch_reason"] = "lone \ud800"
    with pytest.raises(UnicodeEncodeError):
        evalkit.save_results(df, tmp_path / "out2")
    df = _plain_table(4)
    df.at[2, "citations_details"] = {"when": object()}
    with pytest.raises(TypeError):
        for _ in json_items.encode_items(iter_items(df, encoded=True)):
            pass


def test_a_varied_generated_document_keeps_its_bytes(monkeypatch):
    """The spark tests' generated document (threads, tags, custom evaluators, errors, rows without some
    evaluators: scores NaN there), most of its rows plain, the others in the same chunks."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "spark" / "conftest.py"
    spec = importlib.util.spec_from_file_location("spark_documents", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generated_document = module.generated_document
    custom = Path(__file__).resolve().parents[2] / "custom-evaluators"
    df = evalkit.evaluate(evalkit.load(generated_document(600, seed=3)), custom_dir=custom, progress=False)
    fast, reference, taken = _encoded_and_reference(df)
    assert fast == reference
    assert taken == 0  # a quarter of its rows are not plain: the chunk is built as dicts, as before
    monkeypatch.setattr(write_back, "PLAIN_SHARE", 0.0)
    fast, reference, taken = _encoded_and_reference(df)
    assert fast == reference
    assert len(df) // 2 < taken < len(df)
