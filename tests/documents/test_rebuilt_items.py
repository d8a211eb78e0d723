"""Items the columns rebuild exactly keep no dict in ``source``, and are written back byte for byte the same.

Every document is written both ways: as ``load`` now builds the table (None in ``source`` where
``rebuilt_items.rebuilt_exactly`` holds) and with every item's dict kept, unscored and scored, and the JSON texts
must be identical. Material: the upstream corpus vendored in tests/reference (origin and licence in its
README), the golden seeds under tests/reporting/data/golden, the bundled documents under data/, and a
hand-written document of the edge cases (empty values, nulls, key order, diagnostics, threads).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalkit
from evalkit.documents import case_cells
from evalkit.documents.rebuilt_items import rebuilt_exactly
from evalkit.reporting.page_details import item_tags

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "reference" / "m365-copilot-eval"
DOCUMENTS = sorted(
    [
        *(CORPUS / "samples").glob("*.json"),
        *(CORPUS / "schema" / "v1" / "examples" / "valid").glob("*.json"),
        *(ROOT / "tests" / "reporting" / "data" / "golden").glob("*.json"),
        *(ROOT / "tests" / "reporting" / "data" / "golden" / "expected").glob("*/*.json"),
        ROOT / "data" / "demo.json",
        ROOT / "data" / "agent_demo.json",
        ROOT / "data" / "feedbackqa.json",
    ]
)
DETERMINISTIC = {"ExactMatch": {}, "PartialMatch": {}, "Citations": {}}

EDGES = {
    "schemaVersion": "1.11.0",
    "items": [
        {"prompt": "plain", "expected_response": "a", "response": "a"},
        {"prompt": "only a prompt"},
        {"prompt": "empty expected", "expected_response": ""},
        {"prompt": "null response", "response": None},
        {"prompt": "empty context", "context": "", "response": "r"},
        {"response": "r", "prompt": "response first"},
        {"prompt": "cited", "response": "r [1]", "citations": [{"index": 1, "title": "t"}]},
        {"prompt": "no citations", "citations": []},
        {
            "prompt": "diag",
            "diagnostics": {"retrieval_executions": [{"capability": "search", "status": "ok"}]},
        },
        {"prompt": "empty diag", "diagnostics": {}},
        {"prompt": "ext", "extensions": {"dev.example": {"n": 1}}},
        {"prompt": "empty ext", "extensions": {}},
        {"prompt": "tagged", "tags": ["hr"]},
        {"prompt": "own map", "evaluators": {"ExactMatch": {}}},
        {"name": "thread", "turns": [{"prompt": "t1", "response": "x"}, {"prompt": "t2", "tags": ["a"]}]},
    ],
}


def _full(monkeypatch, path: Path, validate: bool):
    """The table with every item's dict kept, as ``load`` built it before."""
    with monkeypatch.context() as patch:
        patch.setattr(case_cells, "kept_sources", list)
        return evalkit.load(path, validate=validate)


def _text(document: dict) -> str:
    return json.dumps(document, ensure_ascii=False, indent=1)


def _both_ways(monkeypatch, path: Path, validate: bool = True) -> tuple:
    slim, full = evalkit.load(path, validate=validate), _full(monkeypatch, path, validate)
    assert _text(evalkit.to_document(slim)) == _text(evalkit.to_document(full))
    assert item_tags(slim) == item_tags(full)
    if "status" in slim.columns or slim["source"].map(lambda s: isinstance(s, dict) and "status" in s).any():
        return slim, full  # a results file: evalkit.read_run reads it (its items keep their dicts)
    for table in (slim, full):
        table["evaluators"] = [DETERMINISTIC] * len(table)  # no judge model in tests
    scored = [evalkit.evaluate(table, progress=False) for table in (slim, full)]
    assert _text(evalkit.to_document(scored[0])) == _text(evalkit.to_document(scored[1]))
    return slim, full


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_corpus_is_written_the_same_with_or_without_the_kept_dicts(monkeypatch, path):
    _both_ways(monkeypatch, path)


def test_edge_cases_are_written_the_same_and_only_the_rebuildable_drop_their_dicts(monkeypatch, tmp_path):
    path = tmp_path / "edges.json"
    path.write_text(json.dumps(EDGES), encoding="utf-8")
    slim, full = _both_ways(monkeypatch, path, validate=False)  # a null response is not valid, still kept
    dropped = [row.prompt for row in slim.itertuples() if row.source is None]
    assert dropped == ["plain", "only a prompt", "cited", "diag", "ext", "t1"]
    assert all(isinstance(source, dict) for source in full["source"])


def test_read_run_still_reads_the_results_of_a_run(tmp_path):
    document = tmp_path / "doc.json"
    document.write_text(
        json.dumps({"schemaVersion": "1.11.0", "items": EDGES["items"][:2]}), encoding="utf-8"
    )
    table = evalkit.load(document)
    table["evaluators"] = [DETERMINISTIC] * len(table)
    assert table["source"].tolist() == [None, None]
    scored = evalkit.evaluate(table, progress=False)
    evalkit.save_results(scored, tmp_path / "out")
    run = evalkit.read_run(tmp_path / "out")
    assert run["status"].tolist() == scored["status"].tolist() == ["fail", "error"]
    assert run["exactMatch_result"].tolist() == scored["exactMatch_result"].tolist()


def test_the_rule_refuses_what_it_cannot_rebuild():
    assert rebuilt_exactly({"prompt": "p", "response": "r"})
    assert not rebuilt_exactly({"prompt": 3})
    assert not rebuilt_exactly({"prompt": "p", "status": "pass"})
    assert not rebuilt_exactly(
        {"prompt": "p", "diagnostics": {"tool_calls": {}, "retrieval_executions": [1]}}
    )
    assert not rebuilt_exactly({"prompt": "p", "diagnostics": {"retrieval_executions": []}})
    assert not rebuilt_exactly(["prompt"])
