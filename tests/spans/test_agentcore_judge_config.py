"""CreateEvaluator's LLM-as-judge shapes as AgentCore's API defines them, held against botocore's service model.

Real material: ``data/agentcore_judge_shapes.json``, shapes copied from botocore 1.44.8's
``bedrock-agentcore-control`` and ``bedrock-agentcore`` service models (Apache-2.0; see its ``.SOURCE.md``).
Judging goes through the real openai client to evalkit's ``ModelServer``; the tests read what it received.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.errors import EvaluatorConfigError
from evalkit.spans.evaluator_specs import resolve_span_evaluator
from evalkit.spans.lambdas.results import passing
from evalkit.spans.llm_judges import ground_truth, judge_config
from evalkit.spans.llm_judges.judge_runner import SpanJudges
from evalkit.spans.online.session_tracking import MAX_FILTERS, Filter
from evalkit.testing import Reply
from tests.spans.test_builtin_span_judges import DATA, TRACES
from tests.spans.test_custom_llm_span_judges import write_config
from tests.spans.test_spans import run_cli

SHAPES = json.loads((Path(__file__).parent / "data" / "agentcore_judge_shapes.json").read_text())
CONTROL, DATA_PLANE = SHAPES["bedrock-agentcore-control"], SHAPES["bedrock-agentcore"]


def members(service: dict, shape: str) -> set[str]:
    return set(service[shape]["members"])


# --- the shapes evalkit checks are the API's ---------------------------------------------------------------


def test_rating_scale_entries_have_the_api_members_and_required_fields():
    assert {"numerical", "categorical"} <= members(CONTROL, "RatingScale")
    numerical, categorical = CONTROL["NumericalScaleDefinition"], CONTROL["CategoricalScaleDefinition"]
    assert set(judge_config.NUMERICAL_KEYS) == set(numerical["members"]) == set(numerical["required"])
    assert set(judge_config.CATEGORICAL_KEYS) == set(categorical["members"]) == set(categorical["required"])
    assert "value" not in categorical["members"]  # the reason a categorical 'value' is refused
    assert CONTROL["NumericalScaleDefinitionValueDouble"]["min"] == 0
    assert CONTROL["CategoricalScaleDefinitionLabelString"]["max"] == judge_config.LABEL_LIMIT


def test_model_configuration_members_are_the_api_ones():
    assert set(judge_config.MODEL_CONFIGS) == members(CONTROL, "EvaluatorModelConfig")
    assert set(judge_config.BEDROCK_KEYS) == members(CONTROL, "BedrockEvaluatorModelConfig")
    assert set(judge_config.INFERENCE_PARAMETERS) == members(CONTROL, "InferenceConfiguration")
    # evalkit takes the OpenResponses config without 'reasoning' (not an OpenAI chat-completions parameter).
    assert set(judge_config.RESPONSES_KEYS) == members(CONTROL, "OpenResponsesEvaluatorModelConfig") - {
        "reasoning"
    }
    assert CONTROL["InferenceConfigurationStopSequencesList"]["max"] == judge_config.STOP_SEQUENCES_LIMIT
    assert CONTROL["InferenceConfigurationTemperatureFloat"]["max"] == 1
    assert CONTROL["InferenceConfigurationMaxTokensInteger"]["min"] == 1


def test_reference_inputs_and_results_follow_the_evaluate_api():
    assert set(ground_truth.KEYS) == members(DATA_PLANE, "EvaluationReferenceInput")
    assert members(DATA_PLANE, "EvaluationContent") == {"text"}
    assert members(DATA_PLANE, "EvaluationExpectedTrajectory") == {"toolNames"}
    assert members(DATA_PLANE, "SpanContext") == {"sessionId", "traceId", "spanId"}
    assert "ignoredReferenceInputFields" in members(DATA_PLANE, "EvaluationResultContent")
    assert "not allowed for categorical scales" in SHAPES["documentation"]["EvaluationResultContent.value"]


def test_online_filters_are_the_api_ones():
    assert set(Filter.OPERATORS.values()) == set(CONTROL["FilterOperator"]["enum"])
    assert len(Filter.OPERATORS) == 8
    assert CONTROL["FilterList"]["max"] == MAX_FILTERS
    assert CONTROL["FilterKeyString"]["pattern"] == Filter._KEY.pattern.split("{")[0] + "+"
    assert members(CONTROL, "Rule") >= {"filters"}


# --- a configuration with every field the API defines -------------------------------------------------------

FULL = {
    "evaluatorName": "agreeable",
    "description": "categorical, every inference field",
    "level": "TRACE",
    "evaluatorConfig": {
        "llmAsAJudge": {
            "instructions": "Does the answer agree with the user?\n{context}\n{assistant_turn}",
            "ratingScale": {
                "categorical": [
                    {"label": "Disagrees", "definition": "contradicts the user"},
                    {"label": "Neutral", "definition": "neither"},
                    {"label": "Agrees", "definition": "agrees with the user"},
                ]
            },
            "modelConfig": {
                "bedrockEvaluatorModelConfig": {
                    "modelId": "us.anthropic.claude-3-5-haiku-20241022-v1:0",
                    "inferenceConfig": {
                        "maxTokens": 200,
                        "temperature": 0.2,
                        "topP": 0.5,
                        "stopSequences": ["</answer>", "\n\nHuman:"],
                    },
                    "additionalModelRequestFields": {"top_k": 5},
                }
            },
        }
    },
}


def test_a_full_configuration_is_accepted_and_maps_to_openai_parameters(tmp_path):
    write_config(tmp_path, "agreeable", FULL)
    judge = resolve_span_evaluator("agreeable", tmp_path)
    assert judge.kind == "categorical" and [p.value for p in judge.scale] == [None, None, None]
    assert judge.parameters == {
        "max_tokens": 200,
        "temperature": 0.2,
        "top_p": 0.5,
        "stop": ["</answer>", "\n\nHuman:"],
        "extra_body": {"top_k": 5},
    }
    assert judge.passing_labels == {"Agrees"}  # the last entry, scales being written worst first


def test_categorical_results_carry_the_label_only_and_pass_by_label(judge_env, tmp_path):
    write_config(tmp_path, "agreeable", FULL)
    judge_env.script = [Reply({"label": "agrees", "explanation": "yes"})] + [
        Reply({"label": "Neutral", "explanation": "meh"})
    ] * (TRACES - 1)
    results = spans.evaluate_spans(DATA, ["agreeable"], custom_dir=tmp_path, judges=SpanJudges(concurrency=1))
    assert results[0]["label"] == "Agrees" and "value" not in results[0]
    assert all("value" not in r and "errorCode" not in r for r in results)
    body = judge_env.requests[0]["body"]
    assert body["stop"] == ["</answer>", "\n\nHuman:"] and body["top_k"] == 5
    assert body["max_tokens"] == 200 and body["top_p"] == 0.5 and body["temperature"] == 0.2
    assert '- "Disagrees": contradicts the user' in body["messages"][0]["content"]
    judge = resolve_span_evaluator("agreeable", tmp_path)
    assert passing(results, evaluators=[judge]) == (1, TRACES)
    assert passing(results, 1.0) == (0, TRACES)  # without the labels: no value, no pass


def test_passing_labels_choose_what_the_gate_counts(judge_env, tmp_path, capsys):
    config = copy.deepcopy(FULL)
    config["passingLabels"] = ["Agrees", "neutral"]
    write_config(tmp_path, "agreeable", config)
    judge_env.script = [Reply({"label": "Neutral", "explanation": "ok"})] * TRACES
    out = tmp_path / "out"
    argv = ["spans", "eval", str(DATA), "--custom-dir", str(tmp_path), "--out", str(out), "--evaluator"]
    assert run_cli([*argv, "agreeable", "--fail-under", "100%"]) == 0
    assert f"Pass rate 100.0% ({TRACES} of {TRACES} results passing, no error)\n" in capsys.readouterr().out
    config["passingLabels"] = ["Agrees"]
    write_config(tmp_path, "agreeable", config)
    assert run_cli([*argv, "agreeable", "--fail-under", "100%"]) == 1


def test_a_responses_model_configuration_maps_max_output_tokens(tmp_path):
    config = copy.deepcopy(FULL)
    config["evaluatorConfig"]["llmAsAJudge"]["modelConfig"] = {
        "responsesEvaluatorModelConfig": {"modelId": "gpt-x", "maxOutputTokens": 64, "topP": 1}
    }
    write_config(tmp_path, "agreeable", config)
    assert resolve_span_evaluator("agreeable", tmp_path).parameters == {
        "temperature": 0.0,
        "max_tokens": 64,
        "top_p": 1,
    }


def _with(change) -> dict:
    config = copy.deepcopy(FULL)
    change(config, config["evaluatorConfig"]["llmAsAJudge"])
    return config


def _bedrock(j) -> dict:
    return j["modelConfig"]["bedrockEvaluatorModelConfig"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c, j: j.update(rubric="x"), "unknown field(s) 'rubric' in evaluatorConfig.llmAsAJudge"),
        (
            lambda c, j: j["ratingScale"]["categorical"][0].update(value=0.0),
            "ratingScale.categorical[0]: a categorical rating has no 'value'",
        ),
        (
            lambda c, j: j["ratingScale"]["categorical"][1].update(score=1),
            "ratingScale.categorical[1]: unknown field(s) 'score'",
        ),
        (
            lambda c, j: j.update(
                ratingScale={"numerical": [{"label": "a", "value": 1}, {"label": "b", "value": 2}]}
            ),
            "ratingScale.numerical[0]: 'definition' missing",
        ),
        (
            lambda c, j: j.update(ratingScale={"numerical": [], "categorical": []}),
            "found 'numerical', 'categorical'",
        ),
        (
            lambda c, j: j.update(ratingScale={"multiDimensional": []}),
            "ratingScale.multiDimensional is not supported by evalkit",
        ),
        (
            lambda c, j: j["modelConfig"].update(other={}),
            "'modelConfig' must be an object with exactly one key",
        ),
        (lambda c, j: _bedrock(j).update(region="x"), "unknown field(s) 'region' (known: modelId"),
        (lambda c, j: _bedrock(j).pop("modelId"), "'modelId' is missing"),
        (
            lambda c, j: _bedrock(j)["inferenceConfig"].update(seed=1),
            "unknown inferenceConfig field(s) 'seed'",
        ),
        (
            lambda c, j: _bedrock(j)["inferenceConfig"].update(temperature=1.5),
            "temperature must be between 0 and 1",
        ),
        (lambda c, j: _bedrock(j)["inferenceConfig"].update(maxTokens=0), "maxTokens must be a whole number"),
        (
            lambda c, j: _bedrock(j)["inferenceConfig"].update(stopSequences="END"),
            "stopSequences must be a list",
        ),
        (
            lambda c, j: _bedrock(j).update(additionalModelRequestFields={"stop": ["x"]}),
            "additionalModelRequestFields sets 'stop'",
        ),
        (lambda c, j: c.update(passingLabels=["Great"]), "passingLabels 'Great' not on the rating scale"),
    ],
)
def test_mistakes_are_refused_naming_the_file_and_the_key(tmp_path, change, message):
    path = write_config(tmp_path, "agreeable", _with(change))
    with pytest.raises(EvaluatorConfigError) as caught:
        resolve_span_evaluator("agreeable", tmp_path)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_every_inference_field_of_the_api_is_accepted(tmp_path):
    """Each InferenceConfiguration member botocore defines, alone, loads (a new member would fail here)."""
    samples = {"maxTokens": 10, "temperature": 0.5, "topP": 0.5, "stopSequences": ["x"]}
    for member in members(CONTROL, "InferenceConfiguration"):
        config = _with(lambda c, j, m=member: _bedrock(j).update(inferenceConfig={m: samples[m]}))
        write_config(tmp_path, "agreeable", config)
        assert (
            judge_config.INFERENCE_PARAMETERS[member]
            in resolve_span_evaluator("agreeable", tmp_path).parameters
        )


def test_the_bundled_numerical_example_still_normalises():
    example = Path(__file__).resolve().parents[2] / "custom-evaluators" / "market_answer_quality"
    judge = resolve_span_evaluator("market_answer_quality", example.parent)
    assert judge.kind == "numerical" and judge.passing_labels == {"Excellent"}
    assert [p.value for p in judge.scale] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert re.fullmatch(r"market_answer_quality-[0-9a-f]{10}", judge.evaluator_id)


# --- evalkit refuses what botocore's own validator refuses ---------------------------------------------------


def _botocore_problems(config: dict) -> str:
    """botocore's parameter validation of ``config`` as a CreateEvaluator request (offline: the service model
    ships in the botocore package); empty when botocore would send it."""
    import botocore.session
    from botocore.validate import ParamValidator

    model = botocore.session.get_session().get_service_model("bedrock-agentcore-control")
    shape = model.operation_model("CreateEvaluator").input_shape
    params = {k: v for k, v in config.items() if k in shape.members}  # passingLabels is evalkit's
    report = ParamValidator().validate(params, shape)
    return report.generate_report() if report.has_errors() else ""


@pytest.mark.parametrize(
    "change",
    [
        lambda c, j: None,
        lambda c, j: j["ratingScale"]["categorical"][0].update(value=0.0),
        lambda c, j: j["ratingScale"]["categorical"][1].update(score=1),
        lambda c, j: j["ratingScale"]["categorical"][1].pop("definition"),
        lambda c, j: j.update(ratingScale={"numerical": [{"label": "a", "value": 1, "definition": "d"},
                                                         {"label": "b", "value": 2, "definition": "d"}]}),
        lambda c, j: j.update(ratingScale={"numerical": [{"label": "a", "value": -1, "definition": "d"},
                                                         {"label": "b", "value": 2, "definition": "d"}]}),
        lambda c, j: j.update(ratingScale={"numerical": [], "categorical": []}),
        lambda c, j: j.update(rubric="x"),
        lambda c, j: _bedrock(j).update(region="x"),
        lambda c, j: _bedrock(j).pop("modelId"),
        lambda c, j: _bedrock(j)["inferenceConfig"].update(seed=1),
        # temperature 1.5 is left out: botocore does not check a float's maximum before sending (the model's
        # max is 1, test_model_configuration_members_are_the_api_ones); evalkit refuses it as the service would.
        lambda c, j: _bedrock(j)["inferenceConfig"].update(maxTokens=0),
        lambda c, j: _bedrock(j)["inferenceConfig"].update(stopSequences="END"),
        lambda c, j: _bedrock(j)["inferenceConfig"].update(stopSequences=[""]),
        lambda c, j: j.update(modelConfig={"responsesEvaluatorModelConfig": {"modelId": "m", "topP": 0.5}}),
    ],
)  # fmt: skip
def test_evalkit_and_botocore_agree_on_what_createevaluator_takes(tmp_path, change):
    config = _with(change)
    write_config(tmp_path, "agreeable", config)
    try:
        resolve_span_evaluator("agreeable", tmp_path)
        refused = ""
    except EvaluatorConfigError as exc:
        refused = str(exc)
    assert bool(refused) == bool(_botocore_problems(config)), (refused, _botocore_problems(config))


def test_a_categorical_judge_online_passes_by_label(model_server, monkeypatch, tmp_path):
    """spans serve: the label-only results of a categorical judge pass by its passing labels (metrics 1/0)."""
    from evalkit.spans import serve
    from tests.spans.test_online import _lines, _post, _wait
    from tests.spans.test_spans import to_otlp

    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    config = copy.deepcopy(FULL)
    config["level"] = "SESSION"
    config["evaluatorConfig"]["llmAsAJudge"]["instructions"] = "Does the agent agree?\n{context}"
    write_config(tmp_path / "ce", "agreeable", config)
    model_server.script = [Reply({"label": "Agrees"}), Reply({"label": "Neutral"})] * 2
    store = tmp_path / "store"
    server = serve(store, evaluators=["agreeable"], custom_dir=tmp_path / "ce", port=0, session_timeout=0.3,
                   poll_interval=0.02).start()  # fmt: skip
    try:
        docs = [json.loads(line) for line in DATA.read_text().splitlines()]
        assert _post(server.port, json.dumps(to_otlp(docs)).encode())[0] == 200
        metrics = _wait(lambda: len(_lines(store / "metrics.jsonl")) == 4 and _lines(store / "metrics.jsonl"))
    finally:
        server.stop()
    events = [r["attributes"] for r in _lines(store / "results.jsonl")]
    assert all("gen_ai.evaluation.score.value" not in e for e in events)
    scored = sorted((m["label"], m["agreeable"]) for m in metrics)
    assert scored == [("Agrees", 1.0), ("Agrees", 1.0), ("Neutral", 0.0), ("Neutral", 0.0)]
