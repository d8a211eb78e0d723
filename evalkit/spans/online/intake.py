"""The HTTP intake of the online receiver: ``POST /v1/traces`` and ``POST /v1/logs`` as OTLP/HTTP exporters send them.

Two signals, one path: ``traces`` (``ExportTraceServiceRequest``: spans) and ``logs``
(``ExportLogsServiceRequest``: event records, the OTel log records that carry a span's prompts and answers
in their body, as ADOT and the current GenAI conventions send them; see ``reading/event_record``). The body
is protobuf (``application/x-protobuf``) or JSON (``application/json``), optionally gzip-compressed; the
answer is what a collector gives: 200 with an empty ``Export{Trace,Logs}ServiceResponse`` in the request's
encoding, or a ``partialSuccess`` naming rejected spans (``rejectedSpans``) or records
(``rejectedLogRecords``).

Which answer, decided once for both signals:

* a span or record that is individually bad (a field missing or of the wrong type, or ruled out by OTLP:
  ids not hex of OTLP's lengths, times outside uint64, integers beyond 64 bits; see ``intake_rules``) is
  **rejected alone**: the others of the request are stored and the answer is 200 with ``partialSuccess``
  counting the rejected ones, its ``errorMessage`` naming the first five by place and field (OTLP: a partial
  success is not retried, and the valid data is not lost with the bad);
* a request with **nothing storable** (every item rejected) gets 400 with that message, and so does a body
  that cannot be read at all: not gzip, not protobuf, not JSON, JSON nested too deeply, with a duplicate key,
  a lone surrogate, ``NaN`` or an integer of more than 4,300 digits, not an export request of the signal.
  400 is final: the exporter drops the request rather than retrying what can never succeed. An attribute
  holding JSON text, however deep, is just a string here and is stored;
* an unknown encoding or content type 415, a body over the limit (before or after decompression) 413, a
  missing ``Content-Length`` 411, a missing or wrong ``Authorization: Bearer`` token (when one is set) 401;
* **503 only when the store fails** (``sqlite3.Error``, ``OSError``: a full disk, a lock): the exporter
  retries, and the retry can succeed. Any other exception while a request is read is answered 400 with its
  name (and logged), never 503.

Spans are converted by ``otlp_json`` and records by ``event_record.read_otlp_logs``, as span files are, so
online and offline evaluators see identical documents. Storing them is the server's ``ingest`` (see
``online``; records join their session by ``session_tracking.record_session_ids``); the HTTP server that calls
it (routes, keep-alive, idle timeout, TLS) is ``receiver``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import zlib
from typing import TYPE_CHECKING

from evalkit.documents.json_input import JsonInputError, parse_json
from evalkit.spans.online.intake_rules import storable
from evalkit.spans.online.session_tracking import record_session_ids, sampled, session_ids
from evalkit.spans.reading.event_record import read_otlp_logs
from evalkit.spans.reading.otlp_json import read_otlp
from evalkit.spans.reading.otlp_protobuf import Unsupported, message_dict

if TYPE_CHECKING:
    from evalkit.spans.online.store import Store

log = logging.getLogger("evalkit.spans.online")

#: Largest accepted request body (after decompression), in bytes.
MAX_BODY = 4 * 1024 * 1024
#: What the store raises when it cannot read or write: answered 503 (the exporter retries); anything else
#: raised while a request is read is answered 400 (a retry would fail the same way).
_STORE_FAILURES = (sqlite3.Error, OSError)

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Signal:
    """One OTLP signal the intake accepts: its request's top-level key, protobuf messages and words."""

    def __init__(
        self, name: str, key: str, module: str, request: str, response: str, rejected: str, item: str
    ):
        self.name, self.key, self.module = name, key, module
        self.request, self.response = request, response
        self.rejected = rejected  # partialSuccess's count field (JSON name)
        self.item = item  # what one item is called in messages: "span", "event record"

    def message(self, name: str):
        """The protobuf message class ``name`` of this signal's collector service (imported on first use)."""
        import importlib

        return getattr(importlib.import_module(self.module), name)


TRACES = Signal(
    "traces",
    "resourceSpans",
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2",
    "ExportTraceServiceRequest",
    "ExportTraceServiceResponse",
    "rejectedSpans",
    "span",
)
LOGS = Signal(
    "logs",
    "resourceLogs",
    "opentelemetry.proto.collector.logs.v1.logs_service_pb2",
    "ExportLogsServiceRequest",
    "ExportLogsServiceResponse",
    "rejectedLogRecords",
    "event record",
)
SIGNALS = {"traces": TRACES, "logs": LOGS}


class BadRequest(Exception):
    """The request cannot be accepted: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def decode_request(
    body: bytes, content_type: str, encoding: str, limit: int = MAX_BODY, signal: Signal = TRACES
) -> tuple[list, list]:
    """An OTLP/HTTP export body of ``signal`` -> ``(span or record documents, problems)``; raises
    ``BadRequest``."""
    encoding = (encoding or "identity").strip().lower()
    if encoding == "gzip":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            body = inflater.decompress(body, limit + 1)
        except zlib.error as exc:
            raise BadRequest(400, f"the body is not valid gzip: {exc}") from None
        if len(body) > limit or inflater.unconsumed_tail:
            raise BadRequest(413, f"the decompressed body is larger than {limit} bytes")
    elif encoding not in ("identity", ""):
        raise BadRequest(415, f"Content-Encoding {encoding!r} is not supported (use gzip or none)")
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind == "application/x-protobuf":
        request = protobuf_dict(body, signal)
    elif kind == "application/json":
        try:
            request = parse_json(body)
        except JsonInputError as exc:  # malformed, too deep, duplicate keys: retrying cannot help, so 400
            reason = "is not valid JSON" if exc.syntax else "is refused"
            raise BadRequest(400, f"the body {reason}: {exc}") from None
    else:
        raise BadRequest(
            415, f"Content-Type {kind or 'none'!r}: use application/x-protobuf or application/json"
        )
    if not isinstance(request, dict):
        raise BadRequest(400, f"the body is not an {signal.request} (expected a JSON object)")
    if not request:
        return [], []
    if signal.key not in request:
        raise BadRequest(400, f"the body is not an {signal.request} ({signal.key!r} is missing)")
    docs: list[dict] = []
    wheres: list = []
    problems: list[str] = []
    read = read_otlp if signal is TRACES else read_otlp_logs
    read(request, ("request", ""), docs, wheres, problems)
    docs, refused = storable(docs, wheres, record=signal is LOGS)
    return docs, problems + refused


def protobuf_dict(body: bytes, signal: Signal = TRACES) -> dict:
    """A protobuf export request of ``signal`` as its OTLP JSON dict (``message_dict``, else
    ``MessageToDict``); ``BadRequest`` (400) when the bytes are not such a message."""
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError

    message = signal.message(signal.request)()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise BadRequest(400, f"the body is not a valid {signal.request} protobuf: {exc}") from None
    try:
        return message_dict(message)  # MessageToDict's result, faster
    except Unsupported:
        return MessageToDict(message, preserving_proto_field_name=False)


def _response(kind: str, rejected: int, message: str, signal: Signal = TRACES) -> tuple[bytes, str]:
    """An ``Export{Trace,Logs}ServiceResponse`` in the request's encoding (empty unless items were rejected)."""
    if kind == "application/x-protobuf":
        response = signal.message(signal.response)()
        if rejected:
            if signal is TRACES:
                response.partial_success.rejected_spans = rejected
            else:
                response.partial_success.rejected_log_records = rejected
            response.partial_success.error_message = message
        return response.SerializeToString(), kind
    body = {"partialSuccess": {signal.rejected: str(rejected), "errorMessage": message}} if rejected else {}
    return _dumps(body).encode(), "application/json"


def _error_type(kind: str) -> str:
    return "application/json" if kind == "application/json" else "text/plain; charset=utf-8"


def _error_body(kind: str, message: str) -> bytes:
    if kind == "application/json":
        return _dumps({"code": 3, "message": message}).encode()
    return message.encode()


def ingest_request(
    store: Store,
    body: bytes,
    content_type: str,
    encoding: str,
    *,
    max_body: int,
    sampling: float,
    session_attribute: str | None = None,
    signal: Signal = TRACES,
) -> tuple[int, bytes, str]:
    """Decode, store (committed) and answer one export request of ``signal``: ``(status, body, content type)``."""
    kind = (content_type or "").split(";")[0].strip().lower()
    try:
        docs, problems = decode_request(body, content_type, encoding, max_body, signal)
        sessions = (session_ids if signal is TRACES else record_session_ids)(docs, store, session_attribute)
    except BadRequest as exc:
        return exc.status, _error_body(kind, str(exc)), _error_type(kind)
    except _STORE_FAILURES:
        raise  # the store could not be read: 503, the exporter retries
    except Exception as exc:  # a request evalkit cannot read is one a retry cannot store: never a 503
        log.exception("cannot read a %s request", signal.name)
        message = f"the request cannot be read: {type(exc).__name__}: {exc}"[:500]
        return 400, _error_body(kind, message), _error_type(kind)
    if docs:

        def is_sampled(session: str) -> bool:
            return sampled(session, sampling)

        add = store.add_spans if signal is TRACES else store.add_records
        try:
            added = add(docs, sessions, is_sampled)
        except _STORE_FAILURES:
            raise
        except Exception as exc:  # not the store: the documents themselves, which a retry cannot change
            log.exception("cannot store a %s request", signal.name)
            message = f"the request cannot be stored: {type(exc).__name__}: {exc}"[:500]
            return 400, _error_body(kind, message), _error_type(kind)
        log.debug("stored %d new %s(s) of %d", added, signal.item, len(docs))
    if problems and not docs:
        message = f"no valid {signal.item}: " + "; ".join(problems[:5])
        return 400, _error_body(kind, message), _error_type(kind)
    message = "; ".join(problems[:5]) + (f"; ... and {len(problems) - 5} more" if len(problems) > 5 else "")
    payload, ctype = _response(kind, len(problems), message, signal)
    return 200, payload, ctype
