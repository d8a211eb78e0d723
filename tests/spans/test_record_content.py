"""Prompts, answers and tool calls read from event records and from the GenAI conventions' current form, on
telemetry captured from the real libraries (tests/data/spans/captured, SOURCE.md there) and on edge cases.

The committed captures: opentelemetry-instrumentation-openai-v2 2.4b0 (default mode: per-message log records;
``gen_ai_latest_experimental`` in SPAN_ONLY and EVENT_ONLY modes), Strands 1.62 (default and latest
conventions: span events) and AWS's bedrock-agentcore converter (AgentCore's split form: spans + records).
The live test re-captures with what this venv installs (openai-v2 2.3b0, which fits opentelemetry 1.38).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.spans.lambdas.payload import session_groups
from evalkit.spans.llm_judges.conversation import conversation, placeholders
from evalkit.spans.reading import message_forms as forms
from evalkit.spans.reading.span_frame import build_frame
from tests.spans.test_spans import run_cli

REPO = Path(__file__).resolve().parents[2]
CAPTURED = REPO / "tests" / "data" / "spans" / "captured"
QUESTION = "What is Apple stock trading at today?"
ANSWER = "Apple (AAPL) is trading at $182.45 today, up 1.2%."
TOOL_RESULT = "AAPL: $182.45 (+1.2%)"
#: capture -> (spans, event records, tool calls) in the file
CAPTURES = {
    "openai_v2_default": (1, 3, 0),
    "openai_v2_latest_span_only": (1, 0, 0),
    "openai_v2_latest_event_only": (1, 1, 0),
    "strands_default": (6, 0, 1),
    "strands_latest": (6, 0, 1),
    "agentcore_adot_strands": (6, 5, 1),
}


def only_conversation(path: Path):
    frame = spans.load(path, warn=False)
    (group,) = session_groups(frame, None)
    return frame, group, conversation(group.id, group.docs)


def assert_market_conversation(conv, tool_calls: int) -> None:
    (turn,) = conv.turns
    assert turn.user_prompt == QUESTION
    assert turn.assistant_output.strip() == ANSWER
    assert len(turn.tool_calls) == tool_calls
    for call in turn.tool_calls:
        assert (call.name, call.arguments, call.result) == ("get_stock_data", {"ticker": "AAPL"}, TOOL_RESULT)
        assert call.call_id == "call_evalkit_0_0"


# --- captured material ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CAPTURES)
def test_captured_conversation_is_read_whole(name):
    frame, _, conv = only_conversation(CAPTURED / f"{name}.jsonl")
    n_spans, n_records, n_tools = CAPTURES[name]
    assert frame["signal"].value_counts().to_dict() == {
        k: v for k, v in (("span", n_spans), ("record", n_records)) if v
    }
    assert_market_conversation(conv, n_tools)
    if n_tools:
        assert conv.tools[0]["name"] == "get_stock_data"


@pytest.mark.parametrize("name", CAPTURES)
def test_builtin_helpfulness_judges_the_captured_answer(name, judge_env, tmp_path):
    out = tmp_path / "out"
    argv = ["spans", "eval", str(CAPTURED / f"{name}.jsonl"), "--evaluator", "Builtin.Helpfulness"]
    assert run_cli(argv + ["--out", str(out)]) == 0
    (entry,) = json.loads((out / "results.json").read_text())["evaluationResults"]
    assert "errorCode" not in entry, entry  # not emptyAgentResponse
    assert entry["label"] and 0 <= entry["value"] <= 1
    (prompt,) = [r["body"]["messages"][1]["content"] for r in judge_env.requests]
    assert f"User: {QUESTION}" in prompt
    assert prompt.rstrip().endswith(f"# Assistant response\n{ANSWER}")


def test_placeholders_from_agentcore_split_form():
    _, group, conv = only_conversation(CAPTURED / "agentcore_adot_strands.jsonl")
    (turn,) = conv.turns
    trace = placeholders(conv, "TRACE", turn.trace_id, None)
    assert (
        trace["context"]
        == f'User: {QUESTION}\nAction: get_stock_data({{"ticker": "AAPL"}})\nTool: {TOOL_RESULT}'
    )
    assert trace["assistant_turn"].strip() == ANSWER
    tool = placeholders(conv, "TOOL_CALL", turn.trace_id, turn.tool_calls[0].span_id)
    assert tool["tool_turn"] == 'Action: get_stock_data({"ticker": "AAPL"})'
    assert tool["context"] == f"User: {QUESTION}"
    assert '"name": "get_stock_data"' in placeholders(conv, "SESSION", None, None)["available_tools"]


def test_captured_frame_response_text_is_the_answer_never_the_prompt():
    frame = spans.load(CAPTURED / "openai_v2_default.jsonl", warn=False)
    records = frame[frame["signal"] == "record"].set_index("name")["response_text"]
    assert records["gen_ai.choice"] == ANSWER
    assert records["gen_ai.user.message"] is None and records["gen_ai.system.message"] is None
    split = spans.load(CAPTURED / "agentcore_adot_strands.jsonl", warn=False)
    texts = split.loc[split["signal"] == "record", "response_text"].dropna().str.strip().tolist()
    assert texts == [ANSWER, ANSWER]  # the final chat call's record and the agent's; not the tool's record
    latest = spans.load(CAPTURED / "openai_v2_latest_span_only.jsonl", warn=False)
    assert latest["response_text"].tolist() == [ANSWER]  # gen_ai.output.messages
    strands = spans.load(CAPTURED / "strands_latest.jsonl", warn=False)
    agent = strands[strands["name"] == "invoke_agent market_agent"].iloc[0]
    assert agent["response_text"].strip() == ANSWER  # an operation.details span event


@pytest.mark.parametrize("name", ["openai_v2_default", "strands_latest", "agentcore_adot_strands"])
def test_capture_runs_live_against_model_server(name, tmp_path):
    """The real libraries installed here (openai-v2 2.3b0, Strands 1.62, bedrock-agentcore 1.25) captured anew
    against ModelServer give the same conversation as the committed files."""
    out = tmp_path / f"{name}.jsonl"
    run = subprocess.run(
        [sys.executable, str(CAPTURED / "capture.py"), name, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**_clean_env(), "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    _, _, conv = only_conversation(out)
    assert_market_conversation(conv, CAPTURES[name][2])


def _clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}


# --- precedence and edge cases ----------------------------------------------------------------------------

T, S, TOOL = "a" * 32, "b" * 16, "c" * 16


def span(span_id=S, name="invoke_agent market_agent", attributes=None, events=None, start=10, end=20):
    doc = {
        "traceId": T,
        "spanId": span_id,
        "name": name,
        "kind": "INTERNAL",
        "startTimeUnixNano": start,
        "endTimeUnixNano": end,
        "attributes": {"session.id": "s", "gen_ai.operation.name": "invoke_agent", **(attributes or {})},
        "status": {"code": "UNSET"},
    }
    if events:
        doc["events"] = [{"name": n, "timeUnixNano": start, "attributes": a} for n, a in events]
    return doc


def adot_record(span_id=S, *, prompt=None, answer=None, time=20, extra_outputs=()):
    body = {"input": {"messages": []}, "output": {"messages": []}}
    if prompt is not None:
        body["input"]["messages"].append(
            {"role": "user", "content": {"content": json.dumps([{"text": prompt}])}}
        )
    if answer is not None:
        body["output"]["messages"].append(
            {"role": "assistant", "content": {"message": answer, "finish_reason": "end_turn"}}
        )
    body["output"]["messages"].extend(extra_outputs)
    return {"traceId": T, "spanId": span_id, "timeUnixNano": time, "body": body, "attributes": {}}


def output_messages(text):
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def turn_of(docs):
    (turn,) = conversation("s", docs).turns
    return turn


def test_precedence_span_attributes_then_span_events_then_records():
    record = adot_record(answer="from the record")
    event = (
        "gen_ai.client.inference.operation.details",
        {"gen_ai.output.messages": output_messages("event")},
    )
    doc = span(attributes={"gen_ai.output.messages": output_messages("attribute")}, events=[event])
    assert turn_of([doc, record]).assistant_output == "attribute"
    del doc["attributes"]["gen_ai.output.messages"]
    assert turn_of([doc, record]).assistant_output == "event"
    del doc["events"]
    assert turn_of([doc, record]).assistant_output == "from the record"


def test_records_fill_only_what_the_span_lacks_and_the_last_record_wins():
    doc = span(events=[("gen_ai.user.message", {"content": "span prompt"})])
    records = [
        adot_record(prompt="record prompt", answer="first", time=15),
        adot_record(answer="second", time=19),
    ]
    turn = turn_of([doc, *records])
    assert (turn.user_prompt, turn.assistant_output) == ("span prompt", "second")
    assert forms.user_prompt(span(), records) == "record prompt"


def test_a_users_message_is_never_the_answer():
    user_record = {
        "traceId": T,
        "spanId": S,
        "timeUnixNano": 20,
        "eventName": "gen_ai.user.message",
        "body": {"content": "My SSN is 123-45-6789"},
        "attributes": {},
    }
    only_input = adot_record(prompt="I heard AAPL is at $250?")
    doc = span(events=[("gen_ai.user.message", {"content": "hi"})])
    for docs in ([doc, user_record], [doc, only_input], [span(), user_record]):
        turn = turn_of(docs)
        assert turn.assistant_output is None and turn.user_prompt is not None
    built = build_frame([doc, user_record, only_input], [], "test")
    assert built["response_text"].isna().all()


def test_tool_results_appended_to_a_conversation_record_are_not_the_answer():
    appended = {"role": "assistant", "content": json.dumps([{"toolResult": {"content": [{"text": "raw"}]}}])}
    plain_result = {"role": "assistant", "content": "AAPL: $182.45"}
    record = adot_record(
        prompt="q", answer=json.dumps([{"text": "the answer"}]), extra_outputs=[appended, plain_result]
    )
    assert turn_of([span(), record]).assistant_output == "the answer"


def test_system_instructions_are_never_the_prompt():
    details = {
        "traceId": T,
        "spanId": S,
        "timeUnixNano": 20,
        "eventName": "gen_ai.client.inference.operation.details",
        "attributes": {
            "gen_ai.system_instructions": [{"type": "text", "content": "You are a market bot"}],
            "gen_ai.input.messages": [{"role": "system", "parts": [{"type": "text", "content": "be brief"}]}],
            "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}],
        },
    }
    turn = turn_of([span(), details])
    assert (turn.user_prompt, turn.assistant_output) == (None, "ok")


def test_records_whose_span_is_missing_join_their_trace():
    orphan = adot_record(span_id="d" * 16, prompt="orphan prompt", answer="orphan answer", time=30)
    turn = turn_of([span(), orphan])
    assert (turn.user_prompt, turn.assistant_output) == ("orphan prompt", "orphan answer")


def test_tool_record_gives_the_tool_call_and_is_not_response_text():
    tool_span = span(TOOL, name="execute_tool get_price", attributes={"gen_ai.tool.name": "get_price"})
    tool_span["attributes"]["gen_ai.operation.name"] = "execute_tool"
    record = {
        "traceId": T,
        "spanId": TOOL,
        "timeUnixNano": 15,
        "attributes": {},
        "body": {
            "input": {
                "messages": [{"role": "tool", "content": {"content": '{"ticker": "MSFT"}', "id": "t1"}}]
            },
            "output": {"messages": [{"role": "assistant", "content": {"message": "415.10", "id": "t1"}}]},
        },
    }
    (call,) = turn_of([span(), tool_span, record]).tool_calls
    assert (call.arguments, call.result, call.call_id) == ({"ticker": "MSFT"}, "415.10", "t1")
    built = build_frame([span(), tool_span, record], [], "test")
    assert built.loc[built["signal"] == "record", "response_text"].tolist() == [None]


def test_record_messages_in_langchain_shape_are_read():
    record = adot_record()
    record["body"]["input"]["messages"] = [{"type": "human", "content": "q from langchain"}]
    record["body"]["output"]["messages"] = [{"kwargs": {"type": "ai", "content": "a from langchain"}}]
    turn = turn_of([span(), record])
    assert (turn.user_prompt, turn.assistant_output) == ("q from langchain", "a from langchain")


def test_available_tools_carry_the_strands_tool_schema():
    _, _, conv = only_conversation(CAPTURED / "strands_latest.jsonl")
    (tool,) = conv.tools
    assert tool["parameters"]["properties"]["ticker"]["type"] == "string"
