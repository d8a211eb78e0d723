"""Whatever the response format, a judge answer that cannot be read shows the seed's troubleshooting text.

Seed 000 (custom evaluators), Troubleshooting: "Result shows error with reason could not parse score: The
model didn't return well-formed JSON." Every judge path is run against ``ModelServer`` answering malformed
content: built-in judges, ToolCallAccuracy (azure-ai-evaluation's evaluator object), and custom ``.prompty``
judges whose ``response_format`` is ``json_object`` (promptflow parses the JSON), ``text`` (the wrapper parses
it) or a JSON schema, with the wrapper the scaffold writes (``data["score"]``).
"""

from __future__ import annotations

import json
import textwrap

import pytest

import evalkit

ANSWERS = {
    "not_json": "This is not JSON {score: five",
    "empty": "",
    "fenced": '```json\n{"score": 4, "reason": "ok"}\n```',
    "no_score": json.dumps({"reason": "fine"}),
    "null": "null",
    "array": "[1, 2]",
    "score_word": json.dumps({"score": "five", "reason": "x"}),
    "score_seven": json.dumps({"score": 7, "reason": "x"}),
}

WRAPPER = """
import json
from pathlib import Path


class Judge:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        config = dict(model_config)
        config.setdefault("type", "azure_openai" if "azure_endpoint" in config else "openai")
        self._flow = load_flow(source=str(Path(__file__).with_suffix(".prompty")), model={"configuration": config})

    def __call__(self, *, prompt="", response="", **_):
        answer = self._flow(user_prompt=prompt, response=response)
        data = json.loads(answer) if isinstance(answer, str) else answer
        return {"score": data["score"], "reason": data.get("reason", "")}
"""

FORMATS = {
    "json_object": "    response_format:\n      type: json_object\n",
    "text": "",
    "json_schema": textwrap.indent(
        "response_format:\n"
        "  type: json_schema\n"
        "  json_schema:\n"
        "    name: verdict\n"
        "    schema:\n"
        "      type: object\n"
        "      properties:\n"
        "        score: {type: integer}\n"
        "        reason: {type: string}\n",
        "    ",
    ),
}


def prompty(name: str, response_format: str) -> str:
    return (
        f"---\nname: {name}\nmodel:\n  api: chat\n  parameters:\n    temperature: 0.0\n{response_format}"
        "inputs:\n  user_prompt:\n    type: string\n  response:\n    type: string\n---\n"
        'system:\nReply with JSON only: {"score": <integer 1-5>, "reason": "<one sentence>"}\n\n'
        "user:\n{{user_prompt}}\n{{response}}\n"
    )


def answer_for(request) -> str:
    """The malformed answer named by the case tag in the request's messages."""
    text = json.dumps(request["body"]["messages"])
    return next(content for case, content in ANSWERS.items() if f"case-{case}." in text)


def config(server) -> dict:
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


def test_every_judge_says_could_not_parse_score_whatever_the_response_format(project, model_server):
    judges = {f"judge_{fmt}": fmt for fmt in FORMATS}
    for name, fmt in judges.items():
        project.evaluator(name, WRAPPER, prompty=prompty(name, FORMATS[fmt]))
    evaluators = {"Relevance": {}, "Coherence": {}, **{name: {} for name in judges}}
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": evaluators,
        "items": [{"prompt": f"Question case-{case}.", "response": "20 days"} for case in ANSWERS],
    }
    model_server.script = answer_for
    scored = evalkit.evaluate(
        evalkit.load(doc), model_config=config(model_server), cache=False, progress=False, judge_attempts=1
    )
    for key in ("relevance", "coherence", *judges):
        for case, error in zip(ANSWERS, scored[f"{key}_error"], strict=True):
            assert isinstance(error, str) and error.startswith("could not parse score"), (key, case, error)
        unreadable = scored[f"{key}_code"][: len(ANSWERS) - 2]  # the last two are read, with a bad score
        assert set(unreadable) == {"judgeOutputUnparseable"}, (key, list(unreadable))
    for name in judges:  # custom judges also say what to check, as the seed's troubleshooting table does
        assert scored[f"{name}_error"][: len(ANSWERS) - 2].str.contains("response_format").all()


def test_tool_call_accuracy_answer_without_a_usable_score(model_server):
    from opentelemetry import trace

    def agent(prompt, history):
        with trace.get_tracer("test").start_as_current_span("execute_tool fetch_weather") as span:
            span.set_attribute("gen_ai.tool.name", "fetch_weather")
            span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"location": "Seattle"}))
        return "Rainy, 12 degrees."

    model_server.script = [json.dumps({"reason": "no score here"}), "not json at all"]
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"ToolCallAccuracy": {}},
        "items": [{"prompt": "How is the weather in Seattle?"}],
    }
    for _ in range(2):
        scored = evalkit.evaluate(
            evalkit.load(doc), agent=agent, model_config=config(model_server), cache=False, progress=False
        )
        assert scored.loc[0, "toolCallAccuracy_code"] == "judgeOutputUnparseable"
        assert scored.loc[0, "toolCallAccuracy_error"].startswith("could not parse score")


@pytest.mark.parametrize(
    "body, expected",
    [
        ('raise RuntimeError("quota exceeded")', "RuntimeError: quota exceeded"),
        ("return {'error': 'model refused'}", "model refused"),
    ],
)
def test_other_wrapper_failures_keep_their_own_message(project, body, expected):
    source = f"""
    class Judge:
        def __init__(self, *, model_config, threshold=3, options=None, **_):
            pass
        def __call__(self, **_):
            {body}
    """
    project.evaluator("judge", source, prompty="---\nname: judge\n---\n")
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"judge": {}},
        "items": [{"prompt": "P", "response": "R"}],
    }
    model = {"base_url": "http://127.0.0.1:9", "model": "m", "api_key": "k"}
    scored = evalkit.evaluate(evalkit.load(doc), model_config=model, cache=False, progress=False)
    assert expected in scored.loc[0, "judge_error"]
    assert "could not parse score" not in scored.loc[0, "judge_error"]
