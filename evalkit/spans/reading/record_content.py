"""Prompts, answers and tool input/output carried by event records and GenAI content events, and the join of
event records to their span.

A span's payload often travels apart from it: AgentCore's split form (ADOT) and the GenAI instrumentations
that follow the current semantic conventions send it as OTel log records (``event_record``) that join their
span by ``traceId`` + ``spanId``. ``join_records`` makes that join; ``Content`` reads one record, or one span
event of the same shape, in each form this module knows:

``gen_ai.client.inference.operation.details`` (GenAI semantic conventions 1.37+, as a log record or a span event)
    attributes ``gen_ai.input.messages`` (the conversation sent: the prompt is its last ``user`` message) and
    ``gen_ai.output.messages`` (the answer: its last ``assistant`` message); ``gen_ai.system_instructions`` is
    the system prompt, never read as the user's. On a tool span, an input message with a ``tool_call`` part
    gives the tool's arguments and id, an output ``tool_call_response`` part its result.
AgentCore / ADOT split form (``body.input.messages`` / ``body.output.messages``)
    a message's ``content`` is ``{"content": "<text or JSON [{text}]>"}`` (input) or ``{"message": ...,
    "finish_reason"}`` (output); the prompt is the last ``user`` input, the answer the last output message
    holding a ``message`` (the converter of AWS's SDK appends a span's tool results after it as bare
    ``assistant`` strings: those are never the answer). A tool's record: the input message of role ``tool``
    holds the arguments (and ``id``), the output message's ``message`` the result.
the older per-message events as log records (body ``content`` / ``message``)
    ``gen_ai.user.message`` (prompt), ``gen_ai.choice`` (answer: ``body.message``), ``gen_ai.assistant.message``
    (history sent to the model, never the answer), ``gen_ai.tool.message`` (on a tool span, the arguments and
    ``id``), ``gen_ai.system.message`` (ignored).

A user's message is only ever read as the prompt, and the answer only from output forms with an assistant
role. Which of a span's sources wins is ``message_forms``' rule: the span's own attributes and span events
first, then its records (in time order, the last record that gives a value wins).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evalkit.spans.reading.event_record import is_record, record_name
from evalkit.spans.reading.message_text import ROLES, content_text, last, messages_of, parse_json

INFERENCE_DETAILS = "gen_ai.client.inference.operation.details"
_INPUT_EVENTS = {"gen_ai.user.message": "user", "gen_ai.assistant.message": "assistant"}


@dataclass
class Content:
    """What one record (or content event) says: input and output ``[(role, text)]``, and a tool call's parts."""

    inputs: list[tuple[str, str]]
    outputs: list[tuple[str, str]]
    tool_input: Any = None
    tool_output: str | None = None
    tool_id: str | None = None

    @property
    def prompt(self) -> str | None:
        """The last user message sent."""
        return last(self.inputs, "user")

    @property
    def answer(self) -> str | None:
        """The last assistant message received."""
        return last(self.outputs, "assistant")


def join_records(docs: list[dict]) -> tuple[list[dict], dict[tuple[str, str], list[dict]]]:
    """``(spans, records by (traceId, spanId))`` of a mixed list of documents; each span's records in time order."""
    spans, records = [], {}
    for doc in docs:
        if is_record(doc):
            records.setdefault((doc.get("traceId") or "", doc.get("spanId") or ""), []).append(doc)
        else:
            spans.append(doc)
    for group in records.values():
        group.sort(key=lambda r: r.get("timeUnixNano") or 0)
    return spans, records


def record_content(record: dict) -> Content:
    """The content of one event record, in whichever form it carries it (see the module docstring)."""
    return event_content(record_name(record), record.get("attributes") or {}, record.get("body"))


def event_content(name: str | None, attributes: dict, body: Any = None) -> Content:
    """The content of an event given by its name, attributes and body (a log record's or a span event's)."""
    body = parse_json(body)
    if "gen_ai.input.messages" in attributes or "gen_ai.output.messages" in attributes:
        return _genai_messages(
            attributes.get("gen_ai.input.messages"), attributes.get("gen_ai.output.messages")
        )
    if isinstance(body, dict) and ("input" in body or "output" in body) and name not in _INPUT_EVENTS:
        return _adot(body)
    if isinstance(body, dict) and ("gen_ai.input.messages" in body or "gen_ai.output.messages" in body):
        return _genai_messages(body.get("gen_ai.input.messages"), body.get("gen_ai.output.messages"))
    return _per_message(name, body)


def content_of(records: list[dict]) -> list[Content]:
    """The content of each record, in the given (time) order."""
    return [record_content(r) for r in records]


def last_value(contents: list[Content], field: str) -> Any:
    """The last non-empty value of ``field`` (``prompt``, ``answer``, ``tool_input``, ...) among ``contents``."""
    for content in reversed(contents):
        value = getattr(content, field)
        if value is not None and value != "":
            return value
    return None


# --- the forms --------------------------------------------------------------------------------------------


def _genai_messages(inputs: Any, outputs: Any) -> Content:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages``: ``[{"role", "parts": [...]}]``."""
    content = Content(_role_texts(inputs), _role_texts(outputs))
    for message in _message_list(inputs):
        for part in _parts(message):
            if part.get("type") == "tool_call" and str(message.get("role")).lower() == "tool":
                content.tool_input = parse_json(part.get("arguments"))
                content.tool_id = _text_or_none(part.get("id"))
    for message in _message_list(outputs):
        for part in _parts(message):
            if part.get("type") == "tool_call_response":
                content.tool_output = _as_text(part.get("response", part.get("result")))
                content.tool_id = content.tool_id or _text_or_none(part.get("id"))
    return content


def _adot(body: dict) -> Content:
    """AgentCore's split form: ``{"input": {"messages": [...]}, "output": {"messages": [...]}}``."""
    inputs = _message_list(body.get("input"))
    outputs = _message_list(body.get("output"))
    content = Content(_role_texts(inputs), [])
    answers = [m for m in outputs if isinstance(m.get("content"), dict) and "message" in m["content"]]
    content.outputs = _role_texts(answers or outputs)
    for message in inputs:
        if str(message.get("role")).lower() == "tool":
            inner = message.get("content")
            value = inner.get("content") if isinstance(inner, dict) else inner
            content.tool_input = parse_json(value)
            content.tool_id = _text_or_none(inner.get("id")) if isinstance(inner, dict) else None
    if content.tool_input is not None:
        for message in answers or outputs:
            inner = message.get("content")
            value = inner.get("message") if isinstance(inner, dict) else inner
            content.tool_output = _as_text(value)
            if isinstance(inner, dict) and not content.tool_id:
                content.tool_id = _text_or_none(inner.get("id"))
    return content


def _per_message(name: str | None, body: Any) -> Content:
    """The older per-message events (``gen_ai.user.message``, ``gen_ai.choice``, ...) as log records."""
    if isinstance(body, dict):
        value = body.get("message", body.get("content")) if name == "gen_ai.choice" else body.get("content")
    else:
        value = body
    if name in _INPUT_EVENTS:
        text = content_text(value)
        return Content([(_INPUT_EVENTS[name], text)] if text is not None else [], [])
    if name == "gen_ai.choice":
        role = value.get("role") if isinstance(value, dict) else None
        role = ROLES.get(str(role).lower(), "assistant") if role is not None else "assistant"
        text = content_text(value)
        content = Content([], [(role, text)] if text is not None and role == "assistant" else [])
        content.tool_output = text
        return content
    if name == "gen_ai.tool.message":
        tool_id = body.get("id") if isinstance(body, dict) else None
        return Content([], [], tool_input=parse_json(value), tool_id=_text_or_none(tool_id))
    return Content([], [])


# --- helpers ----------------------------------------------------------------------------------------------


def _message_list(value: Any) -> list[dict]:
    value = parse_json(value)
    if isinstance(value, dict):
        value = value.get("messages", [value])
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _parts(message: dict) -> list[dict]:
    parts = parse_json(message.get("parts"))
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _role_texts(messages: Any) -> list[tuple[str, str]]:
    """``[(role, text)]`` of a message list, user and assistant roles only (system and tool are neither);
    GenAI ``parts``, ADOT ``content`` wrappers and LangChain's serialised messages alike (``messages_of``)."""
    return messages_of(_message_list(messages))


def _as_text(value: Any) -> str | None:
    """A tool result as text: its message text when it has one, else compact JSON of it."""
    if value is None:
        return None
    text = content_text(value)
    if text is not None:
        return text
    parsed = parse_json(value)
    if parsed in ("", [], {}):
        return None
    return parsed if isinstance(parsed, str) else json.dumps(parsed, ensure_ascii=False)


def _text_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
