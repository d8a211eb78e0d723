"""Span capture: the OpenTelemetry spans an agent emits while an item runs, routed to that item's row.

An SDK ``TracerProvider`` is installed once if the process has none (else a span processor is added to the
one there is); the processor stamps ``session.id`` on each span in ``on_start`` from a context variable set
around the call (a span started outside the call's context, say in a thread the agent made, follows its
trace), and in ``on_end`` stores the span, as the flat span document ``evalkit.spans.load`` reads, in the
row's ``spans``. ``write_spans_jsonl`` writes them all as one JSONL file.

Why here: the tracing plumbing is independent of which agent runs and how; ``evalkit.agents.calls`` sets the
bucket around each call. OpenTelemetry is imported only when the router is installed.
"""

from __future__ import annotations

import contextvars
import json
import os
import threading
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CURRENT_BUCKET", "Bucket", "SpanRouter", "span_document", "span_router", "write_spans_jsonl"]

#: The bucket of the item being run in this context (set around each call, inherited by asyncio tasks).
CURRENT_BUCKET: contextvars.ContextVar[Bucket | None] = contextvars.ContextVar(
    "evalkit_agent_spans", default=None
)


class Bucket:
    """The spans of one attempt of one row, and the session id they are stamped with."""

    def __init__(self, session: str):
        self.session = session
        self.spans: list[dict] = []
        self.traces: set[int] = set()
        self.closed = False


class SpanRouter:
    """A span processor that sends each finished span to the bucket of the item that started it.

    Installed as a subclass that also derives from the SDK's ``SpanProcessor`` (for its other hooks), so
    importing this module does not import OpenTelemetry.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._live: dict[tuple[int, int], Bucket] = {}  # (trace id, span id) of started spans
        self._traces: dict[int, Bucket] = {}  # trace id -> bucket, for spans started outside the context

    # SpanProcessor interface
    def on_start(self, span, parent_context=None) -> None:
        context = span.get_span_context()
        bucket = CURRENT_BUCKET.get()
        with self._lock:
            if bucket is None:
                bucket = self._traces.get(context.trace_id)
            if bucket is None or bucket.closed:
                return
            self._live[(context.trace_id, context.span_id)] = bucket
            self._traces[context.trace_id] = bucket
            bucket.traces.add(context.trace_id)
        span.set_attribute("session.id", bucket.session)

    def on_end(self, span) -> None:
        context = span.get_span_context()
        with self._lock:
            bucket = self._live.pop((context.trace_id, context.span_id), None)
        if bucket is None or bucket.closed:
            return
        document = span_document(span, bucket.session)
        with self._lock:
            if not bucket.closed:
                bucket.spans.append(document)

    # evalkit
    def collect(self, bucket: Bucket) -> list[dict]:
        """The bucket's finished spans, by start time; the bucket takes no more."""
        with self._lock:
            bucket.closed = True
            spans = list(bucket.spans)
        spans.sort(key=lambda d: d["startTimeUnixNano"])
        return spans

    def forget(self, bucket: Bucket) -> None:
        with self._lock:
            bucket.closed = True
            for trace_id in bucket.traces:
                if self._traces.get(trace_id) is bucket:
                    del self._traces[trace_id]
            for key in [k for k, b in self._live.items() if b is bucket]:
                del self._live[key]


_ROUTER: SpanRouter | None = None
_ROUTER_LOCK = threading.Lock()


def span_router() -> SpanRouter | None:
    """The process's span router, installed on first use (with an SDK tracer provider if none is set)."""
    global _ROUTER
    with _ROUTER_LOCK:
        if _ROUTER is not None:
            return _ROUTER
        from opentelemetry import trace
        from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):
            trace.set_tracer_provider(TracerProvider(resource=_resource()))
            provider = trace.get_tracer_provider()  # whoever won, if another thread set one meanwhile
        if not hasattr(provider, "add_span_processor"):
            warnings.warn(
                f"the OpenTelemetry tracer provider is a {type(provider).__name__}, which takes no span "
                "processor: the agent's spans cannot be captured",
                RuntimeWarning,
                stacklevel=3,
            )
            return None

        class EvalkitSpanRouter(SpanRouter, SpanProcessor):
            pass

        router = EvalkitSpanRouter()
        provider.add_span_processor(router)
        _ROUTER = router
        return router


def _resource():
    """The SDK's default resource, named ``evalkit-agent`` unless the environment names the service."""
    from opentelemetry.sdk.resources import Resource

    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    return Resource.create({} if named else {"service.name": "evalkit-agent"})


def span_document(span, session: str | None = None) -> dict:
    """A finished SDK span as a flat span document, the canonical form ``evalkit.spans.load`` produces.

    Hex ids, int nanosecond times, kind and status names, attributes as a plain object (sequences as
    lists), ``parentSpanId`` / ``events`` / ``links`` only when there are some, ``resource`` and ``scope``
    when known. ``session`` (when given) is the ``session.id`` attribute, whatever the agent set.
    """
    context = span.get_span_context()
    doc: dict[str, Any] = {}
    resource = dict(getattr(span.resource, "attributes", None) or {})
    if resource:
        doc["resource"] = {"attributes": {k: _plain(v) for k, v in resource.items()}}
    scope = span.instrumentation_scope
    if scope is not None and scope.name:
        doc["scope"] = {"name": scope.name, **({"version": scope.version} if scope.version else {})}
    doc["traceId"] = f"{context.trace_id:032x}"
    doc["spanId"] = f"{context.span_id:016x}"
    if span.parent is not None:
        doc["parentSpanId"] = f"{span.parent.span_id:016x}"
    doc["name"] = span.name
    doc["kind"] = span.kind.name
    doc["startTimeUnixNano"] = int(span.start_time)
    doc["endTimeUnixNano"] = int(span.end_time if span.end_time is not None else span.start_time)
    attributes = {k: _plain(v) for k, v in (span.attributes or {}).items()}
    if session is not None:
        attributes["session.id"] = session
    doc["attributes"] = attributes
    status = {"code": span.status.status_code.name}
    if span.status.description:
        status["message"] = span.status.description
    doc["status"] = status
    if span.events:
        doc["events"] = [
            {
                "name": e.name,
                "timeUnixNano": int(e.timestamp),
                "attributes": {k: _plain(v) for k, v in (e.attributes or {}).items()},
            }
            for e in span.events
        ]
    if span.links:
        doc["links"] = [
            {
                "traceId": f"{link.context.trace_id:032x}",
                "spanId": f"{link.context.span_id:016x}",
                "attributes": {k: _plain(v) for k, v in (link.attributes or {}).items()},
            }
            for link in span.links
        ]
    return doc


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def write_spans_jsonl(df: pd.DataFrame, path: str | os.PathLike) -> int:
    """Write every row's ``spans`` to ``path`` as JSON lines (atomically); returns how many were written.

    The file is what ``evalkit.spans.load`` reads (the CloudWatch ``aws/spans`` form), one span per line,
    redacted (``evalkit.documents.redaction``).
    """
    from evalkit.documents.files.atomic import atomic_write
    from evalkit.documents.redaction import redacted_json

    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    count = 0
    with atomic_write(path) as handle:
        for spans in df["spans"].tolist() if "spans" in df.columns else ():
            docs = spans if isinstance(spans, list) else []
            # a span may quote a key (an HTTP span's URL with credentials, a header)
            for _, text in redacted_json(docs, dumps):
                handle.write(text + "\n")
                count += 1
    return count
