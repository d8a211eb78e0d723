"""What the online receiver refuses in a span or event record before storing it: what OTLP itself rules out.

``otlp_json`` and ``event_record`` read any span and record they can make sense of (span files hold ids such
as ``t-1``); the receiver stores only what an OTLP exporter can send, so a record that could never have been
valid OTLP is refused, named, at the door rather than kept to break the evaluation later:

* **ids**: a ``traceId`` is 32 hex characters and a ``spanId`` (``parentSpanId``, a link's ``spanId``) 16,
  OTLP's 16 and 8 bytes. OTLP/JSON writes them in hex; protobuf carries the bytes, which ``otlp_protobuf`` turns into
  hex, so bytes of another length come out at another length and are refused the same way (base64, protobuf's
  own JSON mapping, is turned into hex by the reader first). A log record may leave its ids out (it then joins
  a session by its ``session.id``);
* **times** (``startTimeUnixNano``, ``endTimeUnixNano``, an event's ``timeUnixNano``, a record's
  ``timeUnixNano`` and ``observedTimeUnixNano``): nanoseconds from 0 to 2^64-1, OTLP's ``fixed64``;
* **numbers**, anywhere in the document (attributes, a record's body, events, resource, scope): integers
  within 64 bits (-2^63 to 2^64-1), as protobuf carries them (an ``intValue`` of 4,000 digits is no OTLP
  value), and floats finite. A ``doubleValue`` of NaN or an infinity is valid OTLP: the span reader keeps it
  as OTLP/JSON's own string (``"NaN"``, ``"Infinity"``, ``"-Infinity"``, ``span_document``), so it is stored
  as sent; a float NaN reaching this check from elsewhere is refused, as no store row or export could hold
  it (NaN is not JSON).

Strings are never refused for what they hold: an attribute with JSON text nested 3,000 deep is valid OTLP and
is stored as it came; what parses it later (an evaluator, a judge) meets it there, and the evaluation loop gives
that session an error result (``session_evaluation``).

``storable`` splits a request's documents into those kept and one problem per refused one (its place in the
request and the field), which ``intake`` answers with a partial success, or 400 when none is left. Imports only
``evalkit.documents.json_input`` (to quote a value) and the standard library.
"""

from __future__ import annotations

import math
import re
from typing import Any

from evalkit.documents.json_input import quote

#: OTLP's ``fixed64`` nanoseconds and the range of its 64-bit integers (``int64`` and ``uint64``).
UINT64_MAX = 2**64 - 1
INT64_MIN = -(2**63)

_HEX = {32: re.compile(r"[0-9a-f]{32}"), 16: re.compile(r"[0-9a-f]{16}")}
_FLOATS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_SPAN_TIMES = ("startTimeUnixNano", "endTimeUnixNano")
_RECORD_TIMES = ("timeUnixNano", "observedTimeUnixNano")


class Refused(ValueError):
    """A document the receiver does not store: the message names the field and what OTLP allows."""


def storable(docs: list[dict], wheres: list, record: bool) -> tuple[list[dict], list[str]]:
    """``(documents kept, problems)``: each refused document gives one problem, ``PLACE: FIELD ...``, where
    ``wheres`` holds each document's ``(label, place)`` in the request. ``record``: event records (their ids may
    be absent), else spans."""
    kept, problems = [], []
    for doc, (label, place) in zip(docs, wheres, strict=True):
        try:
            check(doc, record)
        except Refused as exc:
            problems.append(f"{label}: {place}: {exc}" if place else f"{label}: {exc}")
            continue
        kept.append(doc)
    return kept, problems


def check(doc: dict, record: bool) -> None:
    """Raise ``Refused`` naming the first field of a span (``record`` False) or event record OTLP rules out."""
    if record:
        for key, size in (("traceId", 32), ("spanId", 16)):
            if key in doc:
                _id(doc[key], key, size)
        for key in _RECORD_TIMES:
            if key in doc:
                _time(doc[key], key)
    else:
        _id(doc.get("traceId"), "traceId", 32)
        _id(doc.get("spanId"), "spanId", 16)
        if "parentSpanId" in doc:
            _id(doc["parentSpanId"], "parentSpanId", 16)
        for key in _SPAN_TIMES:
            _time(doc.get(key), key)
        for i, event in enumerate(doc.get("events") or ()):
            if isinstance(event, dict) and "timeUnixNano" in event:
                _time(event["timeUnixNano"], f"events[{i}].timeUnixNano")
        for i, link in enumerate(doc.get("links") or ()):
            if isinstance(link, dict):
                for key, size in (("traceId", 32), ("spanId", 16)):
                    if link.get(key) not in (None, ""):
                        _id(link[key], f"links[{i}].{key}", size)
    _numbers(doc)


def _id(value: Any, field: str, size: int) -> None:
    if not (isinstance(value, str) and _HEX[size].fullmatch(value)):
        raise Refused(
            f"'{field}' must be {size} hex characters (OTLP's {size // 2}-byte id), found {quote(value)}"
            + (
                f" ({len(value)} characters)"
                if isinstance(value, str) and len(value) != size and len(value) <= 60
                else ""
            )
        )


def _time(value: Any, field: str) -> None:
    if type(value) is not int or not 0 <= value <= UINT64_MAX:
        shown = quote(value) if isinstance(value, str) else quote(str(value))  # the span reader's wording
        raise Refused(
            f"'{field}' must be from 0 to 2^64-1 nanoseconds since the epoch (OTLP's fixed64), found {shown}"
        )


def _numbers(doc: dict) -> None:
    """Every float finite and every int within 64 bits. A fast pass without paths first (most documents hold
    no bad number, and building a path for every value doubled the decoding time of a request); the path of
    the first bad one is found only when there is one."""
    if _all_numbers_fit(doc):
        return
    stack: list[tuple[Any, str]] = [(doc, "")]  # walked without recursion: no depth limit to meet
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            items = [(v, f"{path}.{_key(k)}" if path else _key(k)) for k, v in value.items()]
            stack.extend(reversed(items))  # popped in document order: the first bad field is named
        elif isinstance(value, list):
            stack.extend(reversed([(v, f"{path}[{i}]") for i, v in enumerate(value)]))
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise Refused(
                    f"'{path}' is {_FLOATS.get(str(value))}: only finite numbers are stored (NaN and Infinity "
                    "are not JSON); send the value as a string"
                )
        elif isinstance(value, int) and not isinstance(value, bool):
            if not INT64_MIN <= value <= UINT64_MAX:
                raise Refused(
                    f"'{path}' is an integer of {_digits(value)} digits, beyond OTLP's 64 bits "
                    "(-2^63 to 2^64-1); send the value as a string"
                )


def _all_numbers_fit(doc: dict) -> bool:
    """Whether every number in ``doc`` is storable (see ``_numbers``), by exact type: the documents the readers
    make hold only dicts, lists, strings, bools, ints, floats and None."""
    stack: list = [doc]
    while stack:
        container = stack.pop()
        for value in container.values() if type(container) is dict else container:
            kind = type(value)
            if kind is str or kind is bool or value is None:
                continue
            if kind is dict or kind is list:
                stack.append(value)
            elif kind is float:
                if value - value != 0.0:  # NaN and the infinities (inf - inf is NaN)
                    return False
            elif kind is int:
                if not INT64_MIN <= value <= UINT64_MAX:
                    return False
            elif isinstance(value, (dict, list, float, int)):  # a subclass: the careful walk decides
                return False
    return True


def _key(key: str) -> str:
    """An attribute key as it is shown in a field path: as it is, or quoted and cut when it is long."""
    return key if len(key) <= 60 and key.isprintable() else quote(key)


def _digits(value: int) -> str:
    """How many decimal digits ``value`` has, without ``str()`` (which refuses ints over 4,300 digits)."""
    digits = max(1, math.ceil(abs(value).bit_length() * math.log10(2)))
    if digits > 1 and 10 ** (digits - 1) > abs(value):
        digits -= 1
    return f"{digits:,}"
