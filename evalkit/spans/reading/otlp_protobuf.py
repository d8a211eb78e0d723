"""OTLP protobuf messages as OTLP JSON dicts, several times faster than ``MessageToDict``.

The receiver turns a protobuf ``ExportTraceServiceRequest`` (and ``ExportLogsServiceRequest``: log records'
``body`` is an ``AnyValue``, their ``eventName`` a string, ``observedTimeUnixNano`` a fixed64, their
``severityNumber`` an enum, given by name as ``MessageToDict`` does) into the dict of the OTLP JSON encoding,
so ``otlp_json`` and ``event_record`` read protobuf and JSON requests with one code path. That dict is what
``google.protobuf.json_format.MessageToDict(message)`` gives (camelCase names, 64-bit integers as strings,
other bytes in base64, enums by name, fields that are not set left out) with one difference, the one OTLP
itself makes: trace and span ids (of spans, links and log records) are lower-case hex, not base64 (``otlp_json`` reads both, and hex is its
fast path).

Why not ``MessageToDict``: it is general (maps, ``Any``, well-known types, options) and spends most of an OTLP
request's decoding time on that generality; OTLP traces use none of it. The walk reads any message field by
field (``ListFields``); ``KeyValue`` and ``AnyValue``, six of the seven messages of a typical span, have
readers of their own. What the walk does not handle (a map, a well-known type, a ``float`` field) raises
``Unsupported`` and the caller falls back to ``MessageToDict``, so a future OTLP field cannot be mis-read.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

_INT64 = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_SFIXED64,
}
_AS_IS = {
    FieldDescriptor.TYPE_STRING,
    FieldDescriptor.TYPE_BOOL,
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_SFIXED32,
}


#: The id fields, hex in OTLP JSON (``bytes.hex`` is lower case).
_IDS = {
    "opentelemetry.proto.trace.v1.Span.trace_id",
    "opentelemetry.proto.trace.v1.Span.span_id",
    "opentelemetry.proto.trace.v1.Span.parent_span_id",
    "opentelemetry.proto.trace.v1.Span.Link.trace_id",
    "opentelemetry.proto.trace.v1.Span.Link.span_id",
    "opentelemetry.proto.logs.v1.LogRecord.trace_id",
    "opentelemetry.proto.logs.v1.LogRecord.span_id",
}
_KEY_VALUE = "opentelemetry.proto.common.v1.KeyValue"
_ANY_VALUE = "opentelemetry.proto.common.v1.AnyValue"


class Unsupported(Exception):
    """A field this walk does not convert: use ``MessageToDict``."""


def message_dict(message: Any) -> dict:
    """``message`` (an OTLP protobuf message) as OTLP JSON (see the module docstring)."""
    out = {}
    for field, value in message.ListFields():
        known = _fields.get(field)
        if known is None:  # a descriptor's attributes are slow to read: once per field, then from here
            known = _fields[field] = (field.json_name, field.is_repeated, _converter(field))
        name, repeated, convert = known
        out[name] = [convert(v) for v in value] if repeated else convert(value)
    return out


def _converter(field: FieldDescriptor):
    kind = field.type
    if kind == FieldDescriptor.TYPE_MESSAGE:
        message = field.message_type
        if message.GetOptions().map_entry or message.full_name.startswith("google.protobuf."):
            raise Unsupported(field.full_name)
        return {_KEY_VALUE: _key_value, _ANY_VALUE: _any_value}.get(message.full_name, message_dict)
    if kind in _AS_IS:
        return _same
    if kind in _INT64:
        return str
    if kind == FieldDescriptor.TYPE_BYTES:
        return bytes.hex if field.full_name in _IDS else _base64
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return _double
    if kind == FieldDescriptor.TYPE_ENUM:
        names = {v.number: v.name for v in field.enum_type.values}
        if field.enum_type.is_closed:
            raise Unsupported(field.full_name)
        return lambda number: names.get(number, number)
    raise Unsupported(field.full_name)


def _key_value(item: Any) -> dict:
    """A ``KeyValue`` (an attribute): ``{"key": ..., "value": {...}}``, each left out when not set."""
    out: dict[str, Any] = {}
    if item.key:
        out["key"] = item.key
    if item.HasField("value"):
        out["value"] = _any_value(item.value)
    return out


def _any_value(value: Any) -> dict:
    """An ``AnyValue``: ``{}`` or ``{"<kind>Value": value}`` for the one member of its ``value`` oneof that is set
    (set even when it holds the default, ``""`` or ``0``: a oneof member has presence)."""
    member = value.WhichOneof("value")
    if member is None:
        return {}
    name, convert = _ANY_MEMBERS[member]
    return {name: convert(getattr(value, member))}


def _same(value: Any) -> Any:
    return value


def _base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _double(value: float) -> float | str:
    if math.isinf(value):
        return "-Infinity" if value < 0 else "Infinity"
    if math.isnan(value):
        return "NaN"
    return value


def _array(value: Any) -> dict:
    """An ``ArrayValue``: ``{"values": [...]}``, or ``{}`` when it holds none (its one field unset)."""
    return {"values": [_any_value(v) for v in value.values]} if value.values else {}


def _kvlist(value: Any) -> dict:
    """A ``KeyValueList`` (a log record's structured body, a map attribute): ``{"values": [...]}`` or ``{}``."""
    return {"values": [_key_value(v) for v in value.values]} if value.values else {}


_fields: dict[FieldDescriptor, tuple[str, bool, Any]] = {}
_ANY_MEMBERS = {
    "string_value": ("stringValue", _same),
    "bool_value": ("boolValue", _same),
    "int_value": ("intValue", str),
    "double_value": ("doubleValue", _double),
    "array_value": (
        "arrayValue",
        _array,
    ),  # the two nested values, read directly: a record body is made of them
    "kvlist_value": ("kvlistValue", _kvlist),
    "bytes_value": ("bytesValue", _base64),
}
