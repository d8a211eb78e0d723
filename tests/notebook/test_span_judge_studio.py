"""JudgeStudio opens LLM-as-judge span evaluators (``<name>.json``, ``Builtin.<Name>``) and runs them on spans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.notebook import JudgeStudio
from evalkit.notebook.span_judge_studio import SpanJudgeStudio
from evalkit.spans import evaluate_spans
from evalkit.spans.llm_judges.judge_runner import SpanJudges
from evalkit.testing import Reply

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "agentcore_spans.jsonl"
EXAMPLE = REPO / "custom-evaluators" / "market_answer_quality" / "market_answer_quality.json"


@pytest.fixture
def model(model_server):
    return model_server, {"base_url": model_server.openai_base_url, "model": "judge", "api_key": "k"}


def test_a_json_judge_opens_edits_runs_compares_and_saves(model, tmp_path):
    server, config = model
    custom = tmp_path / "custom-evaluators"
    (custom / "market_answer_quality").mkdir(parents=True)
    (custom / "market_answer_quality" / "market_answer_quality.json").write_text(EXAMPLE.read_text())
    studio = JudgeStudio("market_answer_quality", custom_dir=custom, spans=DATA, model_config=config)
    assert isinstance(studio, SpanJudgeStudio) and not studio.is_new and not studio.dirty
    assert studio.level == "TRACE" and studio.placeholders() == (
        "context",
        "assistant_turn",
        "expected_response",
    )
    assert studio.problems() == []
    system, user = studio.preview()
    assert "# Assistant response\nApple (AAPL) is trading at $182.45 today, up 1.2%." in user["content"]

    first = studio.run(note="as shipped")
    assert len(first.results) == 6 and first.calls == 6 and first.results["errorCode"].isna().all()
    assert set(first.results["value"]) <= {0.2, 0.4, 0.6, 0.8, 1.0}

    studio.instructions = studio.instructions.replace("{assistant_turn}", "{tool_turn}")
    assert studio.dirty and "{tool_turn} are not defined for TRACE" in studio.problems()[0]
    with pytest.raises(EvalkitError, match="not saved"):
        studio.save()
    studio.instructions = studio.instructions.replace("{tool_turn}", "{assistant_turn}") + "\nBe strict."
    server.script = lambda request: Reply({"label": "Poor", "explanation": "strict"})
    second = studio.run()
    assert (second.results["label"] == "Poor").all()
    compared = studio.compare_versions()
    assert list(compared.columns) == [
        "sessionId",
        "traceId",
        "spanId",
        "label_1",
        "value_1",
        "label_2",
        "value_2",
        "changed",
    ]
    assert compared["changed"].sum() == (first.results["label"] != "Poor").sum()
    assert '+      "instructions": ' in studio.diff() and "Be strict." in studio.diff()

    path = studio.save()
    assert not studio.dirty and json.loads(path.read_text())["evaluatorConfig"]["llmAsAJudge"][
        "instructions"
    ].endswith("Be strict.")
    # The saved file is what evalkit spans eval runs: the same prompts, so the cache answers them.
    calls = server.request_count
    saved = evaluate_spans(DATA, ["market_answer_quality"], custom_dir=custom, judges=SpanJudges(config))
    assert [r["label"] for r in saved] == ["Poor"] * 6 and server.request_count == calls


def test_a_builtin_is_the_start_of_a_new_custom_judge(model, tmp_path):
    _, config = model
    studio = JudgeStudio("Builtin.GoalSuccessRate", custom_dir=tmp_path, spans=DATA, model_config=config)
    assert studio.is_new and studio.name == "GoalSuccessRate_custom" and studio.level == "SESSION"
    version = studio.run()
    assert len(version.results) == 4 and set(version.results["label"]) <= {"Yes", "No"}
    path = studio.save()
    assert path == tmp_path / "GoalSuccessRate_custom" / "GoalSuccessRate_custom.json"
    # The saved file runs as a custom evaluator and judges as the draft did (same prompt: answered by the cache).
    again = JudgeStudio("GoalSuccessRate_custom", custom_dir=tmp_path, spans=DATA, model_config=config).run()
    assert list(again.results["label"]) == list(version.results["label"]) and again.calls == 0


def test_a_json_judge_without_spans_says_how_to_open_it(tmp_path):
    (tmp_path / "tone").mkdir()
    (tmp_path / "tone" / "tone.json").write_text("{}")
    with pytest.raises(EvalkitError, match=r"JudgeStudio\('tone', spans='spans.jsonl'\)"):
        JudgeStudio("tone", custom_dir=tmp_path)
