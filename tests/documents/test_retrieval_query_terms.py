"""RetrievalQuery ``includes`` / ``excludes`` as one string (the seed's options table) or a list (its example).

A string is one substring; results written back use lists, so they stay valid against the upstream schema.
"""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

import evalkit
from evalkit.documents.validation import schema_problems


def _execution(query: str) -> dict:
    return {
        "capability": "OneDriveAndSharePoint",
        "status": "success",
        "totalResultCount": 0,
        "queries": [{"queryString": query, "filterExpression": None}],
        "retrievalHits": [],
    }


def _item(includes, excludes, query: str) -> dict:
    options = {"capability": "OneDriveAndSharePoint", "selector": "Q4 sales report"}
    if includes is not None:
        options["includes"] = includes
    if excludes is not None:
        options["excludes"] = excludes
    return {
        "prompt": "Find the Q4 sales report in SharePoint",
        "response": "Here is the Q4 sales report.",
        "evaluators": {"RetrievalQuery": options},
        "evaluators_mode": "replace",
        "diagnostics": {"retrieval_executions": [_execution(query)]},
    }


@pytest.fixture
def document() -> dict:
    return {
        "schemaVersion": "1.6.0",
        "default_evaluators": {
            "RetrievalQuery": {"capability": "OneDriveAndSharePoint", "selector": "Q4", "includes": "Q4"}
        },
        "items": [
            _item("profit margin", "FileType:OneNote", "Q4 sales report profit margin"),  # pass
            _item("profit margin", None, "Q4 sales report profit and margin"),  # one substring: missing
            _item(None, "FileType:OneNote", "Q4 sales report FileType:OneNote"),  # excluded term found
            _item(["projections", "profit"], ["FileType:OneNote"], "Q4 sales report projections profit"),
            {
                "turns": [
                    {
                        **_item("profit", "draft", "Q4 sales report profit"),
                        "evaluators_mode": "replace",
                    }
                ]
            },
        ],
    }


def test_string_terms_are_valid_and_read_as_one_substring(document, tmp_path):
    assert schema_problems(document) == []
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document))
    scored = evalkit.evaluate(evalkit.load(path))
    assert scored["retrievalQuery_result"].tolist() == ["pass", "fail", "fail", "pass", "pass"]
    details = scored["retrievalQuery_details"].tolist()
    assert details[1]["includes_missing"] == ["profit margin"]
    assert details[2]["excludes_found"] == ["FileType:OneNote"]


def test_results_use_lists_and_validate_against_upstream(document, tmp_path, upstream_schema):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document))
    before = copy.deepcopy(document)
    written = evalkit.to_document(evalkit.evaluate(evalkit.load(path)))
    jsonschema.Draft202012Validator(upstream_schema).validate(written)
    assert written["default_evaluators"]["RetrievalQuery"]["includes"] == ["Q4"]
    first = written["items"][0]["evaluators"]["RetrievalQuery"]
    assert (first["includes"], first["excludes"]) == (["profit margin"], ["FileType:OneNote"])
    assert "excludes" not in written["items"][1]["evaluators"]["RetrievalQuery"]
    assert written["items"][3]["evaluators"]["RetrievalQuery"]["includes"] == ["projections", "profit"]
    turn = written["items"][4]["turns"][0]["evaluators"]["RetrievalQuery"]
    assert (turn["includes"], turn["excludes"]) == (["profit"], ["draft"])
    assert document == before  # the document read is not changed


def test_empty_or_non_text_terms_are_still_refused(document):
    document["items"][0]["evaluators"]["RetrievalQuery"]["includes"] = ""
    document["items"][1]["evaluators"]["RetrievalQuery"]["includes"] = 3
    problems = schema_problems(document)
    assert len(problems) == 2
    assert problems[0].startswith("items[0].evaluators.RetrievalQuery.includes")
    assert problems[1].startswith("items[1].evaluators.RetrievalQuery.includes")
