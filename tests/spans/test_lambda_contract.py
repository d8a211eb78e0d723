"""The Lambda contract as AWS's SDK and Lambda define it: null error keys on a success, a 0-1 value, and the
handler as configuration (``module.function``), found without it in AWS's sample layout.

The responses are made by AWS's own SDK (``bedrock-agentcore`` from PyPI): ``EvaluatorOutput.model_dump()``
is exactly what its ``@custom_code_based_evaluator()`` decorator returns to Lambda.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from bedrock_agentcore.evaluation.custom_code_based_evaluators import EvaluatorOutput

from evalkit import spans
from evalkit.cli import main as cli_main
from evalkit.errors import EvalkitError
from evalkit.spans.lambdas.invocation import InvalidResponse, read_response
from evalkit.spans.lambdas.packaging import build_package, span_evaluator_names

REPO = Path(__file__).resolve().parents[2]
AGENTCORE_SPANS = REPO / "data" / "agentcore_spans.jsonl"
TRACES = 6  # traces in data/agentcore_spans.jsonl


# --- the response contract -------------------------------------------------------------------------------


def test_an_sdk_success_with_null_error_keys_is_a_success():
    out = EvaluatorOutput(value=0.8, label="Pass", explanation="Looks good").model_dump()
    assert out["errorCode"] is None and out["errorMessage"] is None  # what the SDK really returns
    assert read_response(out) == {"label": "Pass", "value": 0.8, "explanation": "Looks good"}
    assert read_response(EvaluatorOutput(label="Pass").model_dump()) == {"label": "Pass"}


def test_an_sdk_error_is_an_error_with_or_without_a_message():
    out = EvaluatorOutput(errorCode="VALIDATION_FAILED", errorMessage="no spans").model_dump()
    assert read_response(out) == {"errorCode": "VALIDATION_FAILED", "errorMessage": "no spans"}
    bare = EvaluatorOutput(errorCode="VALIDATION_FAILED").model_dump()  # the SDK allows no message
    assert read_response(bare) == {
        "errorCode": "VALIDATION_FAILED",
        "errorMessage": "the evaluator returned errorCode 'VALIDATION_FAILED' without an errorMessage",
    }


def test_an_error_code_wins_over_a_label_and_an_empty_one_is_no_error():
    out = EvaluatorOutput(label="Pass", value=1.0, errorCode="Upstream", errorMessage="down").model_dump()
    assert read_response(out) == {"errorCode": "Upstream", "errorMessage": "down"}
    assert read_response({"label": "Pass", "errorCode": "", "errorMessage": None}) == {"label": "Pass"}


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({"label": "FAIL", "value": 7.5}, "'value' 7.5 is outside 0.0-1.0"),
        ({"label": "FAIL", "value": -0.1}, "'value' -0.1 is outside 0.0-1.0"),
        ({"errorCode": None, "errorMessage": "x"}, "'errorMessage' is set but 'errorCode' is not"),
        ({"errorCode": 5, "errorMessage": "x"}, "'errorCode' must be a string"),
        ({"errorCode": "E", "errorMessage": 3}, "'errorMessage' must be a string or null"),
        ({"label": None, "errorCode": None}, "the response has no 'label'"),
    ],
)
def test_contract_violations_name_what_is_wrong(response, message):
    with pytest.raises(InvalidResponse) as caught:
        read_response(response)
    assert message in str(caught.value)


def test_an_sdk_value_above_one_is_an_invalid_response_in_a_run(tmp_path):
    custom = tmp_path / "custom-evaluators"
    write(
        custom / "scores" / "lambda_function.py",
        """
        from bedrock_agentcore.evaluation.custom_code_based_evaluators import (
            EvaluatorOutput, custom_code_based_evaluator)

        @custom_code_based_evaluator()
        def handler(input, context):
            return EvaluatorOutput(label="FAIL", value=7.5)
        """,
    )
    results = spans.evaluate_spans(AGENTCORE_SPANS, ["scores:SESSION"], custom_dir=custom)
    assert {r["errorCode"] for r in results} == {"InvalidEvaluatorResponse"}
    assert "'value' 7.5 is outside 0.0-1.0" in results[0]["errorMessage"]
    assert spans.passing(results) == (0, len(results))
    assert not any("value" in r or "label" in r for r in results)  # only evalkit's normalised keys


# --- the handler, found or configured --------------------------------------------------------------------

HANDLER_BODY = "    return {'label': %r, 'value': 1.0, 'errorCode': None, 'errorMessage': None}\n"


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def handler_source(function: str, label: str) -> str:
    return f"EVALUATION_LEVEL = 'TRACE'\n\ndef {function}(event, context):\n" + HANDLER_BODY % label


@pytest.mark.parametrize(
    ("file", "function"),
    [
        ("lambda_function.py", "lambda_handler"),  # AWS's console and samples
        ("lambda_function.py", "handler"),  # AWS's CLI templates
        ("{name}.py", "lambda_handler"),  # evalkit's layout
        ("{name}.py", "handler"),
    ],
)
def test_layouts_found_without_configuration_run_in_worker_processes(tmp_path, file, function):
    custom = tmp_path / "custom-evaluators"
    write(custom / "sample" / file.format(name="sample"), handler_source(function, f"{file}:{function}"))
    ev = spans.load_span_evaluator("sample", custom)
    assert ev.function == function and ev.path.name == file.format(name="sample")
    results = spans.evaluate_spans(AGENTCORE_SPANS, [ev])  # a file-based evaluator runs in a worker
    assert [r["label"] for r in results] == [f"{file}:{function}"] * TRACES
    assert span_evaluator_names(custom) == ["sample"]


def test_lambda_handler_is_preferred_and_name_py_comes_first(tmp_path):
    custom = tmp_path / "custom-evaluators"
    both = handler_source("lambda_handler", "default") + handler_source("handler", "other")
    write(custom / "pick" / "lambda_function.py", both)
    assert spans.load_span_evaluator("pick", custom).function == "lambda_handler"
    write(custom / "pick" / "pick.py", handler_source("handler", "own"))
    ev = spans.load_span_evaluator("pick", custom)
    assert (ev.path.name, ev.function) == ("pick.py", "handler")


def test_a_configured_handler_in_python_options_the_spec_and_the_cli(tmp_path):
    custom = tmp_path / "custom-evaluators"
    write(custom / "cfg" / "app.py", handler_source("evaluate", "configured"))
    write(custom / "cfg" / "lambda_function.py", handler_source("handler", "found"))
    assert spans.load_span_evaluator("cfg", custom).function == "handler"
    for ev in (
        spans.load_span_evaluator("cfg", custom, handler="app.evaluate"),
        spans.load_span_evaluator("cfg", custom, options={"handler": "app.evaluate"}),
    ):
        assert (ev.path.name, ev.function) == ("app.py", "evaluate")
    results = spans.evaluate_spans(AGENTCORE_SPANS, ["cfg:SESSION@app.evaluate"], custom_dir=custom)
    assert {r["label"] for r in results} == {"configured"}
    assert len(results) == 4  # sessions of the file
    out = tmp_path / "out"
    argv = ["spans", "eval", str(AGENTCORE_SPANS), "--custom-dir", str(custom), "--out", str(out)]
    assert cli_main([*argv, "--evaluator", "cfg@app.evaluate"]) == 0
    labels = {r["label"] for r in json.loads((out / "results.json").read_text())["evaluationResults"]}
    assert labels == {"configured"}


def test_missing_handlers_name_the_files_the_functions_and_the_fix(tmp_path):
    custom = tmp_path / "custom-evaluators"
    write(custom / "none" / "lambda_function.py", "def helper(event, context):\n    return {}\n")
    with pytest.raises(EvalkitError) as caught:
        spans.load_span_evaluator("none", custom)
    message = str(caught.value)
    assert str(custom / "none" / "lambda_function.py") in message
    assert "defines no lambda_handler(event, context) or handler(event, context)" in message
    assert "handler='lambda_function.handler'" in message and "NAME@module.function" in message
    with pytest.raises(EvalkitError) as caught:
        spans.load_span_evaluator("none", custom, handler="app.run")
    assert f"no {custom / 'none' / 'app.py'} (the handler's file)" in str(caught.value)
    with pytest.raises(EvalkitError, match="defines no nope"):
        spans.load_span_evaluator("none", custom, handler="lambda_function.nope")
    with pytest.raises(EvalkitError, match="is not 'function' or 'module.function'"):
        spans.load_span_evaluator("none", custom, handler="lambda_function:handler")
    with pytest.raises(EvalkitError, match="unknown option"):
        spans.load_span_evaluator("none", custom, options={"handlr": "x"})
    with pytest.raises(EvalkitError, match="a built-in evaluator has not"):
        spans.evaluate_spans(AGENTCORE_SPANS, ["Builtin.Helpfulness@x.y"])


def test_the_zip_of_the_sample_layout_names_its_handler(tmp_path):
    custom = tmp_path / "custom-evaluators"
    write(custom / "sample" / "lambda_function.py", "import json\n" + handler_source("handler", "zip"))
    package = build_package("sample", tmp_path / "sample.zip", custom)
    assert package.handler == "lambda_function.handler"
    assert sorted(package.entries) == ["lambda_function.py"]
    configured = build_package("sample", tmp_path / "c.zip", custom, handler="lambda_function.handler")
    assert configured.handler == "lambda_function.handler"
    assert (tmp_path / "c.zip").read_bytes() == (tmp_path / "sample.zip").read_bytes()


# --- in an eval document ---------------------------------------------------------------------------------


def test_a_document_runs_the_sample_layout_and_its_handler_option(tmp_path):
    import pandas as pd

    from evalkit.evaluators.custom.loading import load_custom

    custom = tmp_path / "custom-evaluators"
    write(custom / "docev" / "lambda_function.py", handler_source("handler", "sample"))
    write(custom / "docev" / "app.py", handler_source("evaluate", "configured"))
    evaluator = load_custom("docev", custom)
    docs = [json.loads(line) for line in AGENTCORE_SPANS.read_text().splitlines()]
    rows = pd.DataFrame({"spans": [docs, docs, docs]})
    configs = [{}, {"options": {"handler": "app.evaluate"}}, {"options": {"handler": "app.nope"}}]
    verdicts = evaluator.score(rows, configs)
    assert verdicts["reason"].tolist()[:2] == [
        "; ".join(["sample"] * TRACES),
        "; ".join(["configured"] * TRACES),
    ]
    assert verdicts["score"].tolist()[:2] == [1.0, 1.0]
    assert f"{custom / 'docev' / 'app.py'} defines no nope(event, context)" in verdicts["error"].iloc[2]
