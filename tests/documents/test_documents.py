"""Eval documents <-> case table: loading, upgrades, evaluator resolution, exact round trip."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import evalkit
from evalkit.documents.versions import LATEST_VERSION, EvalkitWarning
from evalkit.errors import DocumentError


def corpus_files(reference):
    root = reference / "m365-copilot-eval"
    return sorted((root / "samples").glob("*.json")) + sorted(
        (root / "schema/v1/examples/valid").glob("*.json")
    )


def test_every_upstream_document_round_trips_exactly(reference):
    files = corpus_files(reference)
    assert len(files) >= 20
    for path in files:
        df = evalkit.load(path)
        assert evalkit.to_document(df) == json.loads(path.read_text()), path.name


def test_threads_become_one_row_per_turn(reference):
    path = reference / "m365-copilot-eval/schema/v1/examples/valid/scenarios-with-mixed-errors.json"
    df = evalkit.load(path)
    threads = df[df["turn"].notna()]
    assert list(threads["item"]) == [6, 6, 6, 7, 7, 7]
    assert list(threads["turn"]) == [0, 1, 2, 0, 1, 2]
    assert list(threads["thread"].unique()) == ["conv-abc-007", "conv-abc-008"]
    assert df.loc[0, "turn"] is pd.NA
    # A recorded empty response counts as obtained; a missing one is None.
    assert df.loc[5, "response"] == ""


def test_case_table_columns_and_inputs(tmp_path):
    doc = {
        "schemaVersion": "1.11.0",
        "items": [
            {"prompt": "Hi", "response": "Hello"},
            {"prompt": "Q", "expected_response": "A", "context": "C"},
        ],
    }
    df = evalkit.load(doc)
    assert list(df.columns[:13]) == [
        "item", "turn", "thread", "prompt", "expected_response", "context", "response",
        "citations", "retrieval_executions", "tool_calls", "spans", "evaluators", "extensions",
    ]  # fmt: skip
    assert df.loc[0, "expected_response"] == "" and df.loc[0, "context"] == ""
    assert df.loc[1, "response"] is None
    assert df.attrs["evalkit"]["document"] == {"schemaVersion": "1.11.0"}


def test_legacy_bare_array_is_upgraded_in_memory_only(tmp_path):
    path = tmp_path / "legacy.json"
    text = json.dumps([{"prompt": "What is 2+2?", "expected_response": "4"}])
    path.write_text(text)
    with pytest.warns(EvalkitWarning, match="legacy bare-array"):
        df = evalkit.load(path)
    assert path.read_text() == text
    assert df.loc[0, "expected_response"] == "4"
    assert evalkit.to_document(df)["schemaVersion"] == LATEST_VERSION


def test_upstream_legacy_prompt_lists_are_upgraded_in_memory_only(reference):
    # upstream's samples/example_prompts_alt.json, which the upstream CLI still reads
    path = reference / "m365-copilot-eval/legacy/example_prompts_alt.json"
    text = path.read_text()
    legacy = json.loads(text)
    with pytest.warns(EvalkitWarning) as caught:
        df = evalkit.load(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: legacy 'prompts' / 'expected_responses' document upgraded in memory to items "
        f"(schemaVersion {LATEST_VERSION}; the file is unchanged)."
    ]
    assert path.read_text() == text
    assert df["prompt"].tolist() == legacy["prompts"]
    assert df["expected_response"].tolist() == legacy["expected_responses"]
    assert evalkit.to_document(df) == {
        "schemaVersion": LATEST_VERSION,
        "items": [
            {"prompt": p, "expected_response": e}
            for p, e in zip(legacy["prompts"], legacy["expected_responses"], strict=True)
        ],
    }


def test_legacy_prompt_lists_keep_their_other_fields_and_need_one_expected_response_per_prompt():
    doc = {"schemaVersion": "1.4.0", "default_evaluators": {"ExactMatch": {}}, "prompts": ["a", "b"]}
    with pytest.warns(EvalkitWarning, match=r"schemaVersion 1\.4\.0; the file is unchanged"):
        df = evalkit.load(doc)
    assert df["prompt"].tolist() == ["a", "b"] and df["expected_response"].tolist() == ["", ""]
    assert evalkit.to_document(df)["default_evaluators"] == {"ExactMatch": {}}
    with pytest.raises(DocumentError) as caught:
        evalkit.load({"prompts": ["a", "b"], "expected_responses": ["x"]})
    assert str(caught.value) == (
        "<document>: legacy 'prompts' / 'expected_responses' document: 2 prompts but 1 in 'expected_responses'; "
        "give a list of one expected response per prompt, or leave 'expected_responses' out."
    )


def test_missing_schema_version_is_upgraded_with_a_warning(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"items": [{"prompt": "Hi"}]}))
    with pytest.warns(EvalkitWarning, match="no 'schemaVersion'"):
        df = evalkit.load(path)
    assert evalkit.to_document(df)["schemaVersion"] == LATEST_VERSION
    assert "schemaVersion" not in json.loads(path.read_text())


def test_future_major_version_is_refused_naming_it():
    with pytest.raises(DocumentError, match=r"schemaVersion '2\.0\.0' is not supported"):
        evalkit.load({"schemaVersion": "2.0.0", "items": [{"prompt": "Hi"}]})


def test_newer_minor_version_loads_with_a_warning():
    with pytest.warns(EvalkitWarning, match="newer than"):
        evalkit.load({"schemaVersion": "1.12.0", "items": [{"prompt": "Hi"}]})


def test_invalid_document_is_refused_with_every_problem():
    doc = {"schemaVersion": "1.4.0", "items": [{"prompt": "a", "expeceted_response": "b"}, {"turns": []}]}
    with pytest.raises(DocumentError) as info:
        evalkit.load(doc)
    text = str(info.value)
    assert "items[0]: 'expeceted_response' is not allowed" in text
    assert "items[1]" in text


def test_system_defaults_without_default_evaluators():
    df = evalkit.load({"schemaVersion": "1.6.0", "items": [{"prompt": "Hi"}]})
    assert df.loc[0, "evaluators"] == {"Relevance": {}, "Coherence": {}}


def test_extend_merges_by_name_and_item_entry_replaces_default_entry_whole():
    doc = {
        "schemaVersion": "1.6.0",
        "default_evaluators": {"PartialMatch": {"threshold": 0.9, "case_sensitive": True}, "Citations": {}},
        "items": [
            {"prompt": "a", "evaluators": {"PartialMatch": {"threshold": 0.3}}},
            {"prompt": "b", "evaluators": {"ExactMatch": {}}, "evaluators_mode": "replace"},
            {"prompt": "c"},
            {"prompt": "d", "evaluators": {}, "evaluators_mode": "replace"},
            {"turns": [{"prompt": "e", "evaluators": {"ExactMatch": {}}}]},
        ],
    }
    maps = evalkit.load(doc)["evaluators"].tolist()
    assert maps[0] == {"PartialMatch": {"threshold": 0.3}, "Citations": {}}
    assert maps[1] == {"ExactMatch": {}}
    assert maps[2] == {"PartialMatch": {"threshold": 0.9, "case_sensitive": True}, "Citations": {}}
    assert maps[3] == {}
    assert maps[4] == {
        "PartialMatch": {"threshold": 0.9, "case_sensitive": True},
        "Citations": {},
        "ExactMatch": {},
    }


def test_fields_evalkit_does_not_act_on_are_kept(reference):
    path = reference / "m365-copilot-eval/schema/v1/examples/valid/allowed-tools.json"
    doc = evalkit.to_document(evalkit.load(path))
    assert doc["default_allowed_tools"] == ["github_orgs_get"]
    assert doc["items"][2]["allowed_tools"] == [] and doc["items"][2]["allowed_tools_mode"] == "replace"
    assert doc["items"][3]["turns"][0]["allowed_tools_mode"] == "replace"


def test_loading_does_not_mutate_the_callers_dict():
    doc = {"schemaVersion": "1.6.0", "items": [{"prompt": "Hi", "response": "Hello", "tags": ["a"]}]}
    df = evalkit.load(doc)
    # tags keep the item's dict in source (documents/rebuilt_items.py)
    df.loc[0, "source"]["prompt"] = "changed"
    df.loc[0, "source"]["tags"].append("b")
    assert doc["items"][0] == {"prompt": "Hi", "response": "Hello", "tags": ["a"]}


def test_public_api_names_are_functions_even_after_submodules_load():
    """A submodule named like an API function would shadow it once imported (evalkit.summary was one)."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(evalkit.__path__):
        if info.name != "__main__":  # that one runs the CLI
            importlib.import_module(f"evalkit.{info.name}")
    for name in evalkit.__all__:
        if name != "__version__":
            assert callable(getattr(evalkit, name)), name
