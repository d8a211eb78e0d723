"""The HTTP intake of the online receiver: ``POST /v1/traces`` as OTLP/HTTP exporters send it.

The body is protobuf (``application/x-protobuf``) or JSON (``application/json``), optionally gzip-compressed;
the answer is what a collector gives: 200 with an empty ``ExportTraceServiceResponse`` in the request's
encoding, or a ``partialSuccess`` naming rejected spans. A malformed body gets 400 (so does JSON nested too
deeply, with a duplicate key or a lone surrogate: retrying cannot help), an unknown encoding or content type
415, a body over the limit (before or after decompression) 413, a missing ``Content-Length``
411, a missing or wrong ``Authorization: Bearer`` token (when one is set) 401, a store that fails 503 (the
exporter retries). Spans are converted by ``otlp_json``, as span files are, so online and offline evaluators
see identical span documents. Storing the spans is the server's ``ingest`` (see ``online``); the HTTP server
that calls it (routes, keep-alive, idle timeout, TLS) is ``receiver``.
"""

from __future__ import annotations

import json
import logging
import zlib
from typing import TYPE_CHECKING

from evalkit.documents.json_input import JsonInputError, parse_json
from evalkit.spans.online.session_tracking import sampled, session_ids
from evalkit.spans.reading.otlp_json import read_otlp
from evalkit.spans.reading.otlp_protobuf import Unsupported, message_dict

if TYPE_CHECKING:
    from evalkit.spans.online.store import Store

log = logging.getLogger("evalkit.spans.online")

#: Largest accepted request body (after decompression), in bytes.
MAX_BODY = 4 * 1024 * 1024

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class BadRequest(Exception):
    """The request cannot be accepted: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def decode_request(body: bytes, content_type: str, encoding: str, limit: int = MAX_BODY) -> tuple[list, list]:
    """An OTLP/HTTP trace export body -> ``(span documents, problems)``; raises ``BadRequest``."""
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
        request = protobuf_dict(body)
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
        raise BadRequest(400, "the body is not an ExportTraceServiceRequest (expected a JSON object)")
    if not request:
        return [], []
    if "resourceSpans" not in request:
        raise BadRequest(400, "the body is not an ExportTraceServiceRequest ('resourceSpans' is missing)")
    docs: list[dict] = []
    wheres: list = []
    problems: list[str] = []
    read_otlp(request, ("request", ""), docs, wheres, problems)
    return docs, problems


def protobuf_dict(body: bytes) -> dict:
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise BadRequest(400, f"the body is not a valid ExportTraceServiceRequest protobuf: {exc}") from None
    try:
        return message_dict(message)  # MessageToDict's result, faster
    except Unsupported:
        return MessageToDict(message, preserving_proto_field_name=False)


def _response(kind: str, rejected: int, message: str) -> tuple[bytes, str]:
    """An ``ExportTraceServiceResponse`` in the request's encoding (empty unless spans were rejected)."""
    if kind == "application/x-protobuf":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        response = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
        return response.SerializeToString(), kind
    body = {"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": message}} if rejected else {}
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
) -> tuple[int, bytes, str]:
    """Decode, store (committed) and answer one export request: ``(status, body, content type)``."""
    kind = (content_type or "").split(";")[0].strip().lower()
    try:
        docs, problems = decode_request(body, content_type, encoding, max_body)
    except BadRequest as exc:
        return exc.status, _error_body(kind, str(exc)), _error_type(kind)
    if docs:
        sessions = session_ids(docs, store, session_attribute)
        added = store.add_spans(docs, sessions, lambda s: sampled(s, sampling))
        log.debug("stored %d new span(s) of %d", added, len(docs))
    if problems and not docs:
        return 400, _error_body(kind, "no valid span: " + "; ".join(problems[:5])), _error_type(kind)
    message = "; ".join(problems[:5]) + (f"; ... and {len(problems) - 5} more" if len(problems) > 5 else "")
    payload, ctype = _response(kind, len(problems), message)
    return 200, payload, ctype
