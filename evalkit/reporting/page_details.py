"""What the item view of report.html shows beyond the table: context, citations, retrieval, tool calls, spans, tags.

The page's items table only needs the short columns (:mod:`evalkit.reporting.page_data`); clicking a row opens
the whole item, which also shows these. They are embedded column-wise like the rest, and a column whose every
value is empty is left out entirely (a 100,000-row run without an agent pays nothing for them).

Spans (captured with ``evalkit run --agent``, OTLP JSON dicts in the ``spans`` column) are reduced to what the
trace waterfall draws: name, start offset and duration in milliseconds from the row's first span, status,
nesting depth (from ``parentSpanId``) and the attributes, cut like every other text. Event records in the
same list (OTel log records of a span, AgentCore's split form: no ``name``, no ``startTimeUnixNano``, their
``body`` holding the span's messages; see ``evalkit.spans.reading.event_record``) are drawn under their span
(joined by ``spanId``), one level deeper, as a moment (``timeUnixNano``) rather than a bar, with their event
name, attributes and body; a record whose span is not in the list comes after the spans, at the top level.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pandas as pd

from evalkit.documents.empty_cells import EmptyDict, EmptyList
from evalkit.spans.reading.event_record import looks_like_record, record_name

#: Longest single string inside a nested value (citation texts, extracts, attribute values), in characters.
NESTED_TEXT_LIMIT = 1000
#: At most this many list entries / dict keys are kept per level of a nested value.
NESTED_ITEMS_LIMIT = 50
#: At most this many spans per row are embedded (the first by start time).
SPAN_LIMIT = 500


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def bounded(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data with strings, lists and dicts cut (see the limits above); NaN → None."""
    if _missing(value):
        return None
    if isinstance(value, str):
        return value if len(value) <= NESTED_TEXT_LIMIT else value[:NESTED_TEXT_LIMIT] + "\u2026"
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth > 8:
        return "\u2026"
    if isinstance(value, dict):
        return {str(k): bounded(v, depth + 1) for k, v in list(value.items())[:NESTED_ITEMS_LIMIT]}
    if isinstance(value, (list, tuple)):
        return [bounded(v, depth + 1) for v in list(value)[:NESTED_ITEMS_LIMIT]]
    if hasattr(value, "item"):  # numpy scalars
        return bounded(value.item(), depth)
    return bounded(str(value), depth)


def _nanos(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def trace(spans: Any) -> list[dict[str, Any]] | None:
    """One row's spans as waterfall entries ``{n, s, d, st, l, a}``, ordered by start, each span's event records
    (``r: 1``, with the body in ``b``) right under it; None without spans or records.

    ``s`` is the start offset and ``d`` the duration in milliseconds (from the earliest span or record of the
    row), ``st`` the status code (``OK``, ``ERROR``, ``UNSET``; ``record`` for a record), ``l`` the nesting
    depth and ``a`` the attributes.
    """
    if not isinstance(spans, (list, tuple)) or not spans:
        return None
    docs = [s for s in spans if isinstance(s, dict)]
    records = [d for d in docs if _is_record(d)]
    docs = [d for d in docs if not _is_record(d)]
    starts = [_nanos(s.get("startTimeUnixNano")) for s in docs]
    times = [_record_time(r) for r in records]
    known = [s for s in starts + times if s is not None]
    if not known:
        return None
    origin = min(known)
    parents = {str(s.get("spanId")): s.get("parentSpanId") for s in docs if s.get("spanId")}

    def depth(span: dict) -> int:
        level, parent, seen = 0, span.get("parentSpanId"), set()
        while parent and str(parent) in parents and parent not in seen and level < 50:
            seen.add(parent)
            level += 1
            parent = parents[str(parent)]
        return level

    entries = []
    for span, start in zip(docs, starts, strict=True):
        end = _nanos(span.get("endTimeUnixNano"))
        begin = origin if start is None else start
        status = span.get("status")
        entries.append(
            {
                "n": bounded(str(span.get("name", "(unnamed span)"))),
                "s": round((begin - origin) / 1e6, 3),
                "d": round(max(0, (end if end is not None else begin) - begin) / 1e6, 3),
                "st": str(status.get("code", "UNSET")) if isinstance(status, dict) else "UNSET",
                "l": depth(span),
                "a": bounded(span.get("attributes") or {}),
                "_id": str(span.get("spanId") or ""),
            }
        )
    entries.sort(key=lambda e: e["s"])
    return _with_records(entries, records, times, origin)[:SPAN_LIMIT]


def _is_record(doc: dict) -> bool:
    """An event record (a log record of a span) rather than a span: no start time, a record's fields."""
    return "startTimeUnixNano" not in doc and looks_like_record(doc)


def _record_time(record: dict) -> int | None:
    return _nanos(record.get("timeUnixNano")) or _nanos(record.get("observedTimeUnixNano"))


def _with_records(entries: list[dict], records: list[dict], times: list, origin: int) -> list[dict]:
    """The span entries with each span's records (by time) right after it; records of no listed span last."""
    by_span: dict[str, list[tuple[int, dict]]] = {}
    for record, time in zip(records, times, strict=True):
        by_span.setdefault(str(record.get("spanId") or ""), []).append(
            (origin if time is None else time, record)
        )
    out = []
    for entry in entries:
        span_id = entry.pop("_id")
        out.append(entry)
        out.extend(
            _record_entry(r, t, origin, entry["l"] + 1)
            for t, r in sorted(by_span.pop(span_id, []) if span_id else [], key=_first)
        )
    rest = sorted((pair for pairs in by_span.values() for pair in pairs), key=_first)
    out.extend(_record_entry(r, t, origin, 0) for t, r in rest)
    return out


def _first(pair: tuple) -> int:
    return pair[0]


def _record_entry(record: dict, time: int, origin: int, level: int) -> dict[str, Any]:
    """A record's waterfall entry: its event name, its moment, its attributes and body."""
    return {
        "n": bounded(record_name(record) or "event record"),
        "s": round((time - origin) / 1e6, 3),
        "d": 0.0,
        "st": "record",
        "l": level,
        "a": bounded(record.get("attributes") if isinstance(record.get("attributes"), dict) else {}),
        "b": bounded(record.get("body")),
        "r": 1,
    }


def item_tags(df: pd.DataFrame) -> list[list[str] | None]:
    """Each row's tags: the item's (or turn's) own ``tags`` plus its thread's, from the kept source dicts."""
    n = len(df)
    own = df["source"].tolist() if "source" in df.columns else [None] * n
    thread = df["thread_source"].tolist() if "thread_source" in df.columns else [None] * n
    out: list[list[str] | None] = []
    for a, b in zip(own, thread, strict=True):
        if b is None and (type(a) is not dict or "tags" not in a):  # noqa: E721 (the common row, fast)
            out.append(None)
            continue
        tags: list[str] = []
        for source in (b, a):
            values = source.get("tags") if isinstance(source, dict) else None
            for tag in values if isinstance(values, list) else ():
                if isinstance(tag, str) and tag not in tags:
                    tags.append(tag[:100])
        out.append(tags or None)
    return out


def has_content(values: list[Any]) -> bool:
    """Whether a column of :func:`detail_values` holds anything (a column without is left off the page)."""
    try:
        if any(values):  # a true value is never empty (checked at C speed, the usual answer for content)
            return True
    except (TypeError, ValueError):  # pd.NA (and arrays) have no truth value: ask each value
        return any(v not in _EMPTY for v in values)
    if set(map(type, values)) <= _EMPTY_TYPES:
        return False  # every value is false and of a type whose only false values are the empty ones
    return any(v not in _EMPTY for v in values)


_EMPTY = (None, "", [], {})
#: Types whose only false values are the empty ones; the case table's shared empty cells are always empty.
_EMPTY_TYPES = frozenset({type(None), str, list, dict, EmptyList, EmptyDict})


def detail_values(df: pd.DataFrame, tags: list | None = None) -> Iterator[tuple[str, list]]:
    """Every column the item view can show that ``df`` has, empty or not: ``tags`` (``tags`` when given, else
    :func:`item_tags`), then ``context``, ``citations``, ``retrieval``, ``tools``, ``spans`` (see :func:`trace`)
    when their source column is there."""
    yield "tags", item_tags(df) if tags is None else tags
    for name, column, convert in (
        ("context", "context", bounded),
        ("citations", "citations", bounded),
        ("retrieval", "retrieval_executions", bounded),
        ("tools", "tool_calls", bounded),
        ("spans", "spans", trace),
    ):
        if column in df.columns:
            values = df[column].tolist()
            # a column with nothing in it (None, "", [], {}) is the same converted: spare the conversion
            yield name, [convert(v) for v in values] if has_content(values) else values


def detail_columns(df: pd.DataFrame, tags: list | None = None) -> Iterator[tuple[str, list]]:
    """The columns of :func:`detail_values` that have anything in them (a streamed page decides at the end)."""
    for name, values in detail_values(df, tags):
        if has_content(values):
            yield name, values
