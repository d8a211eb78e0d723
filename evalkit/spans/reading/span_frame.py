"""The span frame: one row per span or event record, with the columns derived from its document, and the
per-session table.

``signal`` says which a row is: ``span``, or ``record`` for an event record (an OTel log record carrying the
payload of its span, ``event_record``); a record's ``span_id`` is the span it belongs to, its ``name`` the
event name (or empty), its start and end its time, and its tool columns empty. A record's session is its own
session attribute, else its span's, else its trace's.

The derived columns (``session_id``, ``is_tool``, ``tool_name``, ``tool_output``, ``response_text``) follow the
attribute lists of the AgentCore reference evaluators, so a local evaluator and a notebook see the spans the
same way. Session ids follow ``session_ids`` (``session.id``, ``gen_ai.conversation.id`` and the other session
attributes, else the trace's session, else the trace is its own session).

``response_text`` is what the agent or model answered, never what the user said: a span's first response
attribute (``RESPONSE_KEYS``), else the assistant text of its ``gen_ai.output.messages``, else the text of its
``gen_ai.choice`` events and the answers of its ``gen_ai.client.inference.operation.details`` events, one per
line. An event record's is the answer it carries (``record_content``: AgentCore's ``body.output.messages``, an
operation-details record's ``gen_ai.output.messages``, a ``gen_ai.choice`` record), except on a tool span's
record (a tool's result is not an answer; a tool span's columns are its own). ``gen_ai.user.message`` events
and records, and every input message, are never response text.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalkit.spans.reading.event_record import is_record, record_name
from evalkit.spans.reading.message_text import last, messages_of
from evalkit.spans.reading.record_content import INFERENCE_DETAILS, event_content, record_content
from evalkit.spans.reading.session_ids import assign_sessions, fallback_notice
from evalkit.spans.reading.session_ids import session_id_of as session_id_of  # the old home of this name

if TYPE_CHECKING:
    import pandas as pd

#: Frame columns, in order.
COLUMNS = (
    "session_id",
    "trace_id",
    "span_id",
    "parent_span_id",
    "signal",
    "name",
    "kind",
    "start_ns",
    "end_ns",
    "status_code",
    "operation",
    "is_tool",
    "tool_name",
    "tool_output",
    "response_text",
    "document",
)
#: Attribute names, first non-blank one wins (the order of the AgentCore reference evaluators).
TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
TOOL_OUTPUT_KEYS = (
    "gen_ai.tool.call.result",
    "traceloop.entity.output",
    "tool.output",
    "tool.result",
    "output.value",
    "gen_ai.tool.output",
)
RESPONSE_KEYS = (
    "gen_ai.task.output",
    "traceloop.entity.output",
    "gen_ai.completion.0.content",
    "gen_ai.completion",
    "output.value",
)
#: Span events that carry the answer's text, and the event attribute holding it (``gen_ai.user.message`` is
#: the user's prompt, never a response).
RESPONSE_EVENTS = {"gen_ai.choice": "message"}
TOOL_PREFIX = "execute_tool "


def build_frame(
    docs: list[dict], problems: list, source: str, session_attribute: str | None = None
) -> pd.DataFrame:
    """The span frame, built column by column from the canonical documents (sessions: ``session_ids``)."""
    import pandas as pd

    starts = [d["startTimeUnixNano"] if "startTimeUnixNano" in d else d["timeUnixNano"] for d in docs]
    order = sorted(range(len(docs)), key=starts.__getitem__)
    docs = [docs[i] for i in order]
    starts = [starts[i] for i in order]
    records = [is_record(d) for d in docs]
    attrs = [d["attributes"] for d in docs]
    names = [(record_name(d) or "") if r else d["name"] for d, r in zip(docs, records)]
    trace_ids = [d.get("traceId") for d in docs]
    span_ids = [d.get("spanId") for d in docs]

    session_ids, own_traces = assign_sessions(docs, session_attribute)
    if own_traces:
        problems.append(fallback_notice(source, own_traces, session_attribute))
    orphans = sum(s is None for s in session_ids)
    if orphans:
        problems.append(
            f"{source}: {orphans} event record(s) carry no trace id and no session attribute; they are "
            "loaded but belong to no session and cannot be evaluated"
        )

    is_tool = [not r and _is_tool(n, a) for n, a, r in zip(names, attrs, records)]
    tool_spans = {(t, sp) for t, sp, tool in zip(trace_ids, span_ids, is_tool) if tool}
    responses = [
        (None if (t, sp) in tool_spans else record_content(d).answer) if r else _response_text(d, a)
        for d, a, r, t, sp in zip(docs, attrs, records, trace_ids, span_ids)
    ]
    frame = pd.DataFrame(
        {
            "session_id": pd.Series(session_ids, dtype=object),
            "trace_id": trace_ids,
            "span_id": pd.Series(span_ids, dtype=object),
            "parent_span_id": pd.Series([d.get("parentSpanId") for d in docs], dtype=object),
            "signal": ["record" if r else "span" for r in records],
            "name": names,
            "kind": ["" if r else d["kind"] for d, r in zip(docs, records)],
            "start_ns": pd.Series(starts, dtype="uint64"),
            "end_ns": pd.Series(
                [s if r else d["endTimeUnixNano"] for d, s, r in zip(docs, starts, records)], dtype="uint64"
            ),
            "status_code": ["" if r else d["status"]["code"] for d, r in zip(docs, records)],
            "operation": pd.Series([_text(a.get("gen_ai.operation.name")) for a in attrs], dtype=object),
            "is_tool": pd.Series(is_tool, dtype=bool),
            "tool_name": pd.Series(
                [_tool_name(n, a) if t else None for n, a, t in zip(names, attrs, is_tool)], dtype=object
            ),
            "tool_output": pd.Series(
                [_first_text(a, TOOL_OUTPUT_KEYS) if t else None for a, t in zip(attrs, is_tool)],
                dtype=object,
            ),
            "response_text": pd.Series(responses, dtype=object),
            "document": pd.Series(docs, dtype=object),
        },
        columns=list(COLUMNS),
    )
    return frame


def is_tool_span(name: str, attrs: dict) -> bool:
    """Whether a span (by its name and attributes) records a tool call; see ``_is_tool``."""
    return _is_tool(name, attrs)


def tool_name_of(name: str, attrs: dict) -> str:
    """The tool a tool span called (first of ``TOOL_NAME_KEYS``, else the span name after ``execute_tool``)."""
    return _tool_name(name, attrs)


def _is_tool(name: str, attrs: dict) -> bool:
    """A tool-call span: ``execute_tool ...`` by name, or a ``gen_ai.tool.name``, or Traceloop's tool kind."""
    return (
        name.startswith(TOOL_PREFIX)
        or bool(attrs.get("gen_ai.tool.name"))
        or (attrs.get("traceloop.span.kind") == "tool")
    )


def _tool_name(name: str, attrs: dict) -> str:
    found = _first_text(attrs, TOOL_NAME_KEYS)
    if found is not None:
        return found
    return name[len(TOOL_PREFIX) :].strip() if name.startswith(TOOL_PREFIX) else name


def _response_text(doc: dict, attrs: dict) -> str | None:
    """The first response attribute, else the assistant text of ``gen_ai.output.messages``, else the answers of
    the span's events, one per line (module docstring)."""
    found = _first_text(attrs, RESPONSE_KEYS)
    if found is None and attrs.get("gen_ai.output.messages") is not None:
        found = last(messages_of(attrs["gen_ai.output.messages"]), "assistant")
    if found is not None or "events" not in doc:
        return found
    texts = []
    for event in doc["events"]:
        name, event_attrs = event.get("name"), event.get("attributes") or {}
        if name == INFERENCE_DETAILS:
            text = event_content(name, event_attrs).answer
        elif name in RESPONSE_EVENTS:
            text = _text(event_attrs.get(RESPONSE_EVENTS[name]))
        else:
            continue
        if text is not None:
            texts.append(text)
    return "\n".join(texts) if texts else None


def _first_text(attrs: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            text = _text(value)
            if text is not None:
                return text
    return None


def _text(value: Any) -> str | None:
    """A non-blank string as is; other non-empty values as compact JSON; blank or empty values as None."""
    if isinstance(value, str):
        return value if value.strip() else None
    if value is None or value == [] or value == {}:
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sessions(spans: pd.DataFrame) -> pd.DataFrame:
    """One row per session, in order of first span: its traces, spans, event records, tool calls, time range.

    Spans without a session id are left out (they cannot be evaluated).
    """
    import pandas as pd

    known = spans[spans["session_id"].notna()]
    grouped = known.groupby("session_id", sort=False)
    is_span = known["signal"] == "span" if "signal" in known.columns else known["span_id"].notna()
    table = pd.DataFrame(
        {
            "traces": grouped["trace_id"].nunique(),
            "spans": is_span.groupby(known["session_id"], sort=False).sum().astype("int64"),
            "records": (~is_span).groupby(known["session_id"], sort=False).sum().astype("int64"),
            "tool_calls": grouped["is_tool"].sum().astype("int64"),
            "start_ns": grouped["start_ns"].min(),
            "end_ns": grouped["end_ns"].max(),
        }
    )
    table.index.name = "session_id"
    return table.reset_index()
