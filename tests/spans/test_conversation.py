"""User prompts, answers and tool calls read from every span form agents emit, and the AgentCore placeholders."""

from __future__ import annotations

import json

import pytest

from evalkit.spans.llm_judges.conversation import NO_TOOLS, conversation, placeholders
from evalkit.spans.reading import message_forms as forms

T1, T2 = "a" * 32, "b" * 32


def span(span_id, name="chat", trace=T1, parent=None, start=1, end=2, attributes=None, events=None):
    doc = {
        "traceId": trace,
        "spanId": span_id,
        "name": name,
        "kind": "INTERNAL",
        "startTimeUnixNano": start,
        "endTimeUnixNano": end,
        "attributes": {"session.id": "s", **(attributes or {})},
        "status": {"code": "UNSET"},
    }
    if parent:
        doc["parentSpanId"] = parent
    if events:
        doc["events"] = [{"name": n, "timeUnixNano": start, "attributes": a} for n, a in events]
    return doc


# --- user prompt forms, one test each ----------------------------------------------------------------------

PROMPT_FORMS = {
    "genai input messages (parts)": {
        "attributes": {
            "gen_ai.input.messages": json.dumps(
                [
                    {"role": "system", "parts": [{"type": "text", "content": "be brief"}]},
                    {"role": "user", "parts": [{"type": "text", "content": "old question"}]},
                    {"role": "assistant", "parts": [{"type": "text", "content": "old answer"}]},
                    {"role": "user", "parts": [{"type": "text", "content": "What is AAPL at?"}]},
                ]
            )
        }
    },
    "genai user message event": {"events": [("gen_ai.user.message", {"content": "What is AAPL at?"})]},
    "strands user message event with text blocks": {
        "events": [("gen_ai.user.message", {"content": json.dumps([{"text": "What is AAPL at?"}])})]
    },
    "gen_ai.prompt text": {"attributes": {"gen_ai.prompt": "What is AAPL at?"}},
    "gen_ai.prompt messages": {
        "attributes": {"gen_ai.prompt": json.dumps([{"role": "user", "content": "What is AAPL at?"}])}
    },
    "traceloop indexed gen_ai.prompt.N": {
        "attributes": {
            "gen_ai.prompt.0.role": "system",
            "gen_ai.prompt.0.content": "be brief",
            "gen_ai.prompt.1.role": "user",
            "gen_ai.prompt.1.content": "What is AAPL at?",
        }
    },
    "openinference llm.input_messages": {
        "attributes": {
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "What is AAPL at?",
        }
    },
    "openinference multi-part contents": {
        "attributes": {
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.contents.0.message_content.type": "text",
            "llm.input_messages.0.message.contents.0.message_content.text": "What is AAPL at?",
        }
    },
    "openinference input.value (langchain messages)": {
        "attributes": {"input.value": json.dumps({"messages": [["user", "What is AAPL at?"]]})}
    },
    "traceloop entity input": {
        "attributes": {
            "traceloop.entity.input": json.dumps(
                {"inputs": {"messages": [{"type": "human", "content": "What is AAPL at?"}]}}
            )
        }
    },
}


@pytest.mark.parametrize("form", PROMPT_FORMS)
def test_user_prompt_is_read_from_each_form(form):
    assert forms.user_prompt(span("s1", **PROMPT_FORMS[form])) == "What is AAPL at?"


def test_user_prompt_precedence_input_messages_over_events_over_gen_ai_prompt():
    doc = span(
        "s1",
        attributes={
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "A"}]}]
            ),
            "gen_ai.prompt": "C",
        },
        events=[("gen_ai.user.message", {"content": "B"})],
    )
    assert forms.user_prompt(doc) == "A"
    del doc["attributes"]["gen_ai.input.messages"]
    assert forms.user_prompt(doc) == "B"
    del doc["events"]
    assert forms.user_prompt(doc) == "C"


# --- assistant output forms -------------------------------------------------------------------------------

OUTPUT_FORMS = {
    "genai output messages": {
        "attributes": {
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [
                            {"type": "tool_call", "name": "x", "arguments": {}},
                            {"type": "text", "content": "AAPL is at $182."},
                        ],
                        "finish_reason": "stop",
                    }
                ]
            )
        }
    },
    "genai choice event": {"events": [("gen_ai.choice", {"message": "AAPL is at $182."})]},
    "strands choice event with content blocks": {
        "events": [
            (
                "gen_ai.choice",
                {"message": json.dumps([{"text": "AAPL is at $182."}]), "finish_reason": "end_turn"},
            )
        ]
    },
    "gen_ai.completion": {"attributes": {"gen_ai.completion": "AAPL is at $182."}},
    "traceloop gen_ai.completion.N.content": {
        "attributes": {
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "AAPL is at $182.",
        }
    },
    "gen_ai.task.output": {"attributes": {"gen_ai.task.output": "AAPL is at $182."}},
    "openinference llm.output_messages": {
        "attributes": {
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "AAPL is at $182.",
        }
    },
    "openinference output.value": {"attributes": {"output.value": "AAPL is at $182."}},
    "traceloop entity output": {
        "attributes": {
            "traceloop.entity.output": json.dumps(
                {"outputs": {"messages": [{"type": "ai", "content": "AAPL is at $182."}]}}
            )
        }
    },
}


@pytest.mark.parametrize("form", OUTPUT_FORMS)
def test_assistant_output_is_read_from_each_form(form):
    assert forms.assistant_output(span("s1", **OUTPUT_FORMS[form])) == "AAPL is at $182."


def test_assistant_output_precedence_output_messages_over_choice_over_completion():
    doc = span(
        "s1",
        attributes={
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "A"}]}]
            ),
            "gen_ai.completion": "C",
        },
        events=[("gen_ai.choice", {"message": "B"})],
    )
    assert forms.assistant_output(doc) == "A"
    del doc["attributes"]["gen_ai.output.messages"]
    assert forms.assistant_output(doc) == "B"
    del doc["events"]
    assert forms.assistant_output(doc) == "C"


# --- tool calls and tool definitions ----------------------------------------------------------------------


def test_tool_call_arguments_result_and_id_from_each_form():
    genai = span(
        "t1",
        name="execute_tool get_price",
        attributes={
            "gen_ai.tool.name": "get_price",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": '{"ticker": "AAPL"}',
            "gen_ai.tool.call.result": "182.45",
        },
    )
    assert forms.tool_arguments(genai) == {"ticker": "AAPL"}
    assert forms.tool_result(genai) == "182.45" and forms.tool_call_id(genai) == "call_1"
    strands = span(
        "t2",
        name="execute_tool get_price",
        events=[
            ("gen_ai.tool.message", {"role": "tool", "content": '{"ticker": "MSFT"}', "id": "tooluse_9"}),
            ("gen_ai.choice", {"message": json.dumps([{"text": "415.10"}])}),
        ],
    )
    assert forms.tool_arguments(strands) == {"ticker": "MSFT"}
    assert forms.tool_result(strands) == "415.10" and forms.tool_call_id(strands) == "tooluse_9"
    openinference = span(
        "t3", name="get_price", attributes={"tool.name": "get_price", "input.value": '{"ticker": "X"}'}
    )
    assert forms.tool_arguments(openinference) == {"ticker": "X"}
    traceloop = span(
        "t4",
        name="get_price.tool",
        attributes={
            "traceloop.span.kind": "tool",
            "traceloop.entity.input": "X",
            "traceloop.entity.output": "1.0",
        },
    )
    assert forms.tool_arguments(traceloop) == "X" and forms.tool_result(traceloop) == "1.0"


def test_tool_definitions_from_each_form():
    doc = span(
        "s1",
        attributes={
            "gen_ai.tool.definitions": json.dumps(
                [
                    {
                        "type": "function",
                        "function": {"name": "a", "description": "A", "parameters": {"type": "object"}},
                    },
                    {"name": "b", "description": "B"},
                ]
            ),
            "gen_ai.agent.tools": json.dumps(["c"]),
            "llm.tools.0.tool.json_schema": json.dumps({"type": "function", "function": {"name": "d"}}),
            "llm.request.functions.0.name": "e",
            "llm.request.functions.0.description": "E",
            "llm.request.functions.0.parameters": '{"type": "object"}',
        },
    )
    found = forms.tool_definitions(doc)
    assert [d["name"] for d in found] == ["a", "b", "c", "d", "e"]
    assert found[0] == {"name": "a", "description": "A", "parameters": {"type": "object"}}
    assert found[4] == {"name": "e", "description": "E", "parameters": {"type": "object"}}


# --- turns and placeholders -------------------------------------------------------------------------------


def session_docs() -> list[dict]:
    """Two turns: the first with one tool call, the second with two; the answer on the agent span."""
    return [
        span(
            "r1",
            name="invoke_agent bot",
            start=10,
            end=50,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.tool.definitions": json.dumps([{"name": "get_price", "description": "Latest price"}]),
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "Price of AAPL?"}]}]
                ),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "AAPL is $182."}]}]
                ),
            },
        ),
        span("c1", parent="r1", start=11, end=20, events=[("gen_ai.choice", {"message": "let me look"})]),
        span(
            "t1",
            name="execute_tool get_price",
            parent="r1",
            start=21,
            end=22,
            attributes={
                "gen_ai.tool.name": "get_price",
                "gen_ai.tool.call.arguments": '{"ticker": "AAPL"}',
                "gen_ai.tool.call.result": "182.00",
            },
        ),
        span(
            "r2",
            trace=T2,
            start=60,
            end=99,
            events=[("gen_ai.user.message", {"content": "And MSFT and news?"})],
        ),
        span(
            "t2",
            trace=T2,
            name="execute_tool get_price",
            parent="r2",
            start=61,
            end=62,
            attributes={
                "gen_ai.tool.name": "get_price",
                "gen_ai.tool.call.arguments": '{"ticker": "MSFT"}',
                "gen_ai.tool.call.result": "415.00",
            },
        ),
        span(
            "t3",
            trace=T2,
            name="execute_tool search_news",
            parent="r2",
            start=63,
            end=64,
            attributes={
                "gen_ai.tool.name": "search_news",
                "gen_ai.tool.description": "News search",
                "gen_ai.tool.call.arguments": '{"q": "MSFT"}',
            },
        ),
        span(
            "c2",
            trace=T2,
            parent="r2",
            start=65,
            end=98,
            events=[("gen_ai.choice", {"message": "MSFT is $415; no news."})],
        ),
    ]


def test_turns_prompt_answer_and_tool_calls():
    conv = conversation("s", session_docs())
    first, second = conv.turns
    assert (first.user_prompt, first.assistant_output) == ("Price of AAPL?", "AAPL is $182.")
    assert [c.action() for c in first.tool_calls] == ['get_price({"ticker": "AAPL"})']
    assert (second.user_prompt, second.assistant_output) == ("And MSFT and news?", "MSFT is $415; no news.")
    assert [c.name for c in second.tool_calls] == ["get_price", "search_news"]
    assert conv.tools == [
        {"name": "get_price", "description": "Latest price"},
        {"name": "search_news", "description": "News search"},
    ]


def test_session_trace_and_tool_call_placeholders():
    conv = conversation("s", session_docs())
    session = placeholders(conv, "SESSION", None, None)
    assert session["context"].splitlines() == [
        "User: Price of AAPL?",
        'Action: get_price({"ticker": "AAPL"})',
        "Tool: 182.00",
        "Assistant: AAPL is $182.",
        "User: And MSFT and news?",
        'Action: get_price({"ticker": "MSFT"})',
        "Tool: 415.00",
        'Action: search_news({"q": "MSFT"})',
        "Assistant: MSFT is $415; no news.",
    ]
    assert session["available_tools"].splitlines() == [
        '{"name": "get_price", "description": "Latest price"}',
        '{"name": "search_news", "description": "News search"}',
    ]
    trace = placeholders(conv, "TRACE", T2, None)
    assert trace["assistant_turn"] == "MSFT is $415; no news."
    assert trace["context"].splitlines() == session["context"].splitlines()[:-1]  # all but this turn's answer
    tool = placeholders(conv, "TOOL_CALL", T2, "t3")
    assert tool["tool_turn"] == 'Action: search_news({"q": "MSFT"})'
    assert tool["context"].splitlines() == session["context"].splitlines()[:7]  # up to the call judged
    assert set(tool) == {"available_tools", "context", "tool_turn"}


def test_no_tool_definitions_is_said_in_available_tools():
    conv = conversation("s", [span("r1", events=[("gen_ai.user.message", {"content": "hi"})])])
    assert placeholders(conv, "SESSION", None, None) == {"context": "User: hi", "available_tools": NO_TOOLS}
