"""Reading AgentCore span payloads: the event, span attributes, tool spans and the agent's response text.

Shared by the reference span evaluators in ``custom-evaluators/`` (``from agentcore_spans import ...``) so
each evaluator file holds only its own check. Standard library only, no file writes, no state: it runs
unchanged inside AWS Lambda. ``evalkit spans package NAME`` copies this module to the root of the
evaluator's deployment zip beside ``NAME.py``; locally, evalkit puts ``custom-evaluators/_shared/`` on the
import path while it imports an evaluator. The ``_`` in the folder name keeps it from being taken for an
evaluator.

The payload is what Amazon Bedrock AgentCore Evaluations sends a code-based evaluator:
``evaluationInput.sessionSpans`` (every span document of the session) and, at TRACE level,
``evaluationTarget.traceIds[0]`` (the trace to score). Span documents may carry attributes as a plain
object or as OTLP JSON key/value lists; both read the same here.

- Tool spans: the span name starts with ``execute_tool ``, or the span has ``gen_ai.tool.name``, or
  ``traceloop.span.kind`` is ``tool``. Tool name: the first of ``gen_ai.tool.name``, ``tool.name``,
  ``traceloop.entity.name``, else the span name without ``execute_tool ``.
- Agent-level spans: ``gen_ai.operation.name == "invoke_agent"``, ``traceloop.span.kind``
  ``agent``/``workflow``, or a name starting with ``invoke_agent``.
- Response text (tool spans excluded), from the sources the AgentCore fact sheet lists: the first of
  ``gen_ai.task.output``, ``traceloop.entity.output``, ``gen_ai.completion.0.content``,
  ``gen_ai.completion``, ``output.value``; else the ``message`` of ``gen_ai.choice`` events; else the
  ``content`` of ``gen_ai.user.message`` events (so a trace that recorded only the user's message is read,
  not reported as having no output, while a user message beside a recorded answer never stands in for
  it). JSON values are unwrapped to the assistant's text (the last assistant message of a ``messages``
  list; ``text``/``content`` blocks); a user message's ``{"role": "user", "content": ...}`` to its
  content. Per trace, agent-level spans are preferred over the LLM spans below them, and identical texts
  are kept once.
- Trace ids compare case-insensitively, the X-Ray form ``1-5759e988-bd86...`` folded to 32 hex digits.
"""

from __future__ import annotations

import json
import re

TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
RESPONSE_KEYS = (
    "gen_ai.task.output",
    "traceloop.entity.output",
    "gen_ai.completion.0.content",
    "gen_ai.completion",
    "output.value",
)
AGENT_SPAN_KINDS = {"agent", "workflow"}
NON_ASSISTANT_ROLES = {"user", "human", "system", "tool", "function", "developer"}
MESSAGE_TYPES = NON_ASSISTANT_ROLES | {"ai", "assistant"}


# --- the event ----------------------------------------------------------------------------------------------


def read_session_event(event) -> tuple[list[dict], str]:
    """(spans, problem); ``problem`` is non-empty when the event is malformed."""
    if not isinstance(event, dict):
        return [], f"event must be a JSON object, got {type(event).__name__}"
    evaluation_input = event.get("evaluationInput")
    if not isinstance(evaluation_input, dict):
        return [], "evaluationInput must be an object holding sessionSpans"
    spans = evaluation_input.get("sessionSpans")
    if not isinstance(spans, list):
        return [], "evaluationInput.sessionSpans must be a list of span documents"
    return [span for span in spans if isinstance(span, dict)], ""


def read_trace_event(event) -> tuple[list[dict], str, str]:
    """(spans, target trace id, problem); ``problem`` is non-empty when the event is malformed."""
    spans, problem = read_session_event(event)
    if problem:
        return [], "", problem
    target = event.get("evaluationTarget")
    trace_ids = target.get("traceIds") if isinstance(target, dict) else None
    if (
        not isinstance(trace_ids, list)
        or not trace_ids
        or not isinstance(trace_ids[0], str)
        or not trace_ids[0]
    ):
        level = event.get("evaluationLevel")
        return (
            [],
            "",
            (
                "evaluationTarget.traceIds must name the trace to score; this evaluator works at TRACE level "
                f"(event evaluationLevel: {level!r})"
            ),
        )
    return spans, trace_ids[0], ""


def trace_key(value) -> str:
    """Trace ids compared case-insensitively, X-Ray form ``1-5759e988-bd86...`` folded to 32 hex digits."""
    text = str(value or "").strip().lower()
    if re.fullmatch(r"1-[0-9a-f]{8}-[0-9a-f]{24}", text):
        text = text[2:]
    return text.replace("-", "")


def spans_in_trace(spans: list[dict], trace_id: str) -> list[dict]:
    """The spans of ``spans`` that belong to the trace ``trace_id`` (see ``trace_key``)."""
    wanted = trace_key(trace_id)
    return [span for span in spans if trace_key(span.get("traceId")) == wanted]


# --- attributes ---------------------------------------------------------------------------------------------


def attributes(item) -> dict:
    """Span or event attributes as a dict; OTLP JSON key/value lists are flattened."""
    raw = item.get("attributes") if isinstance(item, dict) else None
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, list):
        return {
            entry["key"]: otlp_value(entry.get("value"))
            for entry in raw
            if isinstance(entry, dict) and isinstance(entry.get("key"), str)
        }
    return {}


def otlp_value(value):
    """The plain value of an OTLP JSON ``AnyValue`` (anything else is returned as it is)."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "intValue", "bytesValue"):
        if key in value:
            return value[key]
    if isinstance(value.get("arrayValue"), dict):
        return [otlp_value(v) for v in value["arrayValue"].get("values") or []]
    if isinstance(value.get("kvlistValue"), dict):
        return attributes({"attributes": value["kvlistValue"].get("values") or []})
    return None


# --- tool and agent spans -----------------------------------------------------------------------------------


def is_tool_span(span: dict, attrs: dict) -> bool:
    """A tool call: ``execute_tool ...`` name, ``gen_ai.tool.name``, or traceloop kind ``tool``."""
    name = span.get("name")
    return (
        (isinstance(name, str) and name.startswith("execute_tool "))
        or bool(attrs.get("gen_ai.tool.name"))
        or str(attrs.get("traceloop.span.kind", "")).lower() == "tool"
    )


def tool_name(span: dict, attrs: dict) -> str:
    """The tool a tool span called (``?`` when nothing names it)."""
    for key in TOOL_NAME_KEYS:
        value = attrs.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    name = str(span.get("name") or "")
    return name[len("execute_tool ") :].strip() if name.startswith("execute_tool ") else name.strip() or "?"


def is_agent_span(span: dict, attrs: dict) -> bool:
    """An agent-level span: ``invoke_agent`` operation or name, or traceloop kind ``agent``/``workflow``."""
    name = span.get("name")
    return (
        attrs.get("gen_ai.operation.name") == "invoke_agent"
        or str(attrs.get("traceloop.span.kind", "")).lower() in AGENT_SPAN_KINDS
        or (isinstance(name, str) and name.startswith("invoke_agent"))
    )


# --- response text ------------------------------------------------------------------------------------------


def response_texts(spans: list[dict]) -> list[tuple[dict, str]]:
    """(span, text) of the agent's answers, per trace preferring agent-level spans; identical texts once."""
    by_trace: dict[str, list[tuple[dict, str, bool]]] = {}
    for span in spans:
        attrs = attributes(span)
        if is_tool_span(span, attrs):
            continue
        text = span_response(span, attrs)
        if text:
            by_trace.setdefault(trace_key(span.get("traceId")), []).append(
                (span, text, is_agent_span(span, attrs))
            )
    found = []
    for items in by_trace.values():
        agent_level = [item for item in items if item[2]]
        seen = set()
        for span, text, _ in agent_level or items:
            if text not in seen:
                seen.add(text)
                found.append((span, text))
    return found


def span_response(span: dict, attrs: dict) -> str:
    """The response text of one span ("" when it records none)."""
    for key in RESPONSE_KEYS:
        if attrs.get(key) not in (None, ""):
            return text_of(attrs[key]).strip()
    events = span.get("events")
    if not isinstance(events, list):
        return ""
    for name, key, read in RESPONSE_EVENTS:
        texts = [
            read(attributes(ev).get(key)) for ev in events if isinstance(ev, dict) and ev.get("name") == name
        ]
        text = "\n".join(text for text in texts if text.strip()).strip()
        if text:
            return text
    return ""


def user_message_text(value) -> str:
    """The text of a ``gen_ai.user.message`` event's ``content``: a string, content blocks, or a
    ``{"role": "user", "content": ...}`` message (whose role would make ``text_of`` skip it)."""
    if isinstance(value, str) and value.strip()[:1] == "{":
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if isinstance(value, dict) and "content" in value:
        value = value["content"]
    return text_of(value)


#: Span events that carry response text, in order of preference: (event name, attribute, reader).
RESPONSE_EVENTS = (
    ("gen_ai.choice", "message", lambda value: text_of(value)),
    ("gen_ai.user.message", "content", lambda value: user_message_text(value)),
)


def text_of(value, depth: int = 0) -> str:
    """The assistant text inside an attribute value: plain strings as-is, JSON messages unwrapped."""
    if depth > 8 or value is None or isinstance(value, bool):
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                inner = text_of(json.loads(stripped), depth + 1)
            except ValueError:
                return value
            return inner or value
        return value
    if isinstance(value, list):
        roles = [role(item) for item in value]
        if any(roles):
            assistant = [item for item, who in zip(value, roles) if who and who not in NON_ASSISTANT_ROLES]
            return text_of(assistant[-1], depth + 1) if assistant else ""
        return "\n".join(filter(None, (text_of(item, depth + 1) for item in value)))
    if isinstance(value, dict):
        if isinstance(value.get("kwargs"), dict):
            return text_of(value["kwargs"], depth + 1)
        if isinstance(value.get("messages"), list):
            return text_of(value["messages"], depth + 1)
        if role(value) in NON_ASSISTANT_ROLES:
            return ""
        for key in ("content", "text", "message", "output", "response", "answer", "result"):
            if key in value:
                return text_of(value[key], depth + 1)
    return ""


def role(item) -> str:
    """The speaker of a chat message dict ("" for content blocks and other dicts)."""
    if not isinstance(item, dict):
        return ""
    source = item.get("kwargs") if isinstance(item.get("kwargs"), dict) else item
    speaker = str(source.get("role") or "").lower()
    if not speaker:
        kind = str(source.get("type") or "").lower()
        kind = re.sub(r"message(chunk)?$", "", kind)
        speaker = kind if kind in MESSAGE_TYPES else ""
    return speaker
