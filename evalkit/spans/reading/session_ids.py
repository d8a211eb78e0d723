"""Which session a span or event record belongs to: the one rule the frame, the receiver and the stream share.

AgentCore evaluates sessions; agents name theirs in different attributes. A document's session id is the
first non-blank one of ``SESSION_ATTRIBUTES``, looked up on the document and then on its resource:

* ``session.id``: OpenTelemetry's session semantic conventions; OpenInference's ``SpanAttributes.SESSION_ID``
  (``using_session``, and the LangChain/LangGraph instrumentation, which copies a run's ``session_id`` /
  ``thread_id`` / ``conversation_id`` metadata into it); Strands' ``trace_attributes``; AgentCore Runtime's
  ``session.id`` baggage (the ADOT distro copies it onto every span); Langfuse and Langtrace also read it;
* ``gen_ai.conversation.id``: OpenTelemetry's GenAI conventions (OpenAI Agents SDK and the GenAI
  instrumentations that follow the current conventions);
* ``langfuse.session.id``: Langfuse's own OTel attribute (``propagate_attributes(session_id=...)``);
* ``traceloop.association.properties.session_id`` / ``...conversation_id`` / ``...thread_id`` /
  ``...chat_id``: Traceloop / OpenLLMetry association properties (``Traceloop.set_association_properties``;
  ``chat_id`` is the key its documentation shows);
* ``langsmith.metadata.session_id`` / ``...thread_id`` / ``...conversation_id``: LangSmith's OTel export of
  a run's thread metadata (the three keys LangSmith groups threads by);
* ``thread_id`` / ``session_id`` / ``conversation_id`` inside OpenInference's ``metadata`` attribute (a JSON
  object as text: LangGraph's ``configurable.thread_id`` lands there on spans no session attribute reached).

``session_attribute`` (``--session-attribute NAME`` on ``spans eval`` / ``serve`` / ``stream``,
``load(..., session_attribute=)``) replaces the list with one attribute of the user's choosing.

A document with none of them takes its span's session (a record), else its trace's; a trace that has none
at all is **its own session** (session id = trace id), as the Evaluate API takes the spans it is given as one
session; ``assign_sessions`` counts those traces so the caller can say so once. A record with no trace and no
session attribute belongs to no session.
"""

from __future__ import annotations

from typing import Any

from evalkit.documents.json_input import json_or_text

SESSION_ATTRIBUTES = (
    "session.id",
    "gen_ai.conversation.id",
    "langfuse.session.id",
    "traceloop.association.properties.session_id",
    "traceloop.association.properties.conversation_id",
    "traceloop.association.properties.thread_id",
    "traceloop.association.properties.chat_id",
    "langsmith.metadata.session_id",
    "langsmith.metadata.thread_id",
    "langsmith.metadata.conversation_id",
)
#: Keys read from OpenInference's ``metadata`` attribute (JSON text) when no attribute above is set.
METADATA_KEYS = ("session_id", "thread_id", "conversation_id")


def session_id_of(attrs: dict, resource: dict, attribute: str | None = None) -> str | None:
    """The session id a document names itself (on it, else on its resource), or None."""
    if attribute is not None:
        return _text(attrs.get(attribute)) or _text(resource.get(attribute))
    for holder in (attrs, resource):
        for key in SESSION_ATTRIBUTES:
            found = _text(holder.get(key))
            if found is not None:
                return found
    return _from_metadata(attrs.get("metadata"))


def document_session(doc: dict, attribute: str | None = None) -> str | None:
    """``session_id_of`` for a canonical span document or event record."""
    resource = (doc.get("resource") or {}).get("attributes") or {}
    return session_id_of(doc.get("attributes") or {}, resource, attribute)


def assign_sessions(
    docs: list[dict],
    attribute: str | None = None,
    known: dict[str, str] | None = None,
    *,
    partial: bool = False,
) -> tuple[list[str | None], int]:
    """Each document's session id, and how many traces became their own session.

    ``known`` maps trace ids to sessions already decided elsewhere (the receiver's store: spans of a trace
    that came in an earlier request); it is consulted before a trace is made its own session. ``partial``
    says ``docs`` may hold only part of their traces (one export request, one stream line): a trace is then
    made its own session only when its root span (no ``parentSpanId``) is among them. A root span ends, and is
    exported, last: children sent before it keep None and join it later by trace (the receiver's store), so
    a trace whose root does name a session is never split into two.
    """
    own = [document_session(d, attribute) for d in docs]
    by_trace: dict[str, str] = {}
    by_span: dict[tuple, str] = {}
    for doc, session in zip(docs, own):
        trace = doc.get("traceId")
        if session is not None and trace:
            by_trace.setdefault(trace, session)
            if "startTimeUnixNano" in doc:
                by_span.setdefault((trace, doc.get("spanId")), session)
    if known:
        for trace, session in known.items():
            by_trace.setdefault(trace, session)
    roots = {d.get("traceId") for d in docs if "startTimeUnixNano" in d and not d.get("parentSpanId")}
    fallback: set[str] = set()
    ids: list[str | None] = []
    for doc, session in zip(docs, own):
        if session is None:
            trace = doc.get("traceId")
            session = (by_span.get((trace, doc.get("spanId"))) or by_trace.get(trace)) if trace else None
            if session is None and trace and (not partial or trace in roots):
                session = trace
                fallback.add(trace)
        ids.append(session)
    return ids, len(fallback)


def fallback_notice(source: str, traces: int, attribute: str | None = None) -> str:
    """The one line that says traces became their own sessions."""
    looked = (
        f"'{attribute}'"
        if attribute
        else "'session.id', 'gen_ai.conversation.id' or another session attribute"
    )
    return (
        f"{source}: {traces} trace(s) carry no {looked} (on a span, its resource or its trace); each is "
        "evaluated as its own session (session id = trace id); name the attribute with --session-attribute"
    )


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, (dict, list)):
        return None
    return str(value)


def _from_metadata(metadata: Any) -> str | None:
    if isinstance(metadata, str) and metadata.startswith("{"):
        metadata = json_or_text(metadata)  # text the bounded parser refuses stays text: no session id here
    if not isinstance(metadata, dict):
        return None
    for key in METADATA_KEYS:
        found = _text(metadata.get(key))
        if found is not None:
            return found
    return None
