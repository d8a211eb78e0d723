"""The span frame: one row per span, with the columns derived from its document, and the per-session table.

The derived columns (``session_id``, ``is_tool``, ``tool_name``, ``tool_output``, ``response_text``) follow the
attribute lists of the AgentCore reference evaluators, so a local evaluator and a notebook see the spans the
same way. A span without ``session.id`` (on itself or its resource) belongs to the session of its trace.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: Frame columns, in order.
COLUMNS = (
    "session_id",
    "trace_id",
    "span_id",
    "parent_span_id",
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
#: Span events that carry message text, and the event attribute holding it.
RESPONSE_EVENTS = {"gen_ai.choice": "message", "gen_ai.user.message": "content"}
TOOL_PREFIX = "execute_tool "


def build_frame(docs: list[dict], problems: list, source: str) -> pd.DataFrame:
    """The span frame, built column by column from the canonical documents."""
    import pandas as pd

    order = sorted(range(len(docs)), key=[d["startTimeUnixNano"] for d in docs].__getitem__)
    docs = [docs[i] for i in order]
    attrs = [d["attributes"] for d in docs]
    resources = [(d.get("resource") or {}).get("attributes") or {} for d in docs]
    names = [d["name"] for d in docs]
    trace_ids = [d["traceId"] for d in docs]

    session_ids = [session_id_of(a, r) for a, r in zip(attrs, resources)]
    # A span without session.id belongs to the session of its trace (instrumentations often set it on the
    # root span only).
    by_trace: dict[str, str] = {}
    for trace, session in zip(trace_ids, session_ids):
        if session is not None:
            by_trace.setdefault(trace, session)
    session_ids = [s if s is not None else by_trace.get(t) for s, t in zip(session_ids, trace_ids)]
    orphans = sum(s is None for s in session_ids)
    if orphans:
        problems.append(
            f"{source}: {orphans} span(s) carry no 'session.id' attribute (on the span, its resource or its "
            "trace); they are loaded but belong to no session and cannot be evaluated"
        )

    is_tool = [_is_tool(n, a) for n, a in zip(names, attrs)]
    frame = pd.DataFrame(
        {
            "session_id": pd.Series(session_ids, dtype=object),
            "trace_id": trace_ids,
            "span_id": [d["spanId"] for d in docs],
            "parent_span_id": pd.Series([d.get("parentSpanId") for d in docs], dtype=object),
            "name": names,
            "kind": [d["kind"] for d in docs],
            "start_ns": pd.Series([d["startTimeUnixNano"] for d in docs], dtype="int64"),
            "end_ns": pd.Series([d["endTimeUnixNano"] for d in docs], dtype="int64"),
            "status_code": [d["status"]["code"] for d in docs],
            "operation": pd.Series([_text(a.get("gen_ai.operation.name")) for a in attrs], dtype=object),
            "is_tool": pd.Series(is_tool, dtype=bool),
            "tool_name": pd.Series(
                [_tool_name(n, a) if t else None for n, a, t in zip(names, attrs, is_tool)], dtype=object
            ),
            "tool_output": pd.Series(
                [_first_text(a, TOOL_OUTPUT_KEYS) if t else None for a, t in zip(attrs, is_tool)],
                dtype=object,
            ),
            "response_text": pd.Series([_response_text(d, a) for d, a in zip(docs, attrs)], dtype=object),
            "document": pd.Series(docs, dtype=object),
        },
        columns=list(COLUMNS),
    )
    return frame


def session_id_of(attrs: dict, resource: dict) -> str | None:
    value = attrs.get("session.id")
    if value is None or value == "":
        value = resource.get("session.id")
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


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
    """The first response attribute; failing that, the text of the span's message events, one per line."""
    found = _first_text(attrs, RESPONSE_KEYS)
    if found is not None or "events" not in doc:
        return found
    texts = []
    for event in doc["events"]:
        key = RESPONSE_EVENTS.get(event.get("name"))
        if key is not None:
            text = _text((event.get("attributes") or {}).get(key))
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
    """One row per session, in order of first span: its traces, spans, tool calls and time range.

    Spans without a session id are left out (they cannot be evaluated).
    """
    import pandas as pd

    known = spans[spans["session_id"].notna()]
    grouped = known.groupby("session_id", sort=False)
    table = pd.DataFrame(
        {
            "traces": grouped["trace_id"].nunique(),
            "spans": grouped.size(),
            "tool_calls": grouped["is_tool"].sum().astype("int64"),
            "start_ns": grouped["start_ns"].min(),
            "end_ns": grouped["end_ns"].max(),
        }
    )
    table.index.name = "session_id"
    return table.reset_index()
