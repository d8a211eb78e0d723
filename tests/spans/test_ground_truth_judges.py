"""Ground truth for the judges: ``--reference-inputs`` (AgentCore's ``evaluationReferenceInputs``) reaching
``Builtin.Correctness``, ``Builtin.GoalSuccessRate``, custom judges' ground-truth placeholders and the three
programmatic ``Builtin.Trajectory*Match``; ``ignoredReferenceInputFields`` as AgentCore's results list them.

Real material: ``data/agentcore_spans.jsonl`` (TRACE judges) and ``data/agentcore_split_spans.jsonl`` (sessions recorded with the OpenTelemetry SDK and converted
to AgentCore's split form by AWS's ``bedrock-agentcore`` SDK; ``scripts/capture_split_spans.py`` on main) and
the reference input shape of botocore's ``bedrock-agentcore`` model (``data/agentcore_judge_shapes.json``).
The judge is evalkit's ``ModelServer`` through the real openai client; the tests read the requests it saw.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.errors import EvalkitError
from evalkit.spans.evaluator_specs import resolve_span_evaluator
from evalkit.spans.lambdas.results import passing
from evalkit.spans.llm_judges.ground_truth import check_reference_inputs
from evalkit.spans.llm_judges.judge_runner import SpanJudges
from evalkit.spans.llm_judges.trajectory_match import match
from evalkit.testing import Reply
from tests.spans.test_builtin_span_judges import DATA
from tests.spans.test_custom_llm_span_judges import write_config
from tests.spans.test_spans import run_cli

REPO = Path(__file__).resolve().parents[2]
SPLIT = REPO / "data" / "agentcore_split_spans.jsonl"
#: data/agentcore_spans.jsonl's session whose two traces carry their answers in the spans themselves (the
#: split file's answers are in event records, which the conversation reads in another part of issue 21).
GENAI, T1, T2 = "sess-genai", "1" * 32, "12" * 16
BROKER, FIRST, SECOND = (
    "sess-split-broker",
    "6b0404f2b09490b86b01a1c12a3a2107",
    "eeca8c285efcea76039d74ed00d0722d",
)
#: The tools sess-split-broker calls, in order (its two traces).
BROKER_TOOLS = ["identify_broker", "get_broker_profile", "get_stock_data", "search_news"]


def ref(session: str, trace: str | None = None, **fields) -> dict:
    context = {"sessionId": session, **({"traceId": trace} if trace else {})}
    return {"context": {"spanContext": context}, **fields}


def text(value: str) -> dict:
    return {"text": value}


def user_message(request: dict) -> str:
    return request["body"]["messages"][1]["content"]


def by_trace(results: list[dict]) -> dict[str, dict]:
    return {r["context"]["spanContext"].get("traceId"): r for r in results}


# --- Builtin.Correctness and Builtin.GoalSuccessRate ------------------------------------------------------


def test_correctness_judges_against_the_expected_response_of_its_trace_only(judge_env):
    references = [
        ref(GENAI, T1, expectedResponse=text("AAPL is at $182.45.")),
        ref(GENAI, assertions=[text("The agent named the broker")], expectedTrajectory={"toolNames": []}),
    ]
    judge_env.script = [
        Reply({"label": "CORRECT", "explanation": "agrees"}),
        Reply({"label": "Perfectly Correct", "explanation": "plain form"}),
    ]
    results = spans.evaluate_spans(
        DATA, ["Builtin.Correctness"], session=GENAI, reference_inputs=references,
        judges=SpanJudges(concurrency=1),
    )  # fmt: skip
    first, second = by_trace(results)[T1], by_trace(results)[T2]
    assert (first["label"], first["value"]) == ("CORRECT", 1.0)
    assert (second["label"], second["value"]) == ("Perfectly Correct", 1.0)
    assert "# Expected response\nAAPL is at $182.45." in user_message(judge_env.requests[0])
    assert '"INCORRECT"' in judge_env.requests[0]["body"]["messages"][0]["content"]
    assert "Expected response" not in user_message(judge_env.requests[1])
    # The session's assertions and trajectory are given for both traces and used by neither.
    assert first["ignoredReferenceInputFields"] == ["assertions", "expectedTrajectory"]
    assert second["ignoredReferenceInputFields"] == ["assertions", "expectedTrajectory"]


def test_a_session_level_expected_response_applies_to_the_last_trace(judge_env):
    references = [ref(GENAI, expectedResponse=text("Nothing to report."))]
    judge_env.script = [Reply({"label": "Incorrect"}), Reply({"label": "INCORRECT"})]
    results = spans.evaluate_spans(
        DATA, ["Builtin.Correctness"], session=GENAI, reference_inputs=references,
        judges=SpanJudges(concurrency=1),
    )  # fmt: skip
    first, second = by_trace(results)[T1], by_trace(results)[T2]
    assert first["ignoredReferenceInputFields"] == ["expectedResponse"] and first["label"] == "Incorrect"
    assert "ignoredReferenceInputFields" not in second and second["label"] == "INCORRECT"
    assert "Nothing to report." in user_message(judge_env.requests[1])


def test_goal_success_rate_judges_the_assertions(judge_env):
    references = [
        ref(BROKER, assertions=[text("The agent looked up the broker"), text("The agent quoted a price")])
    ]
    judge_env.script = [Reply({"label": "SUCCESS", "explanation": "both hold"})]
    results = spans.evaluate_spans(
        SPLIT, ["Builtin.GoalSuccessRate"], session=BROKER, reference_inputs=references,
        judges=SpanJudges(concurrency=1),
    )  # fmt: skip
    assert [(r["label"], r["value"]) for r in results] == [("SUCCESS", 1.0)]
    assert "ignoredReferenceInputFields" not in results[0]
    # the ground-truth form's top label passes the gate too (results carry the built-in's id either way)
    judge = resolve_span_evaluator("Builtin.GoalSuccessRate")
    assert judge.passing_labels == {"Yes", "SUCCESS"}
    assert passing(results, evaluators=[judge]) == (1, 1)
    message = user_message(judge_env.requests[0])
    assert "# Assertions\n1. The agent looked up the broker\n2. The agent quoted a price" in message


def test_an_evaluator_without_ground_truth_lists_every_given_field_as_ignored(judge_env):
    references = [ref(GENAI, T1, expectedResponse=text("x")), ref(GENAI, assertions=[text("y")])]
    results = spans.evaluate_spans(
        DATA, ["Builtin.Helpfulness", "Builtin.GoalSuccessRate"], session=GENAI,
        reference_inputs=references, judges=SpanJudges(concurrency=1),
    )  # fmt: skip
    helpful = by_trace([r for r in results if r["evaluatorName"] == "Builtin.Helpfulness"])
    assert helpful[T1]["ignoredReferenceInputFields"] == ["expectedResponse", "assertions"]
    assert helpful[T2]["ignoredReferenceInputFields"] == ["assertions"]
    goal = [r for r in results if r["evaluatorName"] == "Builtin.GoalSuccessRate"]
    assert goal[0]["ignoredReferenceInputFields"] == ["expectedResponse"]  # a trace's field, at SESSION


def test_the_reference_values_are_part_of_the_cache_key(judge_env):
    def run(expected: str) -> None:
        spans.evaluate_spans(
            DATA, ["Builtin.Correctness"], session=GENAI, judges=SpanJudges(concurrency=1),
            reference_inputs=[ref(GENAI, T1, expectedResponse=text(expected))],
        )  # fmt: skip

    run("AAPL is at $182.45.")
    assert judge_env.request_count == 2
    run("AAPL is at $182.45.")
    assert judge_env.request_count == 2  # both traces cached
    run("AAPL is at $190.")
    assert judge_env.request_count == 3  # only the trace whose reference changed


# --- custom judges ----------------------------------------------------------------------------------------

TRACE_JUDGE = {
    "level": "TRACE",
    "evaluatorConfig": {
        "llmAsAJudge": {
            "instructions": "Same facts?\nAnswer: {assistant_turn}\nExpected: {expected_response}",
            "ratingScale": {
                "categorical": [
                    {"label": "Different", "definition": "another answer"},
                    {"label": "Same", "definition": "the same facts"},
                ]
            },
            "modelConfig": {"bedrockEvaluatorModelConfig": {"modelId": "us.amazon.nova-lite-v1:0"}},
        }
    },
}
SESSION_JUDGE = {
    "level": "SESSION",
    "evaluatorConfig": {
        "llmAsAJudge": {
            "instructions": (
                "Expected tools: {expected_tool_trajectory}\nActual tools: {actual_tool_trajectory}\n"
                "Assertions:\n{assertions}\n\n{context}"
            ),
            "ratingScale": {
                "numerical": [
                    {"value": 0, "label": "incomplete", "definition": "a required tool or assertion missed"},
                    {"value": 1, "label": "complete", "definition": "all done"},
                ]
            },
        }
    },
}


def test_a_custom_trace_judge_reads_the_expected_response(judge_env, tmp_path):
    write_config(tmp_path, "same_facts", TRACE_JUDGE)
    judge_env.script = [Reply({"label": "Same", "explanation": "ok"})]
    results = spans.evaluate_spans(
        DATA, ["same_facts"], session=GENAI, custom_dir=tmp_path, judges=SpanJudges(concurrency=1),
        reference_inputs=[ref(GENAI, T1, expectedResponse=text("AAPL trades at $182.45."))],
    )  # fmt: skip
    first, second = by_trace(results)[T1], by_trace(results)[T2]
    assert first["label"] == "Same" and "value" not in first
    message = user_message(judge_env.requests[0])
    assert "Expected: AAPL trades at $182.45." in message and "Answer: Apple (AAPL) is trading" in message
    assert second["errorCode"] == "MissingReferenceInput"
    assert "{expected_response}" in second["errorMessage"] and T2 in second["errorMessage"]
    assert judge_env.request_count == 1  # no call without the reference


def test_a_custom_session_judge_reads_both_trajectories_and_the_assertions(judge_env, tmp_path):
    write_config(tmp_path, "complete", SESSION_JUDGE)
    judge_env.script = [Reply({"label": "complete"})]
    references = [
        ref(
            BROKER,
            assertions=[text("named the broker")],
            expectedTrajectory={"toolNames": ["identify_broker"]},
        )
    ]
    results = spans.evaluate_spans(
        SPLIT, ["complete"], session=BROKER, custom_dir=tmp_path, reference_inputs=references,
        judges=SpanJudges(concurrency=1),
    )  # fmt: skip
    assert (results[0]["label"], results[0]["value"]) == ("complete", 1.0)
    message = user_message(judge_env.requests[0])
    assert 'Expected tools: ["identify_broker"]' in message
    assert f"Actual tools: {json.dumps(BROKER_TOOLS)}" in message
    assert "Assertions:\n1. named the broker" in message


def test_ground_truth_placeholders_are_refused_at_the_wrong_level(tmp_path):
    config = json.loads(json.dumps(TRACE_JUDGE))
    config["evaluatorConfig"]["llmAsAJudge"]["instructions"] = "{assistant_turn} {assertions}"
    write_config(tmp_path, "same_facts", config)
    with pytest.raises(EvalkitError, match=r"\{assertions\} are not defined for TRACE"):
        spans.evaluate_spans(SPLIT, ["same_facts"], custom_dir=tmp_path)


# --- Builtin.Trajectory*Match -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "expected", "label"),
    [
        ("exact", BROKER_TOOLS, "Yes"),
        ("exact", BROKER_TOOLS[:3], "No"),
        ("in order", ["identify_broker", "get_stock_data"], "Yes"),
        ("in order", ["get_stock_data", "identify_broker"], "No"),
        ("any order", ["search_news", "identify_broker"], "Yes"),
        ("any order", ["search_news", "place_order"], "No"),
        ("in order", [], "Yes"),
        ("exact", [], "No"),
    ],
)
def test_trajectory_modes(mode, expected, label):
    result = match(mode, expected, BROKER_TOOLS)
    assert result["label"] == label and result["value"] == (1.0 if label == "Yes" else 0.0)


def test_trajectory_explanations_say_what_is_wrong():
    assert "call 1 is 'b', expected 'a'" in match("exact", ["a", "b"], ["b", "a"])["explanation"]
    assert "1 extra call(s)" in match("exact", ["a"], ["a", "b"])["explanation"]
    assert (
        "'a' (expected tool 2) was not called after 'b'"
        in match("in order", ["b", "a"], ["a", "b"])["explanation"]
    )
    assert "not called: c" in match("any order", ["a", "c"], ["a", "b"])["explanation"]


def test_the_three_trajectory_builtins_at_session_level_without_a_model(judge_env, tmp_path, capsys):
    references = tmp_path / "refs.json"
    references.write_text(
        json.dumps(
            {
                "evaluationReferenceInputs": [
                    ref(BROKER, expectedTrajectory={"toolNames": ["get_stock_data", "identify_broker"]}),
                    ref(BROKER, FIRST, expectedResponse=text("x")),
                    ref(
                        "sess-split-leak",
                        expectedTrajectory={"toolNames": ["identify_broker", "get_broker_profile"]},
                    ),
                ]
            }
        )
    )
    out = tmp_path / "out"
    argv = ["spans", "eval", str(SPLIT), "--out", str(out), "--reference-inputs", str(references)]
    for name in (
        "Builtin.TrajectoryExactOrderMatch",
        "Builtin.TrajectoryInOrderMatch",
        "Builtin.TrajectoryAnyOrderMatch",
    ):
        argv += ["--evaluator", name]
    assert run_cli(argv) == 0
    assert judge_env.request_count == 0
    results = json.loads((out / "results.json").read_text())["evaluationResults"]
    verdict = {
        (r["evaluatorName"][len("Builtin.Trajectory") :], r["context"]["spanContext"]["sessionId"]): r
        for r in results
    }
    assert len(results) == 9 and all("traceId" not in r["context"]["spanContext"] for r in results)
    assert verdict["ExactOrderMatch", BROKER]["label"] == "No"
    assert verdict["InOrderMatch", BROKER]["label"] == "No"  # get_stock_data comes after identify_broker
    assert verdict["AnyOrderMatch", BROKER]["label"] == "Yes"
    assert verdict["AnyOrderMatch", BROKER]["ignoredReferenceInputFields"] == ["expectedResponse"]
    assert {
        verdict[m, "sess-split-leak"]["label"] for m in ("ExactOrderMatch", "InOrderMatch", "AnyOrderMatch")
    } == {"Yes"}
    missing = verdict["ExactOrderMatch", "sess-split-ssn-bait"]
    assert missing["errorCode"] == "MissingReferenceInput" and "expectedTrajectory" in missing["errorMessage"]
    printed = capsys.readouterr().out
    line = r"TrajectoryAnyOrderMatch \(SESSION\) +3 results: Yes 2; 1 error \(MissingReferenceInput 1\)"
    assert re.search(line, printed)


def test_trajectory_builtins_are_session_only_and_listed_among_builtins():
    with pytest.raises(EvalkitError, match="is a SESSION evaluator"):
        spans.evaluate_spans(SPLIT, ["Builtin.TrajectoryInOrderMatch:TRACE"])
    with pytest.raises(EvalkitError, match="TrajectoryAnyOrderMatch"):
        spans.evaluate_spans(SPLIT, ["Builtin.Trajectory"])


# --- the reference inputs file ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (ref(BROKER, expected_response=text("x")), "[0]: unknown field(s) 'expected_response'"),
        (ref(BROKER, expectedResponse="x"), '[0].expectedResponse must be {"text": "..."}'),
        (ref(BROKER, assertions=[]), "[0].assertions must be a non-empty list"),
        (ref(BROKER, expectedTrajectory=["a"]), '[0].expectedTrajectory must be {"toolNames"'),
        ({"expectedResponse": text("x")}, "[0] has no context.spanContext.sessionId"),
    ],
)
def test_reference_input_mistakes_are_named(tmp_path, capsys, reference, message):
    path = tmp_path / "refs.json"
    path.write_text(json.dumps([reference]))
    argv = ["spans", "eval", str(DATA), "--out", str(tmp_path / "o"), "--reference-inputs", str(path)]
    assert run_cli([*argv, "--evaluator", "Builtin.TrajectoryAnyOrderMatch"]) == 2
    assert f"{path}: reference input {message}" in capsys.readouterr().out


def test_online_evaluation_refuses_evaluators_that_need_reference_inputs(tmp_path, capsys):
    from evalkit.cli import main

    write_config(tmp_path, "same_facts", TRACE_JUDGE)
    argv = ["spans", "serve", "--store", str(tmp_path / "s"), "--custom-dir", str(tmp_path), "--port", "0"]
    assert main([*argv, "--evaluator", "Builtin.TrajectoryExactOrderMatch"]) == 2
    assert "online evaluation has no reference inputs" in capsys.readouterr().err
    assert main([*argv, "--evaluator", "same_facts"]) == 2
    assert "{expected_response} (ground truth)" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


# --- reference inputs as AWS's bedrock-agentcore SDK builds them ------------------------------------------


def _sdk_reference_inputs(session: str, trace_ids: list[str], **ground_truth) -> list[dict]:
    """The ``evaluationReferenceInputs`` AWS's SDK sends for a ``ReferenceInputs`` (its EvaluationClient)."""
    from bedrock_agentcore.evaluation.client import EvaluationClient, ReferenceInputs

    return EvaluationClient._build_reference_inputs(session, ReferenceInputs(**ground_truth), trace_ids)


def test_reference_inputs_built_by_aws_sdk_reach_the_judges(judge_env):
    references = _sdk_reference_inputs(
        GENAI,
        [T1, T2],
        assertions=["The agent quoted Microsoft's price"],
        expected_trajectory=["get_stock_data", "get_stock_data", "search_news"],
        expected_response="Microsoft (MSFT) trades at $415.10.",  # a plain string: the SDK targets the last trace
    )
    assert references[-1]["context"]["spanContext"] == {"sessionId": GENAI, "traceId": T2}
    judge_env.script = [
        Reply({"label": "Perfectly Correct"}),
        Reply({"label": "CORRECT"}),
        Reply({"label": "SUCCESS"}),
    ]
    results = spans.evaluate_spans(
        DATA, ["Builtin.Correctness", "Builtin.GoalSuccessRate", "Builtin.TrajectoryExactOrderMatch"],
        session=GENAI, reference_inputs=references, judges=SpanJudges(concurrency=1),
    )  # fmt: skip
    labels = [(r["evaluatorName"], r["context"]["spanContext"].get("traceId"), r["label"]) for r in results]
    assert labels == [
        ("Builtin.Correctness", T1, "Perfectly Correct"),
        ("Builtin.Correctness", T2, "CORRECT"),
        ("Builtin.GoalSuccessRate", None, "SUCCESS"),
        ("Builtin.TrajectoryExactOrderMatch", None, "Yes"),
    ]
    assert "Microsoft (MSFT) trades at $415.10." in user_message(judge_env.requests[1])
    assert "1. The agent quoted Microsoft's price" in user_message(judge_env.requests[2])
    assert results[2]["ignoredReferenceInputFields"] == ["expectedResponse", "expectedTrajectory"]
    assert results[3]["ignoredReferenceInputFields"] == ["expectedResponse", "assertions"]


@pytest.mark.parametrize(
    "reference",
    [
        ref(BROKER, FIRST, expectedResponse=text("x")),
        ref(BROKER, assertions=[text("a")], expectedTrajectory={"toolNames": ["t"]}),
        ref(BROKER, expected_response=text("x")),
        ref(BROKER, expectedResponse="x"),
        ref(BROKER, expectedResponse={"text": "x", "lang": "en"}),
        ref(BROKER, assertions="a"),
        ref(BROKER, expectedTrajectory={"tools": ["t"]}),
        {"expectedResponse": text("x")},
    ],
)
def test_evalkit_and_botocore_agree_on_reference_inputs(reference):
    """evalkit refuses a reference input exactly when botocore's validator of the Evaluate request does."""
    import botocore.session
    from botocore.validate import ParamValidator

    shape = botocore.session.get_session().get_service_model("bedrock-agentcore").operation_model("Evaluate")
    request = {"evaluatorId": "Builtin.Correctness", "evaluationInput": {"sessionSpans": [{}]}}
    report = ParamValidator().validate(
        {**request, "evaluationReferenceInputs": [reference]}, shape.input_shape
    )
    try:
        check_reference_inputs([reference])
        refused = False
    except EvalkitError:
        refused = True
    assert refused == report.has_errors(), report.generate_report()
