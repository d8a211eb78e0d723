"""The canonical flat span document: the checks and normalisations every span goes through, whatever its form.

Both input forms end as the same flat document (what a Lambda evaluator receives in ``sessionSpans``): ids as
strings, ``startTimeUnixNano``/``endTimeUnixNano`` as ints, ``kind`` and ``status.code`` as names,
``attributes`` as a plain object, empty ``events``/``links`` dropped. A flat span document, one JSON object per
line as CloudWatch keeps them in the ``aws/spans`` log group, is normalised here directly (``flat_document``);
OTLP JSON is converted in ``otlp_json`` and finished here. OTLP key/value attribute lists, which both forms may
carry, are turned into plain objects here too.

A span that cannot be used raises ``BadSpan`` naming the field; the reader adds the file and line
(``location``), so one bad span is reported and skipped rather than stopping the load. Times are OTLP's
``fixed64``: 0 to 2^64-1 nanoseconds; a time outside that range (negative, or thousands of digits) is refused
with its field named.

Non-finite doubles: OTLP JSON writes a ``doubleValue`` of NaN or an infinity as the strings ``"NaN"``,
``"Infinity"`` and ``"-Infinity"`` (the proto3 JSON mapping). They are kept as those strings, not as floats:
a float NaN is not JSON, so ``spans to-document`` would write a document that fails to validate and the
online store would keep a row no JSON reader accepts; the string says what the value was, where ``null``
would lose it (protobuf requests get the same strings, ``otlp_protobuf``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

from evalkit.documents.json_input import quote

_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
_HEX16 = re.compile(r"[0-9a-fA-F]{16}")


class BadSpan(Exception):
    """One span is unusable: the message names the field, the caller prefixes file and line."""


def location(where: tuple[str, str]) -> str:
    """``file: location`` for a problem message (just ``file`` for a whole-file document)."""
    label, loc = where
    return f"{label}: {loc}" if loc else label


def flat_document(span: dict) -> dict:
    """A flat span document, normalised (kind and status names, int times, empty lists dropped)."""
    doc = dict(span)
    required_id(doc, "traceId")
    required_id(doc, "spanId")
    attributes = doc.get("attributes")
    if isinstance(attributes, list):
        doc["attributes"] = otlp_attributes(attributes, "attributes")
    elif attributes is not None and not isinstance(attributes, dict):
        raise BadSpan(f"'attributes' must be an object, found {type_name(attributes)}")
    plain_resource(doc)
    events = doc.get("events")
    if events is not None:
        doc["events"] = [_flat_event(e, f"events[{i}]") for i, e in enumerate(as_list(events, "events"))]
    return finish(doc)


def plain_resource(doc: dict) -> None:
    """A document's ``resource`` checked, its OTLP key/value attribute list made a plain object (in place)."""
    resource = doc.get("resource")
    if resource is not None:
        if not isinstance(resource, dict):
            raise BadSpan(f"'resource' must be an object, found {type_name(resource)}")
        if isinstance(resource.get("attributes"), list):
            doc["resource"] = {**resource, "attributes": otlp_attributes(resource["attributes"], "resource")}


def finish(doc: dict) -> dict:
    """The checks and normalisations shared by both forms."""
    name = doc.get("name")
    if name is None:
        raise BadSpan("'name' is missing")
    if not isinstance(name, str):
        raise BadSpan(f"'name' must be a string, found {type_name(name)}")
    doc["startTimeUnixNano"] = nanoseconds(doc.get("startTimeUnixNano"), "startTimeUnixNano")
    doc["endTimeUnixNano"] = nanoseconds(doc.get("endTimeUnixNano"), "endTimeUnixNano")
    if doc["endTimeUnixNano"] < doc["startTimeUnixNano"]:
        raise BadSpan("'endTimeUnixNano' is before 'startTimeUnixNano'")
    parent = doc.get("parentSpanId")
    if parent in (None, ""):
        doc.pop("parentSpanId", None)
    elif not isinstance(parent, str):
        raise BadSpan(f"'parentSpanId' must be a string, found {type_name(parent)}")
    doc["kind"] = _kind(doc.get("kind"))
    doc["status"] = _status(doc.get("status"))
    if doc.get("attributes") is None:
        doc["attributes"] = {}
    for key in ("events", "links"):
        if key in doc and not doc[key]:
            del doc[key]
    return doc


def required_id(span: dict, key: str) -> str:
    value = span.get(key)
    if value is None:
        raise BadSpan(f"'{key}' is missing")
    if not isinstance(value, str):
        raise BadSpan(f"'{key}' must be a string, found {type_name(value)}")
    if not value:
        raise BadSpan(f"'{key}' is empty")
    return value


#: The largest time OTLP can carry (``fixed64`` nanoseconds since the epoch).
MAX_NANOSECONDS = 2**64 - 1


def nanoseconds(value: Any, key: str) -> int:
    if value is None:
        raise BadSpan(f"'{key}' is missing")
    number = None
    if type(value) is int:
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        if len(value.lstrip("0")) > 20:  # more digits than 2^64-1 has: refused before converting
            raise BadSpan(_out_of_range(key, value))
        number = int(value)
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    if number is None:
        raise BadSpan(f"'{key}' must be an integer (nanoseconds since the epoch), found {quote(value)}")
    if not 0 <= number <= MAX_NANOSECONDS:
        raise BadSpan(_out_of_range(key, value))
    return number


def _out_of_range(key: str, value: Any) -> str:
    shown = quote(value) if isinstance(value, str) else quote(str(value))
    return f"'{key}' must be from 0 to 2^64-1 nanoseconds since the epoch (OTLP's fixed64), found {shown}"


def _kind(value: Any) -> str:
    if value is None:
        return "UNSPECIFIED"
    if type(value) is int:
        return _KINDS.get(value, str(value))
    if isinstance(value, str):
        return value.upper().removeprefix("SPAN_KIND_")
    raise BadSpan(f"'kind' must be a string or an integer, found {type_name(value)}")


def _status(value: Any) -> dict:
    if value is None:
        return {"code": "UNSET"}
    if isinstance(value, str):
        value = {"code": value}
    if not isinstance(value, dict):
        raise BadSpan(f"'status' must be an object, found {type_name(value)}")
    code = value.get("code", 0)
    if type(code) is int:
        code = _STATUS.get(code, str(code))
    elif isinstance(code, str):
        code = code.upper().removeprefix("STATUS_CODE_")
    else:
        raise BadSpan(f"'status.code' must be a string or an integer, found {type_name(code)}")
    status = {**value, "code": code}
    if not status.get("message"):
        status.pop("message", None)
    return status


def as_list(value: Any, field: str) -> list:
    if not isinstance(value, list):
        raise BadSpan(f"'{field}' must be a list, found {type_name(value)}")
    return value


def _flat_event(event: Any, field: str) -> dict:
    if not isinstance(event, dict):
        raise BadSpan(f"'{field}' must be an object, found {type_name(event)}")
    out = dict(event)
    attributes = out.get("attributes")
    if isinstance(attributes, list):
        out["attributes"] = otlp_attributes(attributes, f"{field}.attributes")
    elif attributes is not None and not isinstance(attributes, dict):
        raise BadSpan(f"'{field}.attributes' must be an object, found {type_name(attributes)}")
    if "timeUnixNano" in out:
        out["timeUnixNano"] = nanoseconds(out["timeUnixNano"], f"{field}.timeUnixNano")
    return out


def otlp_attributes(items: Any, field: str) -> dict:
    """``[{"key": k, "value": AnyValue}, ...]`` -> ``{k: plain value}`` (a later duplicate key wins)."""
    if not isinstance(items, list):
        raise BadSpan(f"'{field}' must be a list of {{key, value}}, found {type_name(items)}")
    out: dict[str, Any] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadSpan(f"'{field}[{i}]' must be an object, found {type_name(item)}")
        key = item.get("key")
        if not isinstance(key, str):
            raise BadSpan(
                f"'{field}[{i}].key' is missing" if key is None else f"'{field}[{i}].key' must be a string"
            )
        out[key] = any_value(item.get("value"), f"{field}[{i}].value")
    return out


def any_value(value: Any, field: str) -> Any:
    """An OTLP ``AnyValue`` as a plain value (int64 strings to ints, arrays to lists, kvlists to dicts)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadSpan(f"'{field}' must be an AnyValue object, found {type_name(value)}")
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise BadSpan(f"'{field}.intValue' must be an integer, found {quote(raw)}") from None
    if "doubleValue" in value:
        raw = value["doubleValue"]
        try:
            number = float(raw)
        except (TypeError, ValueError):
            raise BadSpan(f"'{field}.doubleValue' must be a number, found {quote(raw)}") from None
        if math.isfinite(number):
            return number
        return "NaN" if number != number else ("Infinity" if number > 0 else "-Infinity")  # see the module doc
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        values = _values(value["arrayValue"], f"{field}.arrayValue")
        return [any_value(v, f"{field}.arrayValue.values[{i}]") for i, v in enumerate(values)]
    if "kvlistValue" in value:
        return otlp_attributes(
            _values(value["kvlistValue"], f"{field}.kvlistValue"), f"{field}.kvlistValue.values"
        )
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _values(holder: Any, field: str) -> list:
    """The ``values`` of an ``ArrayValue`` / ``KeyValueList``; a bare list is taken as the values (the form
    opentelemetry-proto's own ``examples/events.json`` writes)."""
    if holder is None:
        return []
    if isinstance(holder, list):
        return holder
    if not isinstance(holder, dict):
        raise BadSpan(f"'{field}' must be an object with 'values', found {type_name(holder)}")
    return as_list(holder.get("values", []), f"{field}.values")


def type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def otlp_id(value: str, size: int) -> str:
    """Lower-case hex for an OTLP id written in hex (the OTLP JSON rule) or in base64 (protobuf's mapping)."""
    if (_HEX32 if size == 16 else _HEX16).fullmatch(value):
        return value.lower()
    if value and len(value) == 4 * ((size + 2) // 3):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return value
        if len(raw) == size:
            return raw.hex()
    return value
