"""``evalkit spans invoke NAME --event EVENT.json``: a recorded AgentCore Lambda event through a handler, as
Lambda runs it, and an evaluator built with AWS's SDK, run by ``spans eval`` and by ``spans invoke``.

Events: two in the shape AWS's SDK tests build them (``tests/spans/data/agentcore_sdk_*_event.json``, origin
and licence in ``agentcore_sdk_events.SOURCE.md``) and one written by evalkit's payload builder from the
project's span file. The evaluator, ``tests/spans/data/sdk_evaluators/final_answer/lambda_function.py``, is
decorated with ``bedrock-agentcore``'s ``@custom_code_based_evaluator()`` (installed from PyPI).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.cli import main as cli_main
from evalkit.spans.lambdas.payload import payload_head, payload_text, reference_groups, session_groups

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
SDK_EVALUATORS = DATA / "sdk_evaluators"
DECORATOR_EVENT = DATA / "agentcore_sdk_decorator_event.json"
SPLIT_EVENT = DATA / "agentcore_sdk_split_format_event.json"
AGENTCORE_SPANS = REPO / "data" / "agentcore_spans.jsonl"
APPLE_TRACE = "11111111111111111111111111111111"


def invoke(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", "spans", "invoke", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def invoke_sdk(event: Path) -> subprocess.CompletedProcess:
    return invoke("final_answer", "--custom-dir", str(SDK_EVALUATORS), "--event", str(event))


# --- events of the shape AWS's SDK tests build ---------------------------------------------------------


def test_the_sdk_decorator_event_gets_the_full_sdk_response():
    done = invoke_sdk(DECORATOR_EVENT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "value": 0.0,
        "label": "NO_ANSWER",
        "explanation": "1 spans, no answer",
        "errorCode": None,
        "errorMessage": None,
    }
    assert "lambda_function.handler: valid AgentCore evaluator response: label 'NO_ANSWER'" in done.stderr


def test_the_split_format_event_answer_is_read_from_its_event_record():
    done = invoke_sdk(SPLIT_EVENT)
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)
    assert (response["label"], response["value"]) == ("ANSWERED", 1.0)
    assert response["explanation"] == "AI is artificial intelligence."


def test_an_event_written_by_evalkits_payload_builder(tmp_path):
    evaluator = spans.load_span_evaluator("final_answer", SDK_EVALUATORS)
    (group,) = session_groups(spans.load(AGENTCORE_SPANS), ["sess-genai"])
    refs = reference_groups(
        [
            {
                "context": {"spanContext": {"sessionId": "sess-genai", "traceId": APPLE_TRACE}},
                "expectedResponse": {"text": "$182.45"},
            }
        ]
    )["sess-genai"]
    text, dropped, total = payload_text(payload_head(evaluator), group, APPLE_TRACE, None, refs)
    assert dropped == 0 and total == len(group.docs)
    event = tmp_path / "event.json"
    event.write_text(text, encoding="utf-8")
    done = invoke_sdk(event)
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)
    assert (response["label"], response["value"]) == ("MATCHES_REFERENCE", 1.0)
    assert "Apple (AAPL) is trading at $182.45" in response["explanation"]
    # the same evaluator in spans eval agrees, on the same call
    results = spans.evaluate_spans(AGENTCORE_SPANS, [evaluator], session="sess-genai")
    assert results[0]["context"]["spanContext"]["traceId"] == APPLE_TRACE
    assert results[0]["label"] == "ANSWERED"  # no reference inputs given to this run


# --- the SDK-based evaluator in spans eval ------------------------------------------------------------------


def test_spans_eval_runs_the_sdk_evaluator_over_the_project_span_file(tmp_path):
    out = tmp_path / "out"
    code = cli_main(
        [
            "spans",
            "eval",
            str(AGENTCORE_SPANS),
            "--custom-dir",
            str(SDK_EVALUATORS),
            "--evaluator",
            "final_answer",
            "--out",
            str(out),
            "--fail-under",
            "100%",
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())["evaluationResults"]
    assert len(results) == 6  # one per trace
    assert not any("errorCode" in r for r in results)  # none is InvalidEvaluatorResponse
    assert {r["label"] for r in results} == {"ANSWERED"}
    answers = {r["context"]["spanContext"]["traceId"][:2]: r["explanation"] for r in results}
    assert answers["31"].startswith("Nvidia (NVDA)")  # Traceloop's gen_ai.completion.0.content
    assert answers["41"].startswith("The P/E ratio")  # OpenInference's llm.output_messages


# --- responses that break the contract, handlers that fail ------------------------------------------------


def write_handler(tmp_path: Path, body: str) -> Path:
    custom = tmp_path / "custom-evaluators"
    path = custom / "probe" / "lambda_function.py"
    path.parent.mkdir(parents=True)
    path.write_text("import time\n\ndef handler(event, context):\n" + textwrap.indent(body, "    ") + "\n")
    return custom


@pytest.mark.parametrize(
    ("body", "stdout_key", "stderr"),
    [
        (
            "return {'label': 'FAIL', 'value': 7.5}",
            "value",
            "(InvalidEvaluatorResponse): 'value' 7.5 is outside 0.0-1.0",
        ),
        ("return {'value': 1.0}", "value", "(InvalidEvaluatorResponse): the response has no 'label'"),
        (
            "raise RuntimeError('boom')",
            "errorType",
            "(EvaluatorException): handler raised RuntimeError: boom",
        ),
        ("return {'label': 'PASS', 'value': float('nan')}", "errorType", "Unable to marshal response"),
    ],
)
def test_a_broken_response_prints_it_and_exits_1(tmp_path, capsys, body, stdout_key, stderr):
    custom = write_handler(tmp_path, body)
    code = cli_main(["spans", "invoke", "probe", "--custom-dir", str(custom), "--event", str(SPLIT_EVENT)])
    out, err = capsys.readouterr()
    assert code == 1
    assert stdout_key in json.loads(out)
    assert err.startswith("Error: lambda_function.handler gave no valid evaluator response")
    assert stderr in err


def test_a_handler_past_its_time_limit_is_a_lambda_timeout(tmp_path):
    custom = write_handler(tmp_path, "time.sleep(30)")
    started = time.monotonic()
    done = invoke("probe", "--custom-dir", str(custom), "--event", str(SPLIT_EVENT), "--timeout", "0.5")
    assert time.monotonic() - started < 20  # the command does not wait for the sleeping handler
    assert done.returncode == 1
    assert json.loads(done.stdout) == {"errorMessage": "Task timed out after 0.50 seconds"}
    assert "(Timeout)" in done.stderr


def test_an_evaluator_error_response_is_valid(tmp_path, capsys):
    custom = write_handler(tmp_path, "return {'errorCode': 'NoSpans', 'errorMessage': None, 'label': None}")
    code = cli_main(["spans", "invoke", "probe", "--custom-dir", str(custom), "--event", str(SPLIT_EVENT)])
    out, err = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["errorCode"] == "NoSpans"
    assert "valid AgentCore evaluator response: error NoSpans" in err


def test_span_files_and_broken_events_are_refused_with_exit_2(tmp_path):
    done = invoke_sdk(AGENTCORE_SPANS)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"Error: {AGENTCORE_SPANS} holds telemetry (spans or event records), not an AgentCore Lambda event: "
        "replay an event (schemaVersion, evaluatorId, evaluatorName, evaluationLevel, evaluationInput, "
        "evaluationReferenceInputs, evaluationTarget), or evaluate span files with evalkit spans eval\n"
    )
    event = json.loads(SPLIT_EVENT.read_text())
    event["evaluationLevel"] = "SPAN"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(event))
    done = invoke_sdk(bad)
    assert done.returncode == 2 and "'evaluationLevel' is 'SPAN', not one of TRACE" in done.stderr
    del event["evaluationInput"]
    event["evaluationLevel"] = "TRACE"
    bad.write_text(json.dumps(event))
    done = invoke_sdk(bad)
    assert done.returncode == 2 and "'evaluationInput.sessionSpans' must be a list" in done.stderr


def test_help_says_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        cli_main(["spans", "invoke", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0 the handler returned a valid AgentCore evaluator response" in text
    assert "1 it did not: the response breaks the contract (InvalidEvaluatorResponse" in text


def test_spans_eval_reads_the_sdk_evaluators_answers_from_event_records(tmp_path):
    split = REPO / "data" / "agentcore_split_spans.jsonl"  # AgentCore's split form: spans + event records
    spans_only = [d for d in map(json.loads, split.read_text().splitlines()) if "body" not in d]
    assert not any("output" in json.dumps(d.get("attributes")) for d in spans_only)  # answers: records only
    results = spans.evaluate_spans(split, ["final_answer"], custom_dir=SDK_EVALUATORS)
    assert [r["label"] for r in results] == ["ANSWERED"] * 4
    assert results[0]["explanation"].startswith("Apple (AAPL) is trading at $189.10")
