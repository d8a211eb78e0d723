"""A session's spans as a conversation (turns of user prompt, tool calls and assistant answer), and the
placeholder values AgentCore defines for LLM-as-judge evaluators, built from it.

One trace is one turn. Event records (OTel log records carrying a span's payload, AgentCore's split form)
are joined to their span by ``traceId`` + ``spanId`` (``record_content.join_records``) and read with it: each
field from the span's own attributes and events first, then from its records (``message_forms``); records
whose span is not among the session's documents are read as one more span of their trace. A turn's user
prompt and assistant output are read from its non-tool spans in this order: agent spans first (``gen_ai.operation.name`` ``invoke_agent`` or a name
starting ``invoke_agent``), then root spans, then the rest; for the prompt the earliest span that carries one
wins, for the output the latest-ending one (the final answer, not an intermediate chat completion). Its tool
calls are its tool spans (as ``span_frame`` recognises them), in start order.

Placeholders, by level (AgentCore's "Prompt templates" page):

* SESSION: ``context`` (every turn: user prompt, tool calls with results, assistant answer) and
  ``available_tools``;
* TRACE: ``context`` (the earlier turns in full, then this turn's prompt and tool calls) and
  ``assistant_turn`` (this turn's answer);
* TOOL_CALL: ``available_tools``, ``context`` (the earlier turns, this turn's prompt and the tool calls made
  before the one judged) and ``tool_turn`` (the call judged: name and arguments).

Ground truth ("Ground truth evaluations"): TRACE adds ``expected_response``; SESSION adds
``actual_tool_trajectory``, ``expected_tool_trajectory`` and ``assertions``. Their values are made by
``ground_truth.reference_values``, not here.

``context`` is written as lines ``User: ...``, ``Action: tool(arguments)``, ``Tool: result``,
``Assistant: ...``; ``available_tools`` as one JSON object per tool (``name``, ``description``,
``parameters``), from the tool definitions the spans declare and the tools they show being called.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from evalkit.spans.reading import message_forms as forms
from evalkit.spans.reading.record_content import join_records
from evalkit.spans.reading.span_frame import is_tool_span as _is_tool
from evalkit.spans.reading.span_frame import tool_name_of as _tool_name

#: The placeholders each level may use, as AgentCore defines them (the ground-truth ones last: their values
#: come from the reference inputs and the tool calls, ``ground_truth.reference_values``).
PLACEHOLDERS = {
    "SESSION": (
        "context",
        "available_tools",
        "actual_tool_trajectory",
        "expected_tool_trajectory",
        "assertions",
    ),
    "TRACE": ("context", "assistant_turn", "expected_response"),
    "TOOL_CALL": ("available_tools", "context", "tool_turn"),
}
NO_TOOLS = "(no tool definitions were found in the spans)"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode


@dataclass
class ToolCall:
    """One tool call: the span it was recorded in, the tool, its arguments and what it returned."""

    span_id: str
    name: str
    arguments: Any = None
    result: str | None = None
    call_id: str | None = None

    def action(self) -> str:
        """``name(arguments)``, the arguments as compact JSON (or text)."""
        args = self.arguments
        if args is None:
            shown = ""
        elif isinstance(args, str):
            shown = args
        else:
            shown = _dumps(args)
        return f"{self.name}({shown})"


@dataclass
class Turn:
    """One trace: the user's prompt, the tool calls in start order and the assistant's answer."""

    trace_id: str
    user_prompt: str | None = None
    assistant_output: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass
class Conversation:
    """A session's turns in order of their first span, and the tools the spans declare or call."""

    session_id: str
    turns: list[Turn]
    tools: list[dict]

    def turn(self, trace_id: str) -> tuple[int, Turn]:
        for index, turn in enumerate(self.turns):
            if turn.trace_id == trace_id:
                return index, turn
        raise KeyError(trace_id)


def conversation(session_id: str, docs: list[dict]) -> Conversation:
    """The conversation of one session's span documents and event records (in start order, as
    ``SessionSpans.docs``)."""
    docs, records = join_records(docs)
    docs = docs + _record_only_spans(docs, records)
    by_trace: dict[str, list[dict]] = {}
    for doc in docs:
        by_trace.setdefault(doc["traceId"], []).append(doc)
    turns = [_turn(trace_id, spans, records) for trace_id, spans in by_trace.items()]
    tools: dict[str, dict] = {}
    for doc in docs:
        for definition in forms.tool_definitions(doc, _records_of(records, doc)):
            _merge_tool(tools, definition)
    for turn in turns:
        for call in turn.tool_calls:
            _merge_tool(tools, {"name": call.name})
    for doc in docs:  # descriptions (and Strands' parameter schema) recorded on the tool spans themselves
        attrs = doc.get("attributes") or {}
        if _is_tool(doc["name"], attrs):
            schema = forms.parse_json(attrs.get("gen_ai.tool.json_schema"))
            definition = {
                "name": _tool_name(doc["name"], attrs),
                "description": attrs.get("gen_ai.tool.description"),
                "parameters": schema if isinstance(schema, dict) else None,
            }
            _merge_tool(tools, definition)
    return Conversation(session_id, turns, list(tools.values()))


def _records_of(records: dict[tuple[str, str], list[dict]], doc: dict) -> list[dict]:
    return records.get((doc["traceId"], doc["spanId"]), [])


def _record_only_spans(spans: list[dict], records: dict[tuple[str, str], list[dict]]) -> list[dict]:
    """A stand-in span for each group of records whose span is not here (a record with a trace id only):
    no name, no attributes, spanning the records' times, so its content is still read for its trace."""
    present = {(d["traceId"], d["spanId"]) for d in spans}
    stand_ins = []
    for (trace_id, span_id), group in records.items():
        if trace_id and (trace_id, span_id) not in present:
            times = [r.get("timeUnixNano") or 0 for r in group]
            stand_ins.append(
                {
                    "traceId": trace_id,
                    "spanId": span_id,
                    "name": "",
                    "startTimeUnixNano": min(times),
                    "endTimeUnixNano": max(times),
                    "attributes": {},
                }
            )
    return stand_ins


def _merge_tool(tools: dict[str, dict], definition: dict) -> None:
    """Keep the first definition of a tool, filling in a description or parameters it lacked."""
    name = str(definition["name"])
    known = tools.setdefault(name, {"name": name})
    for key in ("description", "parameters"):
        if key not in known and definition.get(key):
            known[key] = definition[key]


def _turn(trace_id: str, spans: list[dict], records: dict[tuple[str, str], list[dict]]) -> Turn:
    span_ids = {s["spanId"] for s in spans}
    tools, others = [], []
    for doc in spans:
        (tools if _is_tool(doc["name"], doc.get("attributes") or {}) else others).append(doc)

    def rank(doc: dict) -> int:
        attrs = doc.get("attributes") or {}
        if attrs.get("gen_ai.operation.name") == "invoke_agent" or doc["name"].startswith("invoke_agent"):
            return 0
        return 1 if doc.get("parentSpanId") not in span_ids else 2

    by_start = sorted(others, key=rank)  # stable: start order within a rank
    by_end = sorted(others, key=lambda d: (rank(d), -d["endTimeUnixNano"]))
    turn = Turn(trace_id)
    prompts = (forms.user_prompt(d, _records_of(records, d)) for d in by_start)
    answers = (forms.assistant_output(d, _records_of(records, d)) for d in by_end)
    turn.user_prompt = next(filter(None, prompts), None)
    turn.assistant_output = next(filter(None, answers), None)
    turn.tool_calls = [
        ToolCall(
            span_id=doc["spanId"],
            name=_tool_name(doc["name"], doc.get("attributes") or {}),
            arguments=forms.tool_arguments(doc, _records_of(records, doc)),
            result=forms.tool_result(doc, _records_of(records, doc)),
            call_id=forms.tool_call_id(doc, _records_of(records, doc)),
        )
        for doc in tools
    ]
    return turn


# --- placeholders -----------------------------------------------------------------------------------------


def placeholders(conv: Conversation, level: str, trace_id: str | None, span_id: str | None) -> dict[str, str]:
    """The placeholder values of one evaluation target (the session, a trace, or a tool-call span)."""
    if level == "SESSION":
        return {
            "context": "\n".join(line for t in conv.turns for line in _turn_lines(t)),
            "available_tools": render_tools(conv.tools),
        }
    index, turn = conv.turn(trace_id)
    earlier = [line for t in conv.turns[:index] for line in _turn_lines(t)]
    if level == "TRACE":
        current = _turn_lines(turn, answer=False)
        return {
            "context": "\n".join(earlier + current),
            "assistant_turn": turn.assistant_output or "",
        }
    position = next(i for i, call in enumerate(turn.tool_calls) if call.span_id == span_id)
    before = Turn(turn.trace_id, turn.user_prompt, None, turn.tool_calls[:position])
    return {
        "available_tools": render_tools(conv.tools),
        "context": "\n".join(earlier + _turn_lines(before, answer=False)),
        "tool_turn": f"Action: {turn.tool_calls[position].action()}",
    }


def _turn_lines(turn: Turn, *, answer: bool = True) -> list[str]:
    lines = []
    if turn.user_prompt is not None:
        lines.append(f"User: {turn.user_prompt}")
    for call in turn.tool_calls:
        lines.append(f"Action: {call.action()}")
        if call.result is not None:
            lines.append(f"Tool: {call.result}")
    if answer and turn.assistant_output is not None:
        lines.append(f"Assistant: {turn.assistant_output}")
    return lines


def render_tools(tools: list[dict]) -> str:
    """One JSON object per line for each tool (name, description, parameters), or a note that there are none."""
    return "\n".join(_dumps(t) for t in tools) if tools else NO_TOOLS
