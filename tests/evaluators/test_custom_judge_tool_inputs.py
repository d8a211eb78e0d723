"""Custom LLM judges receive the agent's ``tool_calls`` and ``tool_definitions`` where the row has them.

A ``.prompty`` judge in the style of azure-ai-evaluation's tool-focused judges renders ``{{tool_calls}}``; it
runs through promptflow's real loader against ``ModelServer``, and the request the judge model received must
hold the calls. Rows come from a document ``spans to-document`` made (the item's link to its trace) and
from captured spans (an agent run).
"""

from __future__ import annotations

import json
from pathlib import Path

import evalkit
from evalkit import spans
from evalkit.evaluators.custom.tool_inputs import tool_inputs
from evalkit.judges.offline import import_promptflow_quietly

import_promptflow_quietly()

REPO = Path(__file__).resolve().parents[2]
SPLIT = REPO / "data" / "agentcore_split_spans.jsonl"

PROMPTY = """---
name: tool_input_accuracy
description: Are the tool calls' arguments right for the query? (1-5)
model:
  api: chat
  parameters:
    temperature: 0.0
    response_format:
      type: json_object
inputs:
  query:
    type: string
  tool_calls:
    type: string
  tool_definitions:
    type: string
---
system:
You judge whether an agent's tool calls use the right arguments for the user's query.
Reply with only JSON: {"score": <int 1-5>, "reason": "<one sentence>"}

user:
QUERY: {{query}}
TOOL DEFINITIONS: {{tool_definitions}}
TOOL CALLS: {{tool_calls}}
"""

#: The wrapper forwards the tool calls to its .prompty; ``seen`` records what it was called with.
WRAPPER = """
import json
from pathlib import Path

seen = []


class ToolInputAccuracy:
    def __init__(self, *, model_config, **_):
        from promptflow.client import load_flow

        config = dict(model_config)
        config.setdefault("type", "azure_openai" if "azure_endpoint" in config else "openai")
        self._flow = load_flow(source=str(Path(__file__).with_suffix(".prompty")), model={"configuration": config})

    def __call__(self, *, prompt="", tool_calls=None, tool_definitions=None, **_):
        seen.append({"tool_calls": tool_calls, "tool_definitions": tool_definitions})
        answer = self._flow(
            query=prompt, tool_calls=json.dumps(tool_calls), tool_definitions=json.dumps(tool_definitions)
        )
        data = json.loads(answer) if isinstance(answer, str) else answer
        return {"score": data["score"], "reason": data["reason"]}
"""

#: A wrapper of the four arguments and ``**_``, as the seed writes them: the tool inputs are absorbed.
FOUR_ARGUMENTS = """
class Plain:
    def __init__(self, **_):
        pass

    def __call__(self, *, prompt="", response="", expected_response="", context="", **_):
        return {"score": 4, "reason": "fine"}
"""


PLAIN = "---\nname: plain\ninputs:\n  response:\n    type: string\n---\nsystem:\n{{response}}\n"


def config(server) -> dict:
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


def test_a_custom_judge_sees_the_tool_calls_of_a_document_made_from_traces(project, model_server):
    project.evaluator("tool_input_accuracy", WRAPPER, prompty=PROMPTY)
    project.evaluator("plain", FOUR_ARGUMENTS, prompty=PLAIN)
    document = spans.to_document(spans=SPLIT)
    document["default_evaluators"] = {"tool_input_accuracy": {}, "plain": {}}
    table = evalkit.load(document)
    scored = evalkit.evaluate(table, model_config=config(model_server), cache=False, progress=False)
    assert scored["tool_input_accuracy_error"].isna().all(), scored["tool_input_accuracy_error"].tolist()
    assert scored["plain_error"].isna().all() and (scored["plain"] == 4).all()

    # What the judge model was sent for the first item: its three tool calls, arguments included.
    first = next(r for r in model_server.requests if "BR-1042" in r["body"]["messages"][-1]["content"])
    text = first["body"]["messages"][-1]["content"]
    calls = json.loads(text.split("TOOL CALLS: ", 1)[1])
    assert [(c["name"], c["arguments"]) for c in calls] == [
        ("identify_broker", {"broker_id": "BR-1042"}),
        ("get_broker_profile", {"broker_id": "BR-1042"}),
        ("get_stock_data", {"ticker": "AAPL"}),
    ]
    assert {c["type"] for c in calls} == {"tool_call"}
    definitions = json.loads(text.split("TOOL DEFINITIONS: ", 1)[1].split("\n", 1)[0])
    assert [d["name"] for d in definitions] == ["identify_broker", "get_broker_profile", "get_stock_data"]


def test_tool_inputs_from_captured_spans_from_the_link_or_none():
    span = {
        "traceId": "a" * 32,
        "spanId": "b" * 16,
        "name": "execute_tool get_weather",
        "attributes": {
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "call_7",
            "gen_ai.tool.call.arguments": '{"city": "Paris"}',
            "gen_ai.tool.description": "The weather in a city.",
        },
    }
    assert tool_inputs({"spans": [span]}) == {
        "tool_calls": [
            {
                "type": "tool_call",
                "tool_call_id": "call_7",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
            }
        ],
        "tool_definitions": [
            {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {"type": "object", "properties": {}},
            }
        ],
    }
    link = {"dev.evalkit.spans": {"tool_calls": [{"name": "search", "arguments": None, "call_id": None}]}}
    assert tool_inputs({"spans": None, "extensions": link})["tool_calls"] == [
        {"type": "tool_call", "tool_call_id": "call_1", "name": "search", "arguments": {}}
    ]
    # No tool call: no keyword argument at all (a wrapper without **_ keeps working on such rows).
    assert tool_inputs({"spans": [], "extensions": {}}) == {}
    assert tool_inputs({"spans": [{"name": "chat", "attributes": {}}], "extensions": link}) == {}
