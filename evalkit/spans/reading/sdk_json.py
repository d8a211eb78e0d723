"""The OpenTelemetry Python SDK's own JSON: ``ReadableSpan.to_json()`` and ``LogRecord.to_json()``.

This is what ``ConsoleSpanExporter`` / ``ConsoleLogExporter`` print (pretty-printed objects one after another)
and what people dump from an ``InMemorySpanExporter``. A span looks like::

    {"name": "invoke_agent weather",
     "context": {"trace_id": "0x5b8e...", "span_id": "0xeee1...", "trace_state": "[]"},
     "kind": "SpanKind.INTERNAL", "parent_id": "0xa701..." or null,
     "start_time": "2026-12-01T12:43:02.378858Z", "end_time": "...",
     "status": {"status_code": "UNSET", "description": "..."},
     "attributes": {...}, "events": [{"name", "timestamp": ISO, "attributes"}],
     "links": [{"context": {...}, "attributes"}],
     "resource": {"attributes": {...}, "schema_url": ""}}

and a log record ``{"body", "severity_number", "severity_text", "attributes", "timestamp", "observed_timestamp",
"trace_id": "0x...", "span_id": "0x...", "trace_flags", "resource", "event_name"}``. Both become the canonical
span document / event record (``span_document.flat_document``, ``event_record.flat_record``): ids without
``0x``, ISO times as nanoseconds (the SDK prints microseconds), ``SpanKind.X`` as ``X``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from evalkit.spans.reading.span_document import BadSpan, nanoseconds, type_name

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def is_sdk_span(item: dict) -> bool:
    """A ``ReadableSpan.to_json()`` object: a ``context`` holding ``trace_id`` and a ``name``."""
    context = item.get("context")
    return isinstance(context, dict) and "trace_id" in context and "name" in item


def is_sdk_log(item: dict) -> bool:
    """A ``LogRecord.to_json()`` object: ``observed_timestamp`` (always printed) or ``severity_number``."""
    return "observed_timestamp" in item or ("severity_number" in item and "name" not in item)


def sdk_span(item: dict) -> dict:
    """A ``to_json()`` span as a flat span document (finished by ``span_document.flat_document``)."""
    context = item["context"]
    doc: dict[str, Any] = {
        "traceId": hex_id(context.get("trace_id"), "context.trace_id"),
        "spanId": hex_id(context.get("span_id"), "context.span_id"),
        "name": item.get("name"),
        "kind": kind_name(item.get("kind")),
        "startTimeUnixNano": iso_nanoseconds(item.get("start_time"), "start_time"),
        "endTimeUnixNano": iso_nanoseconds(item.get("end_time"), "end_time"),
        "status": status(item.get("status")),
        "attributes": item.get("attributes") or {},
    }
    parent = item.get("parent_id")
    if parent:
        doc["parentSpanId"] = hex_id(parent, "parent_id")
    events = [_event(e, f"events[{i}]") for i, e in enumerate(_list(item.get("events"), "events"))]
    if events:
        doc["events"] = events
    links = [_link(x, f"links[{i}]") for i, x in enumerate(_list(item.get("links"), "links"))]
    if links:
        doc["links"] = links
    resource = resource_of(item.get("resource"))
    if resource is not None:
        doc["resource"] = resource
    return doc


def sdk_log(item: dict) -> dict:
    """A ``LogRecord.to_json()`` record as an event record (finished by ``event_record.flat_record``)."""
    doc: dict[str, Any] = {}
    observed = item.get("observed_timestamp")
    if observed:
        doc["observedTimeUnixNano"] = iso_nanoseconds(observed, "observed_timestamp")
    if item.get("timestamp"):
        doc["timeUnixNano"] = iso_nanoseconds(item["timestamp"], "timestamp")
    for key, target in (("trace_id", "traceId"), ("span_id", "spanId")):
        value = item.get(key)
        if isinstance(value, str) and value.strip("0x"):  # 0x000... (or ""): a record outside any span
            doc[target] = hex_id(value, key)
    if "body" in item:
        doc["body"] = item["body"]
    doc["attributes"] = item.get("attributes") or {}
    for key, target in (("severity_number", "severityNumber"), ("severity_text", "severityText")):
        if item.get(key) is not None:
            doc[target] = item[key]
    if item.get("trace_flags") is not None:
        doc["flags"] = item["trace_flags"]
    if item.get("event_name"):
        doc["eventName"] = item["event_name"]
    resource = resource_of(item.get("resource"))
    if resource is not None:
        doc["resource"] = resource
    return doc


def hex_id(value: Any, field: str) -> str:
    """``0x``-prefixed (or plain) hex, lower-case, without the prefix."""
    if not isinstance(value, str) or not value:
        raise BadSpan(f"'{field}' is missing" if value in (None, "") else f"'{field}' must be a string")
    return value[2:].lower() if value[:2] in ("0x", "0X") else value


def kind_name(value: Any) -> Any:
    """``SpanKind.INTERNAL`` -> ``INTERNAL`` (other forms are left to ``span_document``)."""
    if isinstance(value, str) and value.startswith("SpanKind."):
        return value[len("SpanKind.") :]
    return value


def status(value: Any) -> Any:
    """``{"status_code": "ERROR", "description": "..."}`` -> ``{"code": "ERROR", "message": "..."}``."""
    if not isinstance(value, dict) or "status_code" not in value:
        return value
    out = {"code": value["status_code"]}
    if value.get("description"):
        out["message"] = value["description"]
    return out


def resource_of(value: Any) -> dict | None:
    """``{"attributes": {...}, "schema_url": ""}`` -> ``{"attributes": {...}}`` (a schema URL kept as
    ``schemaUrl``); None when there is nothing in it."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadSpan(f"'resource' must be an object, found {type_name(value)}")
    out = {"attributes": value.get("attributes") or {}}
    if value.get("schema_url"):
        out["schemaUrl"] = value["schema_url"]
    return out if out["attributes"] or len(out) > 1 else None


def iso_nanoseconds(value: Any, field: str) -> int:
    """Nanoseconds since the epoch from an ISO-8601 time (``2026-12-01T12:43:02.378858Z``) or an integer."""
    if type(value) is int or (isinstance(value, str) and value.isdigit()):
        return nanoseconds(value, field)  # within OTLP's fixed64, or refused naming the field
    if not isinstance(value, str):
        raise BadSpan(f"'{field}' is missing" if value is None else f"'{field}' must be an ISO-8601 time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise BadSpan(f"'{field}' must be an ISO-8601 time, found {value!r}") from None
    if moment.tzinfo is None:  # the SDK always writes Z; a time without a zone is taken as UTC
        moment = moment.replace(tzinfo=timezone.utc)
    return (moment - _EPOCH) // _MICROSECOND * 1000


_MICROSECOND = datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=timezone.utc) - _EPOCH


def _list(value: Any, field: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadSpan(f"'{field}' must be a list, found {type_name(value)}")
    return value


def _event(event: Any, field: str) -> dict:
    if not isinstance(event, dict):
        raise BadSpan(f"'{field}' must be an object, found {type_name(event)}")
    out = {"name": event.get("name"), "attributes": event.get("attributes") or {}}
    if event.get("timestamp") is not None:
        out["timeUnixNano"] = iso_nanoseconds(event["timestamp"], f"{field}.timestamp")
    return out


def _link(link: Any, field: str) -> dict:
    if not isinstance(link, dict) or not isinstance(link.get("context"), dict):
        raise BadSpan(f"'{field}' must be an object with a 'context'")
    context = link["context"]
    return {
        "traceId": hex_id(context.get("trace_id"), f"{field}.context.trace_id"),
        "spanId": hex_id(context.get("span_id"), f"{field}.context.span_id"),
        "attributes": link.get("attributes") or {},
    }
