"""Tests of ``evalkit.documents.validation`` and ``evalkit validate``: what is accepted, what is refused, and how it is said.

The upstream corpus (schema examples and samples) is vendored under ``tests/reference/`` (origin and licence in
its README and LICENSE); a missing file fails the tests that read it.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from evalkit.cli import validate as validate_command
from evalkit.documents.validation import SCHEMA_PATH, read_json, schema_problems, validate_document
from evalkit.errors import DocumentError

UPSTREAM = Path(__file__).resolve().parents[1] / "reference" / "m365-copilot-eval"
EXAMPLES = UPSTREAM / "schema" / "v1" / "examples"

#: What the message for each upstream invalid example must say. A file added upstream without an entry
#: here is still checked for being refused.
INVALID_EXPECTATIONS = {
    "empty-items.json": "items: must contain at least one item",
    "invalid-semver.json": "schemaVersion: 'version-one' is not a valid version; expected 1.<minor>.<patch>",
    "missing-error-on-error.json": "items[0].scores.relevance: 'error' is required",
    "missing-schema-version.json": 'schemaVersion: is required (add "schemaVersion": "1.11.0")',
    "multi-turn-empty-turns.json": "items[0].turns: must contain at least one item",
    "multi-turn-has-both-prompt-and-turns.json": "items[0]: has both 'prompt' and 'turns'",
    "multi-turn-missing-prompt.json": "items[0].turns[0]: 'prompt' is required",
    "retrieval-query-missing-capability.json": "items[0].evaluators.RetrievalQuery: 'capability' is required",
    "retrieval-query-missing-selector.json": "items[0].evaluators.RetrievalQuery: 'selector' is required",
    "retrieval-result-missing-assertions.json": "needs 'expected_items' or 'min_expected_count'",
    "wrong-type.json": "items: expected an array, got object",
}


def _json_files(directory: Path) -> list:
    """Parameters for every ``*.json`` in ``directory`` (the vendored corpus: an empty folder is an error)."""
    files = sorted(directory.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no reference files in {directory}: the vendored corpus is incomplete")
    return [pytest.param(path, id=path.name) for path in files]


def _run_cli(*paths) -> int:
    """Call the ``validate`` command the way the CLI dispatcher will."""
    return validate_command.main(argparse.Namespace(documents=[str(p) for p in paths]))


def _write(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def _doc(*items, **root) -> dict:
    return {"schemaVersion": "1.11.0", **root, "items": list(items)}


# ------------------------------------------------------------------------------------ upstream corpus


@pytest.mark.parametrize("path", _json_files(EXAMPLES / "valid"))
def test_upstream_valid_examples_pass(path):
    assert schema_problems(read_json(path)) == []


@pytest.mark.parametrize("path", _json_files(UPSTREAM / "samples"))
def test_upstream_samples_pass(path):
    assert schema_problems(read_json(path)) == []


@pytest.mark.parametrize("path", _json_files(EXAMPLES / "invalid"))
def test_upstream_invalid_examples_are_refused_naming_the_problem(path):
    problems = schema_problems(read_json(path))
    assert problems, f"{path.name} should be refused"
    expected = INVALID_EXPECTATIONS.get(path.name)
    if expected is not None:
        # Each upstream invalid example has exactly one mistake: one problem, nothing misleading besides.
        assert len(problems) == 1, problems
        assert expected in problems[0]


@pytest.mark.parametrize("path", _json_files(EXAMPLES / "invalid"))
def test_cli_refuses_upstream_invalid_examples(path, capsys):
    assert _run_cli(path) == 2
    captured = capsys.readouterr()
    assert f"Error: {path} is not a valid eval document (1 problem):" in captured.err
    assert captured.out == ""


@pytest.mark.parametrize("path", _json_files(EXAMPLES / "valid"))
def test_cli_accepts_upstream_valid_examples(path, capsys):
    assert _run_cli(path) == 0
    assert capsys.readouterr().out == f"OK {path}\n"


# -------------------------------------------------------------------------------------------- schema


def _without_annotations(node):
    """A schema with descriptions, titles and examples dropped (names inside ``properties`` are kept)."""
    if isinstance(node, list):
        return [_without_annotations(x) for x in node]
    if not isinstance(node, dict):
        return node
    dropped = {"description", "examples", "title", "$id", "$schema", "$comment"}
    result = {}
    for key, value in node.items():
        if key in ("properties", "$defs"):
            result[key] = {name: _without_annotations(sub) for name, sub in value.items()}
        elif key not in dropped:
            result[key] = _without_annotations(value)
    return result


def test_schema_is_valid_draft_2020_12():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("https://evalkit.dev/")
    assert "ExactMatch" in schema["$comment"] and "capability" in schema["$comment"]


def test_schema_differs_from_upstream_only_where_intended():
    upstream_path = UPSTREAM / "schema" / "v1" / "eval-document.schema.json"
    ours = _without_annotations(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    theirs = _without_annotations(json.loads(upstream_path.read_text(encoding="utf-8")))
    # The seed (evaluator reference) wins over upstream on exactly these points.
    theirs["$defs"]["ExactMatchOptions"]["properties"]["case_sensitive"]["default"] = True
    del theirs["$defs"]["RetrievalResultOptions"]["required"]
    for option in ("includes", "excludes"):  # a string is one substring (the seed's options table)
        theirs["$defs"]["RetrievalQueryOptions"]["properties"][option].update(
            type=["string", "array"], minLength=1
        )
    # AgentCore's built-in span judges are named Builtin.<Name> (seed 003).
    theirs["$defs"]["EvaluatorMap"]["propertyNames"]["pattern"] = (
        r"^([a-zA-Z][a-zA-Z0-9_]*|Builtin\.[A-Za-z]+)$"
    )
    # LLM and custom evaluator entries may declare a jury (issue 17 item 2, evalkit.evaluators.jury).
    for options in ("LlmEvaluatorOptions", "CustomEvaluatorOptions"):
        theirs["$defs"][options]["properties"]["jury"] = {"$ref": "#/$defs/Jury"}
    theirs["$defs"]["Jury"], theirs["$defs"]["JuryJurors"] = (
        ours["$defs"]["Jury"],
        ours["$defs"]["JuryJurors"],
    )
    assert ours == theirs


def test_schema_defaults_follow_the_evaluator_reference():
    defs = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]
    assert defs["ExactMatchOptions"]["properties"]["case_sensitive"]["default"] is True
    assert defs["PartialMatchOptions"]["properties"]["case_sensitive"]["default"] is False


def test_retrieval_result_capability_is_optional_but_an_assertion_is_not():
    seed_example = {
        "expected_items": [{"retrievalExtract_contains": "update"}],
        "max_rank": 5,
        "min_expected_count": 2,
    }
    assert schema_problems(_doc({"prompt": "p", "evaluators": {"RetrievalResult": seed_example}})) == []
    problems = schema_problems(_doc({"prompt": "p", "evaluators": {"RetrievalResult": {"max_rank": 5}}}))
    assert problems == [
        "items[0].evaluators.RetrievalResult: needs 'expected_items' or 'min_expected_count' (at least one)"
    ]


# ---------------------------------------------------------------------------------------- messages


def test_unknown_key_message_exact_text():
    doc = _doc({"prompt": "a"}, {"turns": [{"prompt": "b", "expeceted_response": "c"}]})
    assert schema_problems(doc) == [
        "items[1].turns[0]: 'expeceted_response' is not allowed (did you mean 'expected_response'?)"
    ]


def test_item_with_both_prompt_and_turns_gets_one_clear_message():
    doc = _doc({"prompt": "a", "turns": [{"prompt": "b"}], "bogus": 1})
    assert schema_problems(doc) == [
        "items[0]: has both 'prompt' and 'turns'; an item is either a single-turn evaluation (prompt) "
        "or a thread (turns), not both"
    ]


def test_item_with_neither_prompt_nor_turns_points_at_the_typo():
    assert schema_problems(_doc({"promt": "a", "expected_response": "b"})) == [
        "items[0]: needs 'prompt' (single-turn evaluation) or 'turns' (thread)",
        "items[0]: 'promt' is not allowed (did you mean 'prompt'?)",
    ]


def test_single_turn_item_is_judged_only_as_single_turn():
    problems = schema_problems(_doc({"prompt": "a", "status": "passed"}))
    assert problems == [
        "items[0].status: must be one of 'pass', 'fail', 'partial' or 'error' (got 'passed') (did you mean 'pass'?)"
    ]
    assert not any("turns" in p for p in problems)


def test_thread_is_judged_only_as_thread():
    assert schema_problems(_doc({"turns": [{"response": "r"}], "name": 7})) == [
        "items[0].turns[0]: 'prompt' is required",
        "items[0].name: expected a string, got integer",
    ]


def test_missing_schema_version_says_how_to_fix():
    assert schema_problems({"items": [{"prompt": "a"}]}) == [
        'schemaVersion: is required (add "schemaVersion": "1.11.0")'
    ]


def test_missing_schema_version_notices_a_misspelling():
    problems = schema_problems({"schema_version": "1.11.0", "items": [{"prompt": "a"}]})
    assert problems == [
        'schemaVersion: is required (add "schemaVersion": "1.11.0") '
        "('schema_version' looks like a misspelling of it)"
    ]


def test_wrong_type_and_empty_items():
    assert schema_problems({"schemaVersion": "1.0.0", "items": {"prompt": "a"}}) == [
        "items: expected an array, got object"
    ]
    assert schema_problems({"schemaVersion": "1.0.0", "items": []}) == [
        "items: must contain at least one item"
    ]


def test_bare_array_is_not_a_document_as_written():
    assert schema_problems([{"prompt": "a"}]) == [
        "(document): expected an object with 'schemaVersion' and 'items', got array"
    ]


def test_errored_score_branch_is_chosen_when_result_is_error():
    doc = _doc({"prompt": "a", "scores": {"relevance": {"result": "error", "score": 3}}})
    assert schema_problems(doc) == [
        "items[0].scores.relevance: 'error' is required",
        "items[0].scores.relevance: 'score' is not allowed",
    ]


def test_valid_score_branch_is_chosen_otherwise():
    doc = _doc({"prompt": "a", "scores": {"relevance": {"result": "pass", "score": 7, "threshold": 3}}})
    assert schema_problems(doc) == ["items[0].scores.relevance.score: must be <= 5 (got 7)"]


def test_misspelt_error_result_is_read_as_an_errored_score():
    doc = _doc({"prompt": "a", "scores": {"coherence": {"result": "eror", "error": "boom"}}})
    assert schema_problems(doc) == ["items[0].scores.coherence.result: must be 'error' (got 'eror')"]


def test_tool_call_score_names_the_rule_that_applies():
    score = {"score": 0, "result": "pass", "threshold": 1, "reason": "selected"}
    doc = _doc({"prompt": "a", "scores": {"toolCallSelection": score}})
    assert schema_problems(doc) == [
        "items[0].scores.toolCallSelection.score: must be 1.0 when result is 'pass' (got 0)"
    ]


def test_tool_call_score_without_result_or_score_only_says_what_is_missing():
    doc = _doc({"prompt": "a", "scores": {"toolCallExecution": {"threshold": 1, "reason": "r"}}})
    assert schema_problems(doc) == [
        "items[0].scores.toolCallExecution: 'score' is required",
        "items[0].scores.toolCallExecution: 'result' is required",
    ]


def test_a_wrong_type_is_not_also_reported_as_a_wrong_value():
    assert schema_problems(_doc({"prompt": "a", "evaluators_mode": ["replace"]})) == [
        "items[0].evaluators_mode: expected a string, got array"
    ]


def test_evaluator_names_and_options():
    doc = _doc(
        {"prompt": "a", "evaluators": {"my-check": {}, "ExactMatch": {"case_sensitive": "no"}}},
        default_evaluators={"Citations": {"threshold": 0}},
    )
    assert schema_problems(doc) == [
        "default_evaluators.Citations.threshold: must be >= 1 (got 0)",
        "items[0].evaluators: 'my-check' is not a valid evaluator name; use letters, digits and '_', "
        "starting with a letter (or Builtin.<Name> for an AgentCore built-in span judge)",
        "items[0].evaluators.ExactMatch.case_sensitive: expected a boolean, got string",
    ]


def test_all_problems_are_reported_at_once_in_document_order():
    doc = {
        "schemaVersion": "one",
        "items": [
            {"prompt": "fine"},
            {"prompt": "", "expected_response": "x"},
            {"turns": [{"prompt": "ok"}, {"prompt": "ok", "evaluators_mode": "merge"}]},
        ],
    }
    assert schema_problems(doc) == [
        "schemaVersion: 'one' is not a valid version; expected 1.<minor>.<patch>",
        "items[1].prompt: must not be empty",
        "items[2].turns[1].evaluators_mode: must be one of 'extend' or 'replace' (got 'merge')",
    ]


def test_odd_keys_are_quoted_in_paths():
    doc = _doc({"prompt": "a", "scores": {"my score": {"result": "error"}}})
    # Unknown score keys are open (additionalProperties: true): nothing to report.
    assert schema_problems(doc) == []
    doc = _doc({"prompt": "a", "citations": [{"text": "t"}]})
    assert schema_problems(doc) == ["items[0].citations[0]: 'index' is required"]


# --------------------------------------------------------------------------------------- fast path

FAST_PATH_CASES = {
    "all plain": _doc(
        {"prompt": "a"}, {"prompt": "b", "expected_response": "c", "response": "d", "context": "e"}
    ),
    "empty prompt": _doc({"prompt": "a"}, {"prompt": ""}, {"prompt": "b"}),
    "non-string value": _doc(
        {"prompt": "a"}, {"prompt": "b", "context": None}, {"prompt": "c", "response": 3}
    ),
    "unknown key": _doc({"prompt": "a"}, {"prompt": "b", "promt": "c"}),
    "prompt not a string": _doc({"prompt": "a"}, {"prompt": ["b"]}),
    "plain and rich": _doc(
        {"prompt": "a"}, {"prompt": "b", "evaluators": {"RetrievalQuery": {}}}, {"turns": []}
    ),
    "both kinds": _doc({"prompt": "a"}, {"prompt": "b", "turns": [{"prompt": "c"}]}),
    "bad root with plain items": {"schemaVersion": "x", "default_evaluators": [], "items": [{"prompt": "a"}]},
    "empty items": _doc(),
    "items not a list": {"schemaVersion": "1.0.0", "items": "a"},
    "not an object": [{"prompt": "a"}],
}


@pytest.mark.parametrize("doc", FAST_PATH_CASES.values(), ids=FAST_PATH_CASES.keys())
def test_fast_path_agrees_with_full_validation(doc):
    original = copy.deepcopy(doc)
    assert schema_problems(doc) == schema_problems(doc, fast_path=False)
    assert doc == original


def test_fast_path_still_refuses_an_empty_prompt():
    doc = _doc(*({"prompt": f"q{i}"} for i in range(1000)), {"prompt": ""})
    assert schema_problems(doc) == ["items[1000].prompt: must not be empty"]


def test_fast_path_reports_original_item_indices():
    items = [{"prompt": f"q{i}"} for i in range(50)]
    items[7] = {"prompt": "q", "status": "done"}
    items[42] = {"turns": [{"prompt": "t", "expeceted_response": "x"}]}
    problems = schema_problems(_doc(*items))
    assert [p.split(":")[0] for p in problems] == ["items[7].status", "items[42].turns[0]"]
    assert problems == schema_problems(_doc(*items), fast_path=False)


def test_large_plain_document_validates_fast():
    doc = _doc(*({"prompt": f"Question {i}?", "expected_response": f"Answer {i}."} for i in range(100_000)))
    schema_problems(_doc({"prompt": "warm-up"}))  # schema loading is a one-off cost, not per document
    start = time.perf_counter()
    assert schema_problems(doc) == []
    assert time.perf_counter() - start < 1.0


# ------------------------------------------------------------------------------------------ reading


def test_read_json_reports_line_and_column(tmp_path):
    path = _write(tmp_path, "demo.json", '{\n  "schemaVersion": "1.11.0"\n  "items": []\n}\n')
    with pytest.raises(DocumentError) as info:
        read_json(path)
    assert str(info.value) == f"{path}: malformed JSON at line 3, column 3: Expecting ',' delimiter"


def test_read_json_missing_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(DocumentError, match="no such file") as info:
        read_json(path)
    assert str(info.value) == f"{path}: no such file"


def test_read_json_refuses_non_utf8_and_nan(tmp_path):
    with pytest.raises(DocumentError, match="is not UTF-8"):
        read_json(_write(tmp_path, "latin1.json", '{"prompt": "caf\u00e9"}'.encode("latin-1")))
    with pytest.raises(DocumentError, match="NaN is not valid JSON"):
        read_json(_write(tmp_path, "nan.json", '{"score": NaN}'))
    with pytest.raises(DocumentError, match="is a directory"):
        read_json(tmp_path)


def test_read_json_accepts_a_byte_order_mark(tmp_path):
    path = _write(tmp_path, "bom.json", b'\xef\xbb\xbf{"items": []}')
    assert read_json(path) == {"items": []}


def test_validate_document_raises_with_every_problem():
    with pytest.raises(DocumentError) as info:
        validate_document({"items": [{"prompt": ""}]}, "data/demo.json")
    error = info.value
    assert str(error).splitlines()[0] == "data/demo.json is not a valid eval document (2 problems):"
    assert error.problems == [
        'schemaVersion: is required (add "schemaVersion": "1.11.0")',
        "items[0].prompt: must not be empty",
    ]
    assert error.exit_code == 2
    validate_document(_doc({"prompt": "a"}), "data/ok.json")


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_reports_each_file_and_fails_if_any_is_invalid(tmp_path, capsys):
    good = _write(tmp_path, "good.json", _doc({"prompt": "a"}))
    bad = _write(
        tmp_path, "bad.json", _doc({"prompt": ""}, {"turns": [{"promt": "x"}]}, {"prompt": "b", "turns": []})
    )
    assert _run_cli(good, bad) == 2
    captured = capsys.readouterr()
    assert captured.out == f"OK {good}\n"
    assert captured.err.splitlines() == [
        f"Error: {bad} is not a valid eval document (4 problems):",
        "  - items[0].prompt: must not be empty",
        "  - items[1].turns[0]: 'prompt' is required",
        "  - items[1].turns[0]: 'promt' is not allowed (did you mean 'prompt'?)",
        "  - items[2]: has both 'prompt' and 'turns'; an item is either a single-turn evaluation (prompt) "
        "or a thread (turns), not both",
    ]
    assert "Traceback" not in captured.err


def test_cli_all_valid_exits_zero(tmp_path, capsys):
    paths = [_write(tmp_path, f"{n}.json", _doc({"prompt": n})) for n in ("a", "b")]
    assert _run_cli(*paths) == 0
    assert capsys.readouterr().out == "".join(f"OK {p}\n" for p in paths)


def test_cli_malformed_and_missing_files(tmp_path, capsys):
    broken = _write(tmp_path, "broken.json", '{"items": [}')
    missing = tmp_path / "missing.json"
    assert _run_cli(broken, missing) == 2
    err = capsys.readouterr().err
    assert f"Error: {broken}: malformed JSON at line 1, column 12: Expecting value" in err
    assert f"Error: {missing}: no such file" in err


def test_cli_judges_legacy_forms_as_written(tmp_path, capsys):
    bare = _write(tmp_path, "bare.json", [{"prompt": "a", "expected_response": "b"}])
    unversioned = _write(tmp_path, "unversioned.json", {"items": [{"prompt": "a"}]})
    assert _run_cli(bare) == 2
    err = capsys.readouterr().err
    assert "got array" in err and "`evalkit run` and `evalkit load` upgrade it in memory" in err
    assert _run_cli(unversioned) == 2
    err = capsys.readouterr().err
    assert 'schemaVersion: is required (add "schemaVersion": "1.11.0")' in err
    assert "`evalkit run` and `evalkit load`" in err
    lists = _write(tmp_path, "lists.json", {"prompts": ["a"], "expected_responses": ["b"]})
    assert _run_cli(lists) == 2
    err = capsys.readouterr().err
    assert "  note: this is the legacy 'prompts' / 'expected_responses' form; `evalkit run` and" in err


def test_register_adds_the_validate_subcommand():
    parser = argparse.ArgumentParser(prog="evalkit")
    validate_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["validate", "a.json", "b.json"])
    assert args.func is validate_command.main
    assert args.documents == ["a.json", "b.json"]
