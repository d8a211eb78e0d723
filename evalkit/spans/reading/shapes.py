"""What shape a JSON value read from a span file has, and the reader for it.

``read_value`` recognises each value by its content (never by file name) and appends canonical span documents
and event records; ``describe`` says, per file, what was read (the INFO line ``spans.load`` logs). The shapes:

========================  ==============================================================================
``otlp_traces``           OTLP JSON ``{"resourceSpans": [...]}`` (``otlp_json``): the OTLP/HTTP JSON body, one
                          object per file, or one per line as the OpenTelemetry Collector's file exporter
                          writes them (``TracesData`` lines)
``otlp_logs``             OTLP JSON ``{"resourceLogs": [...]}`` (``event_record``; ``LogsData`` lines)
``otlp_metrics``          OTLP JSON ``{"resourceMetrics": [...]}``: the file exporter mixes them in; skipped
``span``                  a flat span document, as CloudWatch keeps them in ``aws/spans`` (``span_document``)
``record``                a flat event record, as CloudWatch keeps an agent's log records (``event_record``)
``snake_span``            a snake_case span dict, ``span_events`` bodies as event records (``snake_spans``)
``sdk_span``              the OpenTelemetry Python SDK's ``ReadableSpan.to_json()`` (``sdk_json``)
``sdk_log``               the SDK's ``LogRecord.to_json()``, an event record (``sdk_json``)
========================  ==============================================================================

A value of none of these shapes is a problem that names what was looked for (``UNKNOWN``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from evalkit.spans.reading.event_record import flat_record, looks_like_record, read_otlp_logs
from evalkit.spans.reading.otlp_json import read_otlp
from evalkit.spans.reading.sdk_json import is_sdk_log, is_sdk_span, sdk_log, sdk_span
from evalkit.spans.reading.snake_spans import is_snake_span, snake_documents
from evalkit.spans.reading.span_document import BadSpan, flat_document, location, type_name

#: How each shape is named in the INFO line.
NAMES = {
    "otlp_traces": "OTLP JSON resourceSpans",
    "otlp_logs": "OTLP JSON resourceLogs",
    "otlp_metrics": "OTLP JSON resourceMetrics, skipped",
    "span": "flat span documents (CloudWatch aws/spans)",
    "record": "flat event records (CloudWatch)",
    "snake_span": "snake_case span dicts",
    "sdk_span": "OpenTelemetry SDK ReadableSpan.to_json()",
    "sdk_log": "OpenTelemetry SDK LogRecord.to_json()",
}
UNKNOWN = (
    "not a span or event record of any shape evalkit reads: looked for 'resourceSpans' / 'resourceLogs' "
    "(OTLP JSON), 'traceId' + 'spanId' + 'name' (a span document), 'trace_id' / 'span_id' / 'span_events' "
    "(a snake_case span), 'context.trace_id' (OpenTelemetry SDK to_json()), 'body' / 'timeUnixNano' (an "
    "event record)"
)
#: Keys a flat span document has: an object with none of them (and no other shape's) is of unknown shape.
_SPAN_KEYS = ("traceId", "spanId", "name", "startTimeUnixNano")


def shape_of(item: dict) -> str | None:
    """The shape of one JSON object (see the table above), or None when it has none of them."""
    if "resourceSpans" in item:
        return "otlp_traces"
    if "resourceLogs" in item:
        return "otlp_logs"
    if "resourceMetrics" in item:
        return "otlp_metrics"
    if is_sdk_span(item):
        return "sdk_span"
    if is_sdk_log(item):  # before snake_span: the SDK's log records have a trace_id too
        return "sdk_log"
    if is_snake_span(item):
        return "snake_span"
    if looks_like_record(item):
        return "record"
    if any(key in item for key in _SPAN_KEYS):
        return "span"
    return None


def read_value(
    item: Any, where: tuple[str, str], docs: list, wheres: list, problems: list, shapes: Counter | None = None
) -> str | None:
    """Append what one JSON value holds to ``docs`` (and where each came from) and its problems; returns the
    value's shape (counted in ``shapes``) or None when it was not an object of a known shape."""
    if not isinstance(item, dict):
        problems.append(f"{location(where)}: expected a span (a JSON object), found {type_name(item)}")
        return None
    shape = shape_of(item)
    if shape is None:
        keys = ", ".join(sorted(item)[:8]) or "none"
        problems.append(f"{location(where)}: {UNKNOWN}; found keys: {keys}")
        return None
    if shapes is not None:
        shapes[shape] += 1
    if shape == "otlp_traces":
        read_otlp(item, where, docs, wheres, problems)
    elif shape == "otlp_logs":
        read_otlp_logs(item, where, docs, wheres, problems)
    elif shape != "otlp_metrics":
        try:
            found = _documents(shape, item)
        except BadSpan as exc:
            problems.append(f"{location(where)}: {exc}")
            return shape
        docs.extend(found)
        wheres.extend([where] * len(found))
    return shape


def _documents(shape: str, item: dict) -> list[dict]:
    if shape == "snake_span":
        return snake_documents(item)
    if shape == "sdk_span":
        return [flat_document(sdk_span(item))]
    if shape == "sdk_log":
        return [flat_record(sdk_log(item))]
    if shape == "record":
        return [flat_record(item)]
    return [flat_document(item)]


def describe(label: str, layout: str, shapes: Counter, spans: int, records: int) -> str:
    """``spans.jsonl: 12 spans + 10 event records (OpenTelemetry Collector file exporter lines)``."""
    return f"{label}: {spans} span(s) + {records} event record(s) ({source_name(layout, shapes)})"


def source_name(layout: str, shapes: Counter) -> str:
    """What produced a file, from its layout (``whole``, ``array``, ``lines``, ``stream``) and shapes."""
    kinds = set(shapes)
    if not kinds:
        return "nothing recognised"
    otlp = kinds <= {"otlp_traces", "otlp_logs", "otlp_metrics"}
    if otlp and layout == "lines":
        return "OpenTelemetry Collector file exporter lines: " + _list(shapes)
    if otlp:
        return "OTLP JSON: " + _list(shapes)
    if kinds <= {"sdk_span", "sdk_log"}:
        if layout == "stream":
            return "OpenTelemetry SDK console exporter output: " + _list(shapes)
        return f"OpenTelemetry SDK to_json() {_LAYOUTS[layout]}: " + _list(shapes)
    if kinds <= {"span", "record"} and layout == "lines":
        return "CloudWatch-export lines: " + _list(shapes)
    return f"{_LAYOUTS[layout]}: " + _list(shapes)


_LAYOUTS = {
    "whole": "one JSON document",
    "array": "a JSON array",
    "lines": "JSON lines",
    "stream": "JSON objects one after another",
}


def _list(shapes: Counter) -> str:
    return ", ".join(f"{count} × {NAMES[shape]}" for shape, count in shapes.most_common())
