"""The canonical event record: an OpenTelemetry log record that belongs to a span, as AgentCore reads it.

AgentCore evaluates a session from two signals ("Spans, event records and telemetry signals" in its developer
guide): spans (operations: name, times, attributes) and event records, OTel log records that carry the
payload of a span in their ``body`` (``{"input": {"messages": [...]}, "output": {"messages": [...]}}``: the
prompts, answers and tool input and output) and join their span by ``traceId`` + ``spanId``. ADOT and the
GenAI instrumentations that follow the current semantic conventions split telemetry this way, and the
Evaluate API's ``sessionSpans`` carries both, side by side. So does evalkit: a record is kept as its own
document next to the spans of its session (what a Lambda evaluator receives), never folded into a span.

The canonical record (``flat_record``), whatever form it came in (CloudWatch log lines, OTLP JSON
``resourceLogs``, OTLP protobuf ``ExportLogsServiceRequest``):

* ``timeUnixNano`` an int (``observedTimeUnixNano`` when the event time is unknown, 0 or missing), and
  ``observedTimeUnixNano`` an int when present;
* ``traceId`` / ``spanId`` lower-case hex strings when present (a record without them belongs to a session
  only through a ``session.id`` attribute);
* ``attributes`` a plain object (OTLP key/value lists turned into one), ``body`` a plain JSON value (an OTLP
  ``AnyValue`` unwrapped), ``resource.attributes`` plain too;
* ``eventName`` kept when the record has one (OTLP 1.5+; older emitters put it in the ``event.name``
  attribute, which ``record_name`` also reads); ``severityNumber`` an int (protobuf's enum names, such as
  ``SEVERITY_NUMBER_INFO``, turned into their numbers); other fields (``flags``, ``scope``) kept as they are.

A span document always has ``startTimeUnixNano`` and a record never does: ``is_record`` tells them apart
anywhere a mixed list is handled. ``record_key`` identifies a record for de-duplication (a record has no id
of its own: exporters that retry send it again whole).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from evalkit.spans.reading.span_document import (
    BadSpan,
    any_value,
    as_list,
    location,
    nanoseconds,
    otlp_attributes,
    otlp_id,
    plain_resource,
    type_name,
)

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode
#: Keys whose presence (without ``startTimeUnixNano`` or ``name``) marks a JSON object as a log record.
RECORD_KEYS = ("body", "observedTimeUnixNano", "severityNumber", "severityText", "eventName")
#: OTLP's ``SeverityNumber`` enum by name (``SEVERITY_NUMBER_TRACE`` = 1 ... ``SEVERITY_NUMBER_FATAL4`` = 24).
SEVERITY_NUMBERS = {"SEVERITY_NUMBER_UNSPECIFIED": 0} | {
    f"SEVERITY_NUMBER_{level}{step if step > 1 else ''}": 4 * i + step
    for i, level in enumerate(("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"))
    for step in range(1, 5)
}


def is_record(doc: dict) -> bool:
    """Whether a canonical document is an event record (spans always carry ``startTimeUnixNano``)."""
    return "startTimeUnixNano" not in doc


def looks_like_record(item: dict) -> bool:
    """Whether a JSON object read from a file is a log record rather than a span."""
    if "startTimeUnixNano" in item or "name" in item:
        return False
    return any(key in item for key in RECORD_KEYS) or "timeUnixNano" in item


def record_name(doc: dict) -> str | None:
    """The event's name: ``eventName``, else the ``event.name`` attribute, else None."""
    name = doc.get("eventName")
    if isinstance(name, str) and name:
        return name
    name = (doc.get("attributes") or {}).get("event.name")
    return name if isinstance(name, str) and name else None


def record_key(doc: dict) -> tuple[str, str, str]:
    """``(traceId, spanId, digest)``: equal for the same record sent twice, different for two records."""
    return keyed_text(doc)[0]


def keyed_text(doc: dict) -> tuple[tuple[str, str, str], str]:
    """``(record_key(doc), its canonical JSON text)``: the text (sorted keys, compact) the digest is taken
    of, for a caller that stores the record as JSON too (one serialisation instead of two)."""
    text = _dumps(doc)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
    return (doc.get("traceId") or "", doc.get("spanId") or "", digest), text


def flat_record(item: dict) -> dict:
    """A log record (plain or OTLP JSON encoded) as a canonical event record; ``BadSpan`` names a bad field."""
    doc = dict(item)
    for key, size in (("traceId", 16), ("spanId", 8)):
        value = doc.get(key)
        if value in (None, ""):
            doc.pop(key, None)
        elif not isinstance(value, str):
            raise BadSpan(f"'{key}' must be a string, found {type_name(value)}")
        else:
            doc[key] = otlp_id(value, size)
    time = doc.get("timeUnixNano")
    observed = doc.get("observedTimeUnixNano")
    if observed is not None:
        doc["observedTimeUnixNano"] = nanoseconds(observed, "observedTimeUnixNano")
    if time is not None:
        doc["timeUnixNano"] = nanoseconds(time, "timeUnixNano")
    severity = doc.get("severityNumber")
    if isinstance(severity, str) and severity in SEVERITY_NUMBERS:
        doc["severityNumber"] = SEVERITY_NUMBERS[severity]
    if not doc.get("timeUnixNano"):
        if not doc.get("observedTimeUnixNano"):
            raise BadSpan("'timeUnixNano' is missing (and no 'observedTimeUnixNano')")
        doc["timeUnixNano"] = doc["observedTimeUnixNano"]
    attributes = doc.get("attributes")
    if isinstance(attributes, list):
        doc["attributes"] = otlp_attributes(attributes, "attributes")
    elif attributes is None:
        doc["attributes"] = {}
    elif not isinstance(attributes, dict):
        raise BadSpan(f"'attributes' must be an object, found {type_name(attributes)}")
    if "body" in doc:
        doc["body"] = _plain_body(doc["body"])
    plain_resource(doc)
    return doc


def _plain_body(body: Any) -> Any:
    """An OTLP ``AnyValue`` body (``{"stringValue": ...}``, ``{"kvlistValue": ...}``) as a plain value; a body
    that is already plain JSON (CloudWatch lines, ADOT) as it is."""
    if isinstance(body, dict) and len(body) == 1 and next(iter(body)).endswith("Value"):
        return any_value(body, "body")
    return body


def read_otlp_logs(request: dict, place: tuple[str, str], docs: list, wheres: list, problems: list) -> None:
    """Append the records of an OTLP logs export (``{"resourceLogs": [...]}``) to ``docs`` and its problems.

    Each record gets its resource and scope copied in, as spans do (``otlp_json.read_otlp``).
    """
    where = location(place)
    label, loc = place
    blocks = request["resourceLogs"]
    if not isinstance(blocks, list):
        problems.append(f"{where}: 'resourceLogs' must be a list, found {type_name(blocks)}")
        return
    for r, block in enumerate(blocks):
        at = f"resourceLogs[{r}]"
        try:
            resource = _attributes_holder(block, "resource", at)
            scope_blocks = as_list(block.get("scopeLogs", block.get("instrumentationLibraryLogs", [])), at)
        except BadSpan as exc:
            problems.append(f"{where}: {exc}")
            continue
        for s, scope_block in enumerate(scope_blocks):
            sat = f"{at}.scopeLogs[{s}]"
            try:
                scope = _attributes_holder(scope_block, "scope", sat)
                records = as_list(scope_block.get("logRecords", []), f"{sat}.logRecords")
            except BadSpan as exc:
                problems.append(f"{where}: {exc}")
                continue
            for i, record in enumerate(records):
                record_place = (label, f"{loc}: {sat}.logRecords[{i}]" if loc else f"{sat}.logRecords[{i}]")
                if not isinstance(record, dict):
                    problems.append(
                        f"{location(record_place)}: expected a log record, found {type_name(record)}"
                    )
                    continue
                item = dict(record)
                if resource is not None:
                    item["resource"] = resource
                if scope is not None:
                    item["scope"] = scope
                try:
                    docs.append(flat_record(item))
                except BadSpan as exc:
                    problems.append(f"{location(record_place)}: {exc}")
                    continue
                wheres.append(record_place)


def _attributes_holder(block: Any, key: str, at: str) -> dict | None:
    """The ``resource`` or ``scope`` of an OTLP block, attributes made plain; None when absent or empty."""
    if not isinstance(block, dict):
        raise BadSpan(f"'{at}' must be an object, found {type_name(block)}")
    holder = block.get(key)
    if key == "scope" and holder is None:
        holder = block.get("instrumentationLibrary")
    if holder is None or holder == {}:
        return None
    if not isinstance(holder, dict):
        raise BadSpan(f"'{at}.{key}' must be an object, found {type_name(holder)}")
    if "attributes" in holder:
        attributes = otlp_attributes(holder["attributes"], f"{at}.{key}.attributes")
        if key == "resource" and not attributes and len(holder) == 1:
            return None
        return {**holder, "attributes": attributes}
    return dict(holder)
