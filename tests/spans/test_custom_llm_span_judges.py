"""Custom LLM-as-judge span evaluators: ``custom-evaluators/<name>/<name>.json`` shaped like CreateEvaluator."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.errors import EvaluatorConfigError
from evalkit.spans.evaluator_specs import resolve_span_evaluator
from evalkit.spans.llm_judges.judge_runner import SpanJudges
from evalkit.testing import Reply
from tests.spans.test_builtin_span_judges import DATA, SESSIONS, TRACES
from tests.spans.test_spans import run_cli, write_evaluator

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "custom-evaluators" / "market_answer_quality" / "market_answer_quality.json"

CONFIG = {
    "level": "SESSION",
    "evaluatorConfig": {
        "llmAsAJudge": {
            "instructions": "Did the agent stay polite?\n\n# Conversation\n{context}",
            "ratingScale": {
                "categorical": [
                    {"label": "Rude", "definition": "impolite at least once"},
                    {"label": "Polite", "definition": "polite throughout"},
                ]
            },
            "modelConfig": {
                "bedrockEvaluatorModelConfig": {
                    "modelId": "any",
                    "inferenceConfig": {"maxTokens": 300, "topP": 0.9},
                }
            },
        }
    },
}


def write_config(root: Path, name: str, config) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    return path


def test_the_bundled_example_runs_with_numerical_values_normalised(judge_env):
    judge_env.script = [
        Reply({"label": "Good", "explanation": "right figures"}),
        Reply({"label": 2, "explanation": "x"}),
    ]
    results = spans.evaluate_spans(
        DATA, ["market_answer_quality"], custom_dir=EXAMPLE.parent.parent, judges=SpanJudges(concurrency=1)
    )
    assert len(results) == TRACES
    # 4 on a 1-5 scale is 0.8, as AgentCore normalises; a numerical scale's number is read as its label.
    assert [(r["label"], r["value"]) for r in results[:2]] == [("Good", 0.8), ("Weak", 0.4)]
    assert results[0]["evaluatorName"] == "market_answer_quality"
    assert results[0]["evaluatorId"].startswith("market_answer_quality-")
    body = judge_env.requests[0]["body"]
    assert body["max_tokens"] == 512 and body["temperature"] == 0.0
    system = body["messages"][0]["content"]
    assert '- "Poor" (score 1): figures missing, wrong or invented' in system
    assert "# Assistant response\nApple (AAPL) is trading at $182.45" in body["messages"][1]["content"]


def test_cli_runs_a_custom_judge_next_to_code_and_builtin_ones(judge_env, tmp_path, capsys):
    custom = tmp_path / "custom-evaluators"
    write_config(custom, "polite", CONFIG)
    write_evaluator(
        custom,
        "check",
        'EVALUATION_LEVEL = "SESSION"\ndef lambda_handler(e, c):\n    return {"label": "PASS"}\n',
    )
    out = tmp_path / "out"
    argv = ["spans", "eval", str(DATA), "--custom-dir", str(custom), "--out", str(out)]
    assert (
        run_cli([*argv, "--evaluator", "polite", "--evaluator", "check", "--evaluator", "Builtin.Coherence"])
        == 0
    )
    assert "polite (SESSION)" in capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())["evaluationResults"]
    polite = [r for r in results if r["evaluatorName"] == "polite"]
    assert len(polite) == SESSIONS and {r["label"] for r in polite} <= {"Rude", "Polite"}
    assert (
        judge_env.requests[0]["body"]["max_tokens"] == 300 and judge_env.requests[0]["body"]["top_p"] == 0.9
    )


def broken(change) -> dict:
    config = copy.deepcopy(CONFIG)
    change(config, config["evaluatorConfig"]["llmAsAJudge"])
    return config


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("{ not json", "line 1, column 3: not valid JSON"),
        (
            broken(lambda c, j: j.update(instructions="Judge {assistant_turn}")),
            "{assistant_turn} are not defined for SESSION",
        ),
        (broken(lambda c, j: j.update(instructions="Judge it")), "the instructions use no placeholder"),
        (
            broken(lambda c, j: j.update(ratingScale={"categorical": []})),
            "the categorical rating scale is empty",
        ),
        (
            broken(lambda c, j: j.update(ratingScale={"stars": [1]})),
            "'ratingScale' must be an object with exactly one key",
        ),
        (
            broken(lambda c, j: j["ratingScale"]["categorical"][0].pop("definition")),
            "ratingScale.categorical[0]: 'definition' missing",
        ),
        (
            broken(lambda c, j: j["ratingScale"]["categorical"][0].update(value=1.0)),
            "ratingScale.categorical[0]: a categorical rating has no 'value'",
        ),
        (broken(lambda c, j: j["ratingScale"]["categorical"][1].update(label="rude")), "gives a label twice"),
        (broken(lambda c, j: c.pop("level")), "'level' is missing"),
        (
            broken(lambda c, j: c.update(level="TURN")),
            "'level' 'TURN' is not one of TRACE, TOOL_CALL, SESSION",
        ),
        (
            broken(lambda c, j: c.update(evaluatorName="other")),
            "evaluatorName 'other' differs from the folder's name",
        ),
        (
            broken(lambda c, j: c.update(evaluatorConfig={"codeBased": {}})),
            "write polite.py defining lambda_handler",
        ),
        (
            broken(
                lambda c, j: j["modelConfig"]["bedrockEvaluatorModelConfig"]["inferenceConfig"].update(seed=1)
            ),
            "unknown inferenceConfig field(s) 'seed'",
        ),
    ],
)
def test_configuration_mistakes_name_the_file_and_the_field(tmp_path, config, message):
    path = write_config(tmp_path, "polite", config)
    with pytest.raises(EvaluatorConfigError) as caught:
        resolve_span_evaluator("polite", tmp_path)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_level_override_and_both_files_are_refused(tmp_path):
    write_config(tmp_path, "polite", CONFIG)
    assert resolve_span_evaluator("polite:session", tmp_path).level == "SESSION"
    with pytest.raises(EvaluatorConfigError, match="is a SESSION evaluator"):
        resolve_span_evaluator("polite:TRACE", tmp_path)
    write_evaluator(tmp_path, "polite", "def lambda_handler(e, c):\n    return {'label': 'x'}\n")
    with pytest.raises(EvaluatorConfigError, match="holds both polite.py .* and polite.json"):
        resolve_span_evaluator("polite", tmp_path)


def test_editing_the_configuration_rescores_only_that_judge(judge_env, tmp_path):
    write_config(tmp_path, "polite", CONFIG)
    spans.evaluate_spans(DATA, ["polite", "Builtin.GoalSuccessRate"], custom_dir=tmp_path)
    assert judge_env.request_count == 2 * SESSIONS
    spans.evaluate_spans(DATA, ["polite", "Builtin.GoalSuccessRate"], custom_dir=tmp_path)
    assert judge_env.request_count == 2 * SESSIONS  # all cached
    write_config(
        tmp_path, "polite", broken(lambda c, j: j.update(instructions=j["instructions"] + "\nBe strict."))
    )
    spans.evaluate_spans(DATA, ["polite", "Builtin.GoalSuccessRate"], custom_dir=tmp_path)
    assert judge_env.request_count == 3 * SESSIONS
