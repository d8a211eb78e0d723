"""Reading user prompts, assistant output, tool calls and tool definitions out of one span and the event
records joined to it, in every form agents emit them.

Instrumentations disagree on where a conversation lives. This module knows the forms and their order of
precedence, per span and per field (prompt, answer, tool arguments, tool result, tool call id), the first
form that gives a value wins:

**The span's own content first, then its event records.** A span's attributes and span events come before
the event records joined to it (``traceId`` + ``spanId``, read by ``record_content``); the records are read
only for what the span itself lacks (a span whose attributes hold the prompt and whose record holds the
answer gives both), and among the records, in time order, the last that gives a value wins. Within the span:

user prompt (the last user message)
    1. ``gen_ai.input.messages`` attribute (GenAI semantic conventions 1.37+: ``[{"role", "parts": [{"type":
       "text", "content"}]}]``), then the same attribute on ``gen_ai.client.inference.operation.details``
       span events (the conventions' event form; Strands under ``gen_ai_latest_experimental``);
    2. ``gen_ai.user.message`` events (older GenAI conventions and Strands: attribute ``content``, text or a
       JSON list of ``{"text"}`` blocks);
    3. ``gen_ai.prompt`` attribute (text or JSON messages), then the indexed ``gen_ai.prompt.N.role`` /
       ``gen_ai.prompt.N.content`` (Traceloop / OpenLLMetry);
    4. OpenInference ``llm.input_messages.N.message.role`` / ``.content`` (or ``.contents.M.message_content.
       text``), then ``input.value``;
    5. Traceloop ``traceloop.entity.input`` (JSON with ``messages`` or ``inputs``, or text);
    6. the span's event records (``record_content``: operation-details records, AgentCore's
       ``body.input.messages``, ``gen_ai.user.message`` records).

assistant output (the last assistant message)
    1. ``gen_ai.output.messages`` attribute, then on ``gen_ai.client.inference.operation.details`` span
       events; 2. ``gen_ai.choice`` events (attribute ``message``);
    3. ``gen_ai.completion`` attribute, then ``gen_ai.completion.N.content``; 4. ``gen_ai.task.output``;
    5. OpenInference ``llm.output_messages.N.message.*``, then ``output.value``;
    6. Traceloop ``traceloop.entity.output``; 7. the span's event records (``body.output.messages``,
       ``gen_ai.output.messages`` of operation-details records, ``gen_ai.choice`` records).

    A user's message is never the answer: ``gen_ai.user.message`` events and records, user-role messages and
    every input form are read for the prompt only.

tool call (on a tool span, as ``span_frame`` recognises one)
    arguments: ``gen_ai.tool.call.arguments``, a ``gen_ai.tool.message`` event's ``content`` (Strands),
    ``input.value`` (OpenInference), ``traceloop.entity.input``, an operation-details event's ``tool_call``
    part, then the span's records; result: the tool output attributes of ``span_frame.TOOL_OUTPUT_KEYS``,
    then a ``gen_ai.choice`` event on the tool span (Strands), an operation-details ``tool_call_response``
    part, then the records; id: ``gen_ai.tool.call.id``, else the ``gen_ai.tool.message`` event's ``id``,
    else the records'.

tool definitions
    ``gen_ai.tool.definitions`` (JSON list, OpenAI ``{"type": "function", "function": {...}}`` or plain
    ``{"name", "description", "parameters"}``; on the span or its records), Strands ``gen_ai.agent.tools``
    (a JSON list of names), OpenInference ``llm.tools.N.tool.json_schema``, Traceloop
    ``llm.request.functions.N.name`` / ``.description`` / ``.parameters``, and the tool spans themselves
    (name, ``gen_ai.tool.description``).

Roles: ``user`` / ``human``, ``assistant`` / ``ai`` / ``model``; LangChain's ``[role, text]`` pairs and
serialised messages (``{"type": "human", "content"}``, ``{"kwargs": {...}}``) are read too.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.spans.reading import record_content as records_of
from evalkit.spans.reading.message_text import (
    content_text,
    indexed,
    indexed_messages,
    last,
    messages_of,
    parse_json,
    plain,
)
from evalkit.spans.reading.record_content import INFERENCE_DETAILS, Content, event_content
from evalkit.spans.reading.span_frame import TOOL_OUTPUT_KEYS

__all__ = [
    "assistant_output",
    "content_text",
    "indexed",
    "messages_of",
    "parse_json",
    "tool_arguments",
    "tool_call_id",
    "tool_definitions",
    "tool_result",
    "user_prompt",
]
_NO_RECORDS: tuple = ()
_json = json.JSONEncoder(ensure_ascii=False).encode


def _events(doc: dict, name: str, key: str) -> list[Any]:
    """The values of attribute ``key`` on the span's events called ``name``, in event order."""
    return [
        (event.get("attributes") or {}).get(key)
        for event in doc.get("events") or []
        if event.get("name") == name and (event.get("attributes") or {}).get(key) is not None
    ]


def _details(doc: dict) -> list[Content]:
    """The content of the span's ``gen_ai.client.inference.operation.details`` events, in event order."""
    return [
        event_content(INFERENCE_DETAILS, event.get("attributes") or {})
        for event in doc.get("events") or []
        if event.get("name") == INFERENCE_DETAILS
    ]


def _from_records(records, field: str) -> Any:
    return records_of.last_value(records_of.content_of(list(records)), field) if records else None


def user_prompt(doc: dict, records=_NO_RECORDS) -> str | None:
    """The last user message a (non-tool) span or, failing that, its event records carry (module docstring)."""
    text = _span_prompt(doc)
    return text if text is not None else _from_records(records, "prompt")


def assistant_output(doc: dict, records=_NO_RECORDS) -> str | None:
    """The last assistant message a (non-tool) span or, failing that, its event records carry."""
    text = _span_answer(doc)
    return text if text is not None else _from_records(records, "answer")


def tool_arguments(doc: dict, records=_NO_RECORDS) -> Any:
    """The arguments of the tool call a tool span (or its records) records, parsed when JSON, or None."""
    value = _span_tool_arguments(doc)
    return value if value is not None else _from_records(records, "tool_input")


def tool_result(doc: dict, records=_NO_RECORDS) -> str | None:
    """What the tool returned, as text (from the span, else its records)."""
    text = _span_tool_result(doc)
    return text if text is not None else _from_records(records, "tool_output")


def tool_call_id(doc: dict, records=_NO_RECORDS) -> str | None:
    """The id of the tool call a tool span records (from the span, else its records)."""
    text = _span_tool_call_id(doc)
    return text if text is not None else _from_records(records, "tool_id")


# --- the span's own forms ---------------------------------------------------------------------------------


def _span_prompt(doc: dict) -> str | None:
    attrs = doc.get("attributes") or {}
    if "gen_ai.input.messages" in attrs:
        text = last(messages_of(attrs["gen_ai.input.messages"]), "user")
        if text is not None:
            return text
    text = records_of.last_value(_details(doc), "prompt")
    if text is not None:
        return text
    events = [content_text(c) for c in _events(doc, "gen_ai.user.message", "content")]
    events = [t for t in events if t is not None]
    if events:
        return events[-1]
    if "gen_ai.prompt" in attrs:
        text = plain(attrs["gen_ai.prompt"], "user")
        if text is not None:
            return text
    for prefix, role, content in (
        ("gen_ai.prompt", "role", "content"),
        ("llm.input_messages", "message.role", "message.content"),
    ):
        text = last(indexed_messages(attrs, prefix, role, content), "user")
        if text is not None:
            return text
    for key in ("input.value", "traceloop.entity.input"):
        if key in attrs:
            text = plain(attrs[key], "user")
            if text is not None:
                return text
    return None


def _span_answer(doc: dict) -> str | None:
    attrs = doc.get("attributes") or {}
    if "gen_ai.output.messages" in attrs:
        text = last(messages_of(attrs["gen_ai.output.messages"]), "assistant")
        if text is None:
            text = content_text(attrs["gen_ai.output.messages"])
        if text is not None:
            return text
    text = records_of.last_value(_details(doc), "answer")
    if text is not None:
        return text
    events = [content_text(m) for m in _events(doc, "gen_ai.choice", "message")]
    events = [t for t in events if t is not None]
    if events:
        return events[-1]
    if "gen_ai.completion" in attrs:
        text = plain(attrs["gen_ai.completion"], "assistant")
        if text is not None:
            return text
    completions = [content_text(e.get("content")) for e in indexed(attrs, "gen_ai.completion")]
    completions = [t for t in completions if t is not None]
    if completions:
        return completions[-1]
    if "gen_ai.task.output" in attrs:
        text = content_text(attrs["gen_ai.task.output"])
        if text is not None:
            return text
    messages = indexed_messages(attrs, "llm.output_messages", "message.role", "message.content")
    text = last(messages, "assistant")
    if text is not None:
        return text
    for key in ("output.value", "traceloop.entity.output"):
        if key in attrs:
            text = plain(attrs[key], "assistant")
            if text is not None:
                return text
    return None


def _span_tool_arguments(doc: dict) -> Any:
    attrs = doc.get("attributes") or {}
    if attrs.get("gen_ai.tool.call.arguments") is not None:
        return parse_json(attrs["gen_ai.tool.call.arguments"])
    events = _events(doc, "gen_ai.tool.message", "content")
    if events:
        return parse_json(events[-1])
    for key in ("input.value", "traceloop.entity.input"):
        if attrs.get(key) is not None:
            return parse_json(attrs[key])
    return records_of.last_value(_details(doc), "tool_input")


def _span_tool_result(doc: dict) -> str | None:
    attrs = doc.get("attributes") or {}
    for key in TOOL_OUTPUT_KEYS:
        value = attrs.get(key)
        if value is not None:
            text = value if isinstance(value, str) else _json(value)
            if text.strip():
                return _unwrap_blocks(text)
    events = [content_text(m) for m in _events(doc, "gen_ai.choice", "message")]
    events = [t for t in events if t is not None]
    return events[-1] if events else records_of.last_value(_details(doc), "tool_output")


def _span_tool_call_id(doc: dict) -> str | None:
    attrs = doc.get("attributes") or {}
    if attrs.get("gen_ai.tool.call.id"):
        return str(attrs["gen_ai.tool.call.id"])
    ids = _events(doc, "gen_ai.tool.message", "id")
    return str(ids[-1]) if ids else records_of.last_value(_details(doc), "tool_id")


def _unwrap_blocks(text: str) -> str:
    """A tool result written as Strands / Bedrock content blocks (``[{"text": ...}]``) as its text; any other
    result (JSON objects included) exactly as recorded."""
    blocks = parse_json(text)
    if (
        isinstance(blocks, list)
        and blocks
        and all(isinstance(b, dict) and set(b) == {"text"} for b in blocks)
    ):
        return content_text(blocks) or text
    return text


def tool_definitions(doc: dict, records=_NO_RECORDS) -> list[dict]:
    """The tools a span (or its records) declares available: ``[{"name", "description"?, "parameters"?}]``."""
    attrs = doc.get("attributes") or {}
    found: list[dict] = []
    holders = [
        attrs,
        *((e.get("attributes") or {}) for e in doc.get("events") or []),
        *((r.get("attributes") or {}) for r in records),
    ]
    for holder in holders:
        definitions = parse_json(holder.get("gen_ai.tool.definitions"))
        if isinstance(definitions, list):
            found.extend(_definition(d) for d in definitions)
    names = parse_json(attrs.get("gen_ai.agent.tools"))
    if isinstance(names, list):
        found.extend({"name": n} if isinstance(n, str) else _definition(n) for n in names)
    for entry in indexed(attrs, "llm.tools"):
        found.append(_definition(parse_json(entry.get("tool.json_schema"))))
    for entry in indexed(attrs, "llm.request.functions"):
        found.append(
            _definition(
                {
                    "name": entry.get("name"),
                    "description": entry.get("description"),
                    "parameters": parse_json(entry.get("parameters")),
                }
            )
        )
    return [d for d in found if d.get("name")]


def _definition(value: Any) -> dict:
    if not isinstance(value, dict):
        return {}
    if isinstance(value.get("function"), dict):  # OpenAI {"type": "function", "function": {...}}
        value = value["function"]
    if isinstance(value.get("toolSpec"), dict):  # Bedrock Converse
        value = value["toolSpec"]
    definition = {"name": value.get("name")}
    if value.get("description"):
        definition["description"] = str(value["description"])
    parameters = value.get("parameters", value.get("inputSchema", value.get("input_schema")))
    if isinstance(parameters, dict) and isinstance(parameters.get("json"), dict):
        parameters = parameters["json"]
    if parameters:
        definition["parameters"] = parse_json(parameters)
    return definition
