"""Snake_case span dicts, the shape agent frameworks and their evaluation tools commit as fixtures.

``{"trace_id", "span_id", "parent_span_id", "name", "start_time", "end_time", "attributes", "span_events",
...}``: ids as hex (a ``0x`` prefix is dropped), times as nanoseconds (an ISO-8601 time is read too), and
``span_events`` beside or instead of ``events``. camelCase keys are accepted in the same object (AWS's
``bedrock-agentcore`` SDK tests use ``traceId`` / ``spanId`` with ``span_events``, its "merged format").

A ``span_events`` entry that carries a ``body`` is an **event record** of the span, as ADOT splits them: the
body holds the ``input`` / ``output`` messages (a JSON string body is parsed), so it becomes a canonical
record (``event_record.flat_record``) with the span's trace and span id, resource and scope, its time the
entry's own, else the span's end. An entry without a body is an ordinary span event (``name``, ``attributes``,
time).

The merged format carries neither a ``name`` nor times: a missing name reads as ``""`` and missing times as
0 (the spans are still one session's, in file order), so the SDK's own fixtures can be evaluated unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.documents.json_input import json_or_text
from evalkit.spans.reading.event_record import flat_record
from evalkit.spans.reading.sdk_json import iso_nanoseconds, kind_name, status
from evalkit.spans.reading.span_document import BadSpan, flat_document, type_name

#: snake_case key -> the canonical key.
KEYS = {
    "trace_id": "traceId",
    "span_id": "spanId",
    "parent_span_id": "parentSpanId",
    "parent_id": "parentSpanId",
    "start_time": "startTimeUnixNano",
    "end_time": "endTimeUnixNano",
    "start_time_unix_nano": "startTimeUnixNano",
    "end_time_unix_nano": "endTimeUnixNano",
    "span_name": "name",
    "span_kind": "kind",
}
#: Keys whose presence marks a JSON object as a snake_case span dict.
MARKERS = ("trace_id", "span_id", "span_events", "parent_span_id", "start_time")


def is_snake_span(item: dict) -> bool:
    """Whether a JSON object is a snake_case span dict (or a camelCase one with ``span_events``)."""
    return any(key in item for key in MARKERS)


def snake_documents(item: dict) -> list[dict]:
    """The span (canonical) and the event records its ``span_events`` bodies hold, in that order."""
    span: dict[str, Any] = {}
    for key, value in item.items():
        if key == "span_events":
            continue
        target = KEYS.get(key, key)
        if target != key and target in item:
            continue  # both spellings: the canonical one wins
        span[target] = value
    for key in ("traceId", "spanId", "parentSpanId"):
        if isinstance(span.get(key), str):
            span[key] = _hex(span[key])
    span.setdefault("name", "")
    start, end = span.get("startTimeUnixNano"), span.get("endTimeUnixNano")
    span["startTimeUnixNano"] = _time(start if start is not None else end, "start_time")
    span["endTimeUnixNano"] = _time(end if end is not None else start, "end_time")
    span["kind"] = kind_name(span.get("kind"))
    span["status"] = status(span.get("status_code", span.get("status")))
    span.pop("status_code", None)
    entries = item.get("span_events") or []
    if not isinstance(entries, list):
        raise BadSpan(f"'span_events' must be a list, found {type_name(entries)}")
    events = [_event(e, f"events[{i}]") for i, e in enumerate(span.get("events") or [])]
    records = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise BadSpan(f"'span_events[{i}]' must be an object, found {type_name(entry)}")
        if "body" in entry:
            records.append(entry)
        else:
            events.append(_event(entry, f"span_events[{i}]"))
    span["events"] = events
    doc = flat_document(span)
    return [doc] + [_record(entry, doc, f"span_events[{i}]") for i, entry in enumerate(records)]


def _hex(value: str) -> str:
    """An id without its ``0x``, lower-cased when it is hex (other ids, as in the SDK's tests, stay as written)."""
    value = value[2:] if value[:2] in ("0x", "0X") else value
    return value.lower() if _HEX.fullmatch(value) else value


_HEX = re.compile(r"[0-9a-fA-F]+")


def _time(value: Any, field: str) -> int:
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return iso_nanoseconds(value, field)


def _event(event: Any, field: str) -> dict:
    if not isinstance(event, dict):
        raise BadSpan(f"'{field}' must be an object, found {type_name(event)}")
    out = {k: v for k, v in event.items() if k not in ("event_name", "timestamp", "time_unix_nano")}
    out["name"] = event.get("name", event.get("event_name"))
    time = event.get("timeUnixNano", event.get("time_unix_nano", event.get("timestamp")))
    if time is not None:
        out["timeUnixNano"] = _time(time, f"{field}.timestamp")
    return out


def _record(entry: dict, span: dict, field: str) -> dict:
    """A ``span_events`` entry with a body as the canonical event record of ``span``."""
    body = entry["body"]
    if isinstance(body, str) and body.lstrip().startswith("{"):
        body = json_or_text(body)  # kept as the text it is when it is not JSON evalkit reads
    record: dict[str, Any] = {"traceId": span["traceId"], "spanId": span["spanId"], "body": body}
    name = entry.get("event_name", entry.get("name"))
    if isinstance(name, str) and name:
        record["eventName"] = name
    record["attributes"] = entry.get("attributes") or {}
    for key in ("resource", "scope"):
        if key in span:
            record[key] = span[key]
    time = entry.get("timeUnixNano", entry.get("time_unix_nano", entry.get("timestamp")))
    time = _time(time, f"{field}.timestamp") if time is not None else span["endTimeUnixNano"]
    try:
        # flat_record wants a known time; a span without times (the merged format) gives its records 0
        doc = flat_record({**record, "timeUnixNano": time or 1})
    except BadSpan as exc:
        raise BadSpan(f"{field}: {exc}") from None
    doc["timeUnixNano"] = time
    return doc
