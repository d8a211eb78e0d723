"""Result values shared between rows (issue 20's memory): Citations' details and the row statuses.

Rows whose ``citations_details`` can only be equal share one dict, and ``status`` holds one str object per
status. These tests check that the sharing is real (it failed before: one dict and one str per row), that
the written files are the bytes that one dict per row gives, that no writer changes a shared dict, and that
replacing one row's cell through pandas changes that row only.

Material: the Citations items of microsoft/m365-copilot-eval's ``samples/prompts_rag_grounding.json`` (MIT
License, Copyright (c) Microsoft Corporation; vendored under ``tests/reference/m365-copilot-eval``), with
their LLM-judged evaluators removed and responses citing in the styles the upstream evaluator reference
lists.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pandas as pd
import pytest

import evalkit

SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "reference"
    / "m365-copilot-eval"
    / "samples"
    / "prompts_rag_grounding.json"
)
#: Responses cycled over the items: nothing cited, one index in two styles, an index with a URL, two indices.
RESPONSES = (
    "Employees accrue 1.5 days a month.",
    "Employees accrue 1.5 days a month [1].",
    "Employees accrue 1.5 days a month 【1:0†policy.pdf】.",
    "See [the policy](https://contoso.example/leave) and [1](https://contoso.example/hr).",
    "Parental leave is 16 weeks [2] and can be split [1].",
)
_TIME = re.compile(rb'(\\?"evaluatedAt\\?": ?\\?")[^"\\]*')


def _document() -> dict:
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    items = [item for item in doc["items"] if "Citations" in (item.get("evaluators") or {})]
    doc.pop("default_evaluators")
    for number, item in enumerate(items):
        item["evaluators"] = {"Citations": item["evaluators"]["Citations"]}
        item["evaluators_mode"] = "replace"
        item["response"] = RESPONSES[number % len(RESPONSES)]
    items[1]["citations"] = [{"index": 1, "text": "Leave policy", "source": "https://contoso.example/leave"}]
    doc["items"] = items * 4  # enough rows that every kind of details repeats
    return doc


@pytest.fixture
def scored() -> pd.DataFrame:
    return evalkit.evaluate(evalkit.load(_document()), progress=False)


def _masked(data: bytes) -> bytes:
    return _TIME.sub(rb"\1<time>", data)


def _files(df: pd.DataFrame, out: Path) -> dict[str, bytes]:
    paths = evalkit.save_results(df, out)
    return {kind: _masked(path.read_bytes()) for kind, path in paths.items()}


def test_rows_with_equal_details_share_one_dict(scored):
    details = scored["citations_details"].tolist()
    groups: dict[tuple, list[int]] = {}
    for value, response, cited, evaluators in zip(
        details, scored["response"], scored["citations"], scored["evaluators"], strict=True
    ):
        key = (response, bool(cited), evaluators["Citations"]["citation_format"])
        groups.setdefault(key, []).append(id(value))
    assert all(len(ids) >= 2 for ids in groups.values())
    for (response, cited, _), ids in groups.items():
        if cited or "https://" in response:  # recorded text or a URL source: a dict of its own
            assert len(set(ids)) == len(ids), response
        else:
            assert len(set(ids)) == 1, response
    assert details[0] == {"format": "inline", "citations": []}


def test_statuses_are_shared_str_objects(scored):
    statuses = scored["status"].tolist()
    assert len(statuses) > 20
    assert len({id(s) for s in statuses}) == len(set(statuses))


def test_files_are_the_bytes_of_one_dict_per_row(scored, tmp_path):
    own = scored.copy()
    own["citations_details"] = [copy.deepcopy(d) for d in scored["citations_details"]]
    assert len({id(d) for d in own["citations_details"]}) == len(own)
    shared_files = _files(scored, tmp_path / "shared")
    own_files = _files(own, tmp_path / "own")
    assert shared_files == own_files
    assert b'"citations": [{"index": 1}]' in shared_files["json"]


def test_writers_leave_the_shared_dicts_as_they_were(scored, tmp_path):
    before = copy.deepcopy(scored["citations_details"].tolist())
    evalkit.save_results(scored, tmp_path / "out")
    evalkit.to_document(scored)
    evalkit.summary(scored)
    assert scored["citations_details"].tolist() == before


def test_replacing_one_rows_details_changes_that_row_only(scored, tmp_path):
    details = scored["citations_details"].tolist()
    first, second = [
        i for i, d in enumerate(details) if d == {"format": "inline", "citations": [{"index": 1}]}
    ][:2]
    assert details[first] is details[second]
    scored.at[first, "citations_details"] = {"format": "inline", "citations": [{"index": 7}]}
    written = json.loads((evalkit.save_results(scored, tmp_path / "out")["json"]).read_text(encoding="utf-8"))
    scores = [item["scores"]["citations"] for item in written["items"]]
    assert scores[first]["citations"] == [{"index": 7}]
    assert scores[second]["citations"] == [{"index": 1}]
    assert details[second] == {"format": "inline", "citations": [{"index": 1}]}


def test_scoring_keeps_little_memory_per_row():
    """What ``evaluate`` keeps for three deterministic evaluators: the result columns (about 8 bytes a row
    each) and one copy of the table's column arrays, not a dict or a str per row (about 600 bytes a row at
    10,000 rows; 1,030 before the sharing)."""
    import gc
    import tracemalloc

    n = 10_000
    markers = ("", " [1]", " 【1:0†doc】")
    items = [
        {
            "prompt": f"q{i}",
            "expected_response": f"leave days {i % 7}",
            "response": f"leave days {i % 5}{markers[i % 3]}",
        }
        for i in range(n)
    ]
    defaults = {"ExactMatch": {}, "PartialMatch": {}, "Citations": {}}
    df = evalkit.load({"schemaVersion": "1.11.0", "default_evaluators": defaults, "items": items})
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        scored = evalkit.evaluate(df, progress=False)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert int(scored["citations_score"].sum()) == sum(1 for i in range(n) if i % 3)
    assert kept / n < 800, f"{kept / n:.0f} bytes a row"
