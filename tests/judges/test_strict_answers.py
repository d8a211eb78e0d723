"""One strict reading of judge answers for every judge kind (issue 17 item 6).

A score is an integer on the judge's scale (``3.5``, ``true`` and ``"4"`` are "could not parse score"), an
answer that names a key twice is refused (Python's json keeps the last one: ``{"score": 5, "score": 1}``
scored 1), an answer over ``EVALKIT_JUDGE_ANSWER_LIMIT`` characters is refused unread, and a stored reason
keeps at most ``EVALKIT_REASON_LIMIT`` characters with a marker saying how much was cut. Through the real
code against ``ModelServer``: azure-ai-evaluation's prompts (built-ins), promptflow (evalkit's shipped
``professional_tone`` judge, ``json_object``; a text-format judge read by ``read_judge_answer``) and AgentCore
span judges.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

import evalkit
from evalkit.judges import strict_answers
from evalkit.spans import evaluate_spans
from evalkit.spans.llm_judges.judge_runner import SpanJudges

REPO = Path(__file__).resolve().parents[2]
SPANS = REPO / "data" / "agentcore_spans.jsonl"

#: What the judge answers, by the case tag in the judged prompt; the last two are read.
ANSWERS = {
    "fraction": '{"score": 3.5, "reason": "between"}',
    "boolean": '{"score": true, "reason": "yes"}',
    "string": '{"score": "4", "reason": "text"}',
    "twice": '{"score": 5, "score": 1, "reason": "which one"}',
    "nested_twice": '{"score": 4, "reason": "ok", "detail": {"a": 1, "a": 2}}',
    "integer": '{"score": 4, "reason": "fine"}',
    "whole_float": '{"score": 4.0, "reason": "fine"}',
}
REFUSED = len(ANSWERS) - 2

TEXT_JUDGE = """
from pathlib import Path

from evalkit.judges.judge_answers import read_judge_answer


class Judge:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        config = dict(model_config, type="openai")
        self._flow = load_flow(source=str(Path(__file__).with_suffix(".prompty")), model={"configuration": config})

    def __call__(self, *, prompt="", response="", **_):
        return read_judge_answer(self._flow(user_prompt=prompt, response=response))
"""
TEXT_PROMPTY = (
    "---\nname: text_judge\nmodel:\n  api: chat\n  parameters:\n    temperature: 0.0\n"
    "inputs:\n  user_prompt:\n    type: string\n  response:\n    type: string\n---\n"
    'system:\nReply with JSON only: {"score": <integer 1-5>, "reason": "<one sentence>"}\n\n'
    "user:\n{{user_prompt}}\n{{response}}\n"
)


def config(server) -> dict:
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


def by_case(request) -> str:
    text = json.dumps(request["body"]["messages"])
    return next(answer for case, answer in ANSWERS.items() if f"case-{case}." in text)


def install(project) -> None:
    shutil.copytree(REPO / "custom-evaluators" / "professional_tone", project.custom / "professional_tone")
    project.evaluator("text_judge", TEXT_JUDGE, prompty=TEXT_PROMPTY)


def run(server, evaluators: dict, items: list[dict]):
    doc = {"schemaVersion": "1.11.0", "default_evaluators": evaluators, "items": items}
    return evalkit.evaluate(
        evalkit.load(doc), model_config=config(server), cache=False, progress=False, judge_attempts=1
    )


def test_only_integer_scores_on_the_scale_and_no_repeated_keys_for_every_judge_kind(project, model_server):
    install(project)
    model_server.script = by_case
    items = [{"prompt": f"Question case-{case}.", "response": "20 days"} for case in ANSWERS]
    scored = run(model_server, {"Relevance": {}, "professional_tone": {}, "text_judge": {}}, items)
    for key in ("relevance", "professional_tone", "text_judge"):
        errors = scored[f"{key}_error"].tolist()
        for case, error in zip(list(ANSWERS)[:REFUSED], errors, strict=False):
            if key == "text_judge" and case == "string":
                # read_judge_answer is the wrapper converting: promptflow's eval-basic asks for "score": "5"
                assert error is None and scored.loc[2, key] == 4.0
                continue
            assert isinstance(error, str) and error.startswith("could not parse score"), (key, case, error)
        assert scored[key].tolist()[REFUSED:] == [4.0, 4.0], (key, errors)
        twice = errors[list(ANSWERS).index("twice")]
        assert "'score' more than once" in twice, (key, twice)
        assert "'a' more than once" in errors[list(ANSWERS).index("nested_twice")], key
    # The built-in reads the answer itself: every refusal is judgeOutputUnparseable, naming what came.
    assert set(scored["relevance_code"][:REFUSED]) == {"judgeOutputUnparseable"}
    assert "'4' (a string), not an integer from 1 to 5" in scored.loc[2, "relevance_error"]
    assert "True (a boolean)" in scored.loc[1, "relevance_error"]
    assert model_server.request_count == 3 * len(ANSWERS)  # refused answers are not retried


def test_span_judges_refuse_repeated_keys(model_server):
    model_server.script = lambda request: (
        '{"explanation": "fine", "label": "Very Helpful", "label": "Not Helpful"}'
    )
    results = evaluate_spans(
        SPANS, ["Builtin.Helpfulness"], judges=SpanJudges(config(model_server), cache=False)
    )
    assert results and {r.get("errorCode") for r in results} == {"judgeOutputUnparseable"}, results
    assert "'label' more than once" in results[0]["errorMessage"]


@pytest.fixture
def small_limits(monkeypatch):
    monkeypatch.setenv(strict_answers.ANSWER_LIMIT_VARIABLE, "20000")
    monkeypatch.setenv(strict_answers.REASON_LIMIT_VARIABLE, "300")


def test_an_answer_over_the_limit_is_refused_unread_for_every_judge_kind(project, model_server, small_limits):
    install(project)
    huge = json.dumps({"score": 4, "reason": "padding " * 5000})  # 40,026 characters
    model_server.script = lambda request: huge
    scored = run(
        model_server,
        {"Relevance": {}, "professional_tone": {}, "text_judge": {}},
        [{"prompt": "Q", "response": "R"}],
    )
    for key in ("relevance", "professional_tone", "text_judge"):
        error = scored.loc[0, f"{key}_error"]
        assert error.startswith("could not parse score: the judge's answer is 40,026 characters"), (
            key,
            error,
        )
        assert "over the limit of 20,000 (EVALKIT_JUDGE_ANSWER_LIMIT)" in error and len(error) < 600, key
        assert scored.loc[0, f"{key}_code"] == "judgeOutputUnparseable"
    assert scored.attrs["evalkit"]["judge"]["completion_tokens"] > 0  # refused, but billed and counted
    results = evaluate_spans(
        SPANS, ["Builtin.Helpfulness"], judges=SpanJudges(config(model_server), cache=False)
    )
    assert {r.get("errorCode") for r in results} == {"judgeOutputUnparseable"}
    assert "40,026 characters" in results[0]["errorMessage"]


def test_stored_reasons_are_cut_with_a_marker_in_results_json_and_csv(
    project, model_server, small_limits, tmp_path
):
    install(project)
    reason = "A long reason. " * 1000  # 15,000 characters
    model_server.script = lambda request: json.dumps({"score": 4, "reason": reason})
    scored = run(model_server, {"Relevance": {}, "professional_tone": {}}, [{"prompt": "Q", "response": "R"}])
    marker = "… [cut by evalkit: 14,700 of 15,000 characters not kept; EVALKIT_REASON_LIMIT=300]"
    for key in ("relevance", "professional_tone"):
        assert scored.loc[0, f"{key}_reason"] == reason[:300] + marker, key
    paths = evalkit.save_results(scored, tmp_path / "run")
    written = json.loads(Path(paths["json"]).read_text())
    assert written["items"][0]  # the run is written whole
    assert reason not in Path(paths["json"]).read_text() and marker in Path(paths["json"]).read_text()
    with open(paths["csv"], newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cells = [v for v in rows[0].values() if v and "A long reason" in v]
    assert cells and all(len(v) <= 300 + len(marker) for v in cells)


@pytest.mark.slow
def test_a_100_mb_answer_is_not_kept(model_server, tmp_path):
    huge = json.dumps({"score": 4, "reason": "x" * (100 * 1024 * 1024)})
    model_server.script = lambda request: evalkit.testing.Reply(content=huge, completion_tokens=26_000_000)
    scored = run(model_server, {"Relevance": {}}, [{"prompt": "Q", "response": "R"}])
    error = scored.loc[0, "relevance_error"]
    assert f"{len(huge):,} characters, over the limit of 4,194,304" in error and len(error) < 600
    paths = evalkit.save_results(scored, tmp_path / "run")
    assert Path(paths["json"]).stat().st_size < 1_000_000 and Path(paths["csv"]).stat().st_size < 100_000


def test_the_limits_read_from_the_environment(monkeypatch):
    assert strict_answers.answer_limit() == strict_answers.DEFAULT_ANSWER_LIMIT == 4 * 1024 * 1024
    monkeypatch.setenv(strict_answers.ANSWER_LIMIT_VARIABLE, "1_000")
    assert strict_answers.answer_limit() == 1000
    assert strict_answers.cut_reason("short") == "short" and strict_answers.cut_reason(None) is None
    monkeypatch.setenv(strict_answers.REASON_LIMIT_VARIABLE, "lots")
    with pytest.raises(
        strict_answers.JudgeFailure, match="EVALKIT_REASON_LIMIT='lots' is not a whole number"
    ):
        strict_answers.reason_limit()


def test_tool_call_accuracy_through_azure_ai_evaluation_reads_the_same_way(model_server):
    from opentelemetry import trace

    def agent(prompt, history):
        with trace.get_tracer("test").start_as_current_span("execute_tool fetch_weather") as span:
            span.set_attribute("gen_ai.tool.name", "fetch_weather")
            span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"location": "Seattle"}))
        return "Rainy, 12 degrees."

    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"ToolCallAccuracy": {}},
        "items": [{"prompt": "How is the weather in Seattle?"}],
    }
    for answer, expected in [
        ('{"score": 3.5, "reason": "half"}', "3.5, not an integer from 1 to 5"),
        ('{"score": 5, "reason": "all right", "score": 1}', "'score' more than once"),
    ]:
        model_server.script = [answer]
        scored = evalkit.evaluate(
            evalkit.load(doc), agent=agent, model_config=config(model_server), cache=False, progress=False
        )
        assert scored.loc[0, "toolCallAccuracy_code"] == "judgeOutputUnparseable", scored.loc[0].to_dict()
        assert expected in scored.loc[0, "toolCallAccuracy_error"]
    judge = scored.attrs["evalkit"]["judge"]
    assert (
        judge["calls"] == 1 and judge["prompt_tokens"] == model_server.requests[-1]["usage"]["prompt_tokens"]
    )
