"""Reading AgentCore evaluation payloads: the event, spans and event records, tool calls, and the agent's answers.

Shared by the reference span evaluators in ``custom-evaluators/`` (``from agentcore_spans import ...``) so
each evaluator file holds only its own check. Standard library only, no file writes, no state: it runs
unchanged inside AWS Lambda. ``evalkit spans package NAME`` copies this module to the root of the
evaluator's deployment zip beside ``NAME.py``; locally, evalkit puts ``custom-evaluators/_shared/`` on the
import path while it imports an evaluator. The ``_`` in the folder name keeps it from being taken for an
evaluator.

The payload is what Amazon Bedrock AgentCore Evaluations sends a code-based evaluator:
``evaluationInput.sessionSpans`` and, at TRACE level, ``evaluationTarget.traceIds[0]`` (the trace to score).
``sessionSpans`` holds **spans** and **event records** (AgentCore's "Spans, event records and telemetry
signals": ADOT splits telemetry into spans, the operations, and OTel log records whose ``body`` carries the
``input.messages`` / ``output.messages`` of a span and which join it by ``traceId`` + ``spanId``). A document
with ``startTimeUnixNano`` is a span; one without it but with ``body`` or ``timeUnixNano`` is a record.
Attributes may be a plain object or OTLP JSON key/value lists; both read the same here.

- Tool spans: the name starts with ``execute_tool ``, or ``gen_ai.tool.name`` is set, or
  ``traceloop.span.kind`` is ``tool``. Tool name: the first of ``gen_ai.tool.name``, ``tool.name``,
  ``traceloop.entity.name``, else the span name without ``execute_tool ``. Tool output (``tool_output``): the
  first of ``gen_ai.tool.call.result``, ``traceloop.entity.output``, ``tool.output``, ``tool.result``,
  ``output.value``, ``gen_ai.tool.output``; else the ``message`` of a ``gen_ai.choice`` event on the tool
  span (Strands); else ``body.output.messages`` of the span's tool record (ADOT: ``content.message``).
  Content-block lists (``[{"text": ...}]``) are read as their text; other JSON stays as written.
- Agent-level spans: ``gen_ai.operation.name == "invoke_agent"``, ``traceloop.span.kind``
  ``agent``/``workflow``, or a name starting with ``invoke_agent``.
- Answers (``response_texts``; tool spans and tool records never count), per span the first form that gives
  text, in the order evalkit's built-in span judges read them (``evalkit/spans/reading/message_forms.py``):
  1. ``gen_ai.output.messages`` (GenAI conventions 1.37+, ``[{"role", "parts": [{"type": "text",
  "content"}]}]``); 2. ``gen_ai.choice`` events (``message``); 3. ``gen_ai.completion``, then the indexed
  ``gen_ai.completion.N.content`` (Traceloop / OpenLLMetry); 4. ``gen_ai.task.output``; 5. OpenInference
  ``llm.output_messages.N.message.content`` (or ``.contents.M.message_content.text``), then ``output.value``;
  6. Traceloop ``traceloop.entity.output``; 7. ``gen_ai.client.inference.operation.details`` span events
  (attribute ``gen_ai.output.messages``: the GenAI conventions' current event); 8. the span's event records:
  ``body.output.messages`` (ADOT), the record's ``gen_ai.output.messages`` attribute (the details event as a
  log record), or the body of a ``gen_ai.choice`` log record. So when a span and its record both carry the
  answer, the span's wins. A record whose span is not in the payload is read on its own.
- Roles decide: only an assistant's message (``assistant``, ``ai``, ``model``, or a message without a role)
  is an answer; a ``user``, ``system``, ``tool`` or ``developer`` message never is, and
  ``gen_ai.user.message`` / ``gen_ai.tool.message`` events and log records are never read as answers. A
  trace that recorded only the user's message has no answer. In a list of messages the last assistant
  message is the answer; content parts that are not text (tool calls, tool results, reasoning) are skipped.
- Per trace, agent-level spans (and their records) are preferred over the LLM spans below them, and
  identical texts are kept once.
- Trace ids compare case-insensitively, the X-Ray form ``1-5759e988-bd86...`` folded to 32 hex digits.
"""

from __future__ import annotations

import json
import re

TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
TOOL_OUTPUT_KEYS = (
    "gen_ai.tool.call.result",
    "traceloop.entity.output",
    "tool.output",
    "tool.result",
    "output.value",
    "gen_ai.tool.output",
)
AGENT_SPAN_KINDS = {"agent", "workflow"}
NON_ASSISTANT_ROLES = {"user", "human", "system", "tool", "function", "developer", "ipython"}
MESSAGE_TYPES = NON_ASSISTANT_ROLES | {"ai", "assistant", "model"}
#: Content parts that hold the message's text; parts of any other ``type`` (tool calls, reasoning) do not.
TEXT_PART_TYPES = {"text", "output_text"}
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
#: Events (span events or log records) that carry input, never the agent's answer.
INPUT_EVENTS = {
    "gen_ai.user.message",
    "gen_ai.system.message",
    "gen_ai.tool.message",
    "gen_ai.assistant.message",
}
_INDEXED = re.compile(r"^(?P<prefix>.+?)\.(?P<index>\d+)\.(?P<rest>.+)$")


# --- the event ----------------------------------------------------------------------------------------------


def read_session_event(event) -> tuple[list[dict], str]:
    """(documents: spans and event records, problem); ``problem`` is non-empty when the event is malformed."""
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
    """(documents, target trace id, problem); ``problem`` is non-empty when the event is malformed."""
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
    """The documents of ``spans`` (spans and records) that belong to the trace ``trace_id``."""
    wanted = trace_key(trace_id)
    return [span for span in spans if trace_key(span.get("traceId")) == wanted]


# --- documents: spans and event records ---------------------------------------------------------------------


def is_record(doc: dict) -> bool:
    """An event record (OTel log record): no ``startTimeUnixNano``, and a ``body`` or a time of its own."""
    return "startTimeUnixNano" not in doc and any(
        key in doc for key in ("body", "timeUnixNano", "observedTimeUnixNano", "eventName")
    )


def span_key(doc: dict) -> tuple[str, str]:
    """(trace, span) a span or record belongs to, for joining records to their span."""
    return trace_key(doc.get("traceId")), str(doc.get("spanId") or "").strip().lower()


def split_documents(docs: list[dict]) -> tuple[list[dict], dict[tuple[str, str], list[dict]]]:
    """(spans, records by ``span_key``); records come in payload order."""
    spans, records = [], {}
    for doc in docs:
        if is_record(doc):
            records.setdefault(span_key(doc), []).append(doc)
        else:
            spans.append(doc)
    return spans, records


def attributes(item) -> dict:
    """Span, event or record attributes as a dict; OTLP JSON key/value lists are flattened."""
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
    return value


def record_body(record: dict):
    """A record's ``body`` as plain JSON (an OTLP ``AnyValue`` unwrapped)."""
    body = record.get("body")
    if isinstance(body, dict) and len(body) == 1 and next(iter(body)).endswith("Value"):
        return otlp_value(body)
    return body


def record_name(record: dict) -> str:
    """The record's event name: ``eventName``, else the ``event.name`` attribute ("" when neither)."""
    name = record.get("eventName") or attributes(record).get("event.name")
    return name if isinstance(name, str) else ""


def body_messages(record: dict, side: str) -> list:
    """``body.<side>.messages`` of an ADOT record (``side`` is ``input`` or ``output``), else []."""
    body = parse_json(record_body(record))
    part = body.get(side) if isinstance(body, dict) else None
    messages = part.get("messages") if isinstance(part, dict) else None
    return messages if isinstance(messages, list) else []


def is_tool_record(record: dict) -> bool:
    """A record of a tool call: its input message has the role ``tool`` (ADOT's tool record)."""
    return any(role(message) == "tool" for message in body_messages(record, "input"))


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


def tool_output(span: dict, attrs: dict, records: list[dict] = ()) -> str | None:
    """What a tool span's tool returned (see the module docstring), or None when nothing records it."""
    for key in TOOL_OUTPUT_KEYS:
        if key in attrs and attrs[key] is not None:
            return tool_text(attrs[key])
    for value in event_values(span, "gen_ai.choice", "message"):
        return tool_text(value)
    for record in records:
        for message in body_messages(record, "output"):
            content = message.get("content") if isinstance(message, dict) else None
            value = content.get("message") if isinstance(content, dict) else content
            if value is not None:
                return tool_text(value)
    return None


def tool_text(value) -> str:
    """A tool output as text: content blocks (``[{"text": ...}]``) joined, anything else as written."""
    parsed = parse_json(value)
    if isinstance(parsed, list) and parsed and all(isinstance(b, dict) and "text" in b for b in parsed):
        return "\n".join(str(b["text"]) for b in parsed)
    return value if isinstance(value, str) else json.dumps(value, default=str)


# --- answers ------------------------------------------------------------------------------------------------


def response_texts(docs: list[dict]) -> list[tuple[dict, str]]:
    """(span or record, text) of the agent's answers, per trace preferring agent-level spans; identical texts
    once. A record whose span is in ``docs`` counts as that span's; tool spans and tool records never count."""
    spans, records = split_documents(docs)
    by_trace: dict[str, list[tuple[dict, str, bool]]] = {}
    joined = set()
    for span in spans:
        attrs = attributes(span)
        key = span_key(span)
        joined.add(key)
        if is_tool_span(span, attrs):
            continue
        text = span_response(span, attrs, records.get(key, []))
        if text:
            by_trace.setdefault(key[0], []).append((span, text, is_agent_span(span, attrs)))
    for key, orphans in records.items():
        if key in joined:
            continue
        for record in orphans:
            text = "" if is_tool_record(record) else record_response(record)
            if text:
                by_trace.setdefault(key[0], []).append((record, text, False))
    found = []
    for items in by_trace.values():
        agent_level = [item for item in items if item[2]]
        seen = set()
        for doc, text, _ in agent_level or items:
            if text not in seen:
                seen.add(text)
                found.append((doc, text))
    return found


def span_response(span: dict, attrs: dict, records: list[dict] = ()) -> str:
    """The answer one span carries, itself or in its records ("" when none), by the module's precedence."""
    for read in ANSWER_FORMS:
        text = read(span, attrs)
        if text and text.strip():
            return text.strip()
    texts = [record_response(record) for record in records if not is_tool_record(record)]
    return "\n".join(text for text in texts if text).strip()


def record_response(record: dict) -> str:
    """The answer an event record carries ("" when none): ADOT ``body.output.messages``, the
    ``gen_ai.output.messages`` attribute, or a ``gen_ai.choice`` record's body."""
    name = record_name(record)
    if name in INPUT_EVENTS:
        return ""
    messages = [m for m in body_messages(record, "output") if role(m) not in NON_ASSISTANT_ROLES]
    # ADOT puts the answer in content.message and appends tool results as plain-string assistant messages
    answers = [m for m in messages if isinstance(m.get("content"), dict) and "message" in m["content"]]
    texts = [text_of(m["content"]["message"]) for m in answers] or [text_of(m) for m in messages[-1:]]
    text = "\n".join(t for t in texts if t.strip()).strip()
    if text:
        return text
    attrs = attributes(record)
    if attrs.get("gen_ai.output.messages") is not None:
        text = text_of(attrs["gen_ai.output.messages"]).strip()
    if not text and name == "gen_ai.choice":
        text = text_of(record_body(record)).strip()
    return text


def event_values(span: dict, name: str, key: str) -> list:
    """The ``key`` attribute of every ``name`` event of the span (in order; missing values left out)."""
    events = span.get("events")
    values = []
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict) and event.get("name") == name:
            value = attributes(event).get(key)
            if value not in (None, ""):
                values.append(value)
    return values


def _attribute(key: str):
    return lambda span, attrs: text_of(attrs.get(key)) if attrs.get(key) is not None else ""


def _events(name: str, key: str):
    def read(span, attrs):
        return "\n".join(t for t in (text_of(v) for v in event_values(span, name, key)) if t.strip())

    return read


def _indexed_answer(prefix: str, role_key: str, content_key: str):
    """The last assistant (or role-less) entry of indexed ``prefix.N.*`` attributes."""

    def read(span, attrs):
        texts = []
        for entry in indexed(attrs, prefix):
            if str(entry.get(role_key) or "assistant").lower() in NON_ASSISTANT_ROLES:
                continue
            content = entry.get(content_key)
            if content is None:  # OpenInference multi-part: message.contents.M.message_content.text
                parts = indexed(entry, content_key + "s")
                content = [
                    {"text": p.get("message_content.text")} for p in parts if p.get("message_content.text")
                ]
            texts.append(text_of(content))
        texts = [t for t in texts if t.strip()]
        return texts[-1] if texts else ""

    return read


#: The answer forms of one span, in order of precedence (see the module docstring).
ANSWER_FORMS = (
    _attribute("gen_ai.output.messages"),
    _events("gen_ai.choice", "message"),
    _attribute("gen_ai.completion"),
    _indexed_answer("gen_ai.completion", "role", "content"),
    _attribute("gen_ai.task.output"),
    _indexed_answer("llm.output_messages", "message.role", "message.content"),
    _attribute("output.value"),
    _attribute("traceloop.entity.output"),
    _events(DETAILS_EVENT, "gen_ai.output.messages"),
)


# --- message values -----------------------------------------------------------------------------------------


def parse_json(value):
    """A JSON-looking string parsed; anything else (or text that is not JSON) as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def indexed(attrs: dict, prefix: str) -> list[dict]:
    """``prefix.N.rest`` attributes gathered into a list of ``{rest: value}`` in index order."""
    groups: dict[int, dict] = {}
    for key, value in attrs.items():
        match = _INDEXED.match(key) if key.startswith(prefix + ".") else None
        if match and match.group("prefix") == prefix:
            groups.setdefault(int(match.group("index")), {})[match.group("rest")] = value
    return [groups[i] for i in sorted(groups)]


def text_of(value, depth: int = 0) -> str:
    """The assistant text inside a value: plain strings as they are, JSON messages unwrapped to the last
    assistant message, content parts to their text; a non-assistant message gives ""."""
    if depth > 8 or value is None or isinstance(value, bool):
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        parsed = parse_json(value)
        if parsed is value:
            return value
        return text_of(parsed, depth + 1) if isinstance(parsed, (list, dict)) else value
    if isinstance(value, list):
        roles = [role(item) for item in value]
        if any(roles):
            assistant = [item for item, who in zip(value, roles) if who and who not in NON_ASSISTANT_ROLES]
            return text_of(assistant[-1], depth + 1) if assistant else ""
        return "\n".join(filter(None, (text_of(item, depth + 1) for item in value)))
    if isinstance(value, dict):
        return _dict_text(value, depth)
    return ""


def _dict_text(value: dict, depth: int) -> str:
    if isinstance(value.get("kwargs"), dict):
        return text_of(value["kwargs"], depth + 1)
    if isinstance(value.get("messages"), list):
        return text_of(value["messages"], depth + 1)
    speaker = role(value)
    if speaker in NON_ASSISTANT_ROLES:
        return ""
    kind = str(value.get("type") or "").lower()
    if not speaker and kind and kind not in TEXT_PART_TYPES:
        return ""  # a tool call, tool result, reasoning or media part: not the answer's text
    for key in ("parts", "content", "text", "message", "output", "response", "answer", "result"):
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
