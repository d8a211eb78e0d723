"""What the receiver stores and what it refuses (issue 29, items 3 and 10): input that can never be stored gets
400 naming the field (or, beside valid records, a partial success naming it), never a retryable 503; an
attribute holding deeply nested JSON text is a string like any other and is stored.

The intake function (``ingest_request``) is driven directly over a real store; the HTTP answers (503 only for
a store that fails) go through a receiver on loopback.
"""

from __future__ import annotations

import http.client
import json

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from evalkit.spans.online import intake
from evalkit.spans.online.intake import SIGNALS, ingest_request
from evalkit.spans.online.server import serve
from evalkit.spans.online.store import Store

DEEP = '{"a":' * 3000 + "1" + "}" * 3000
PLACE = {"traces": "resourceSpans[0].scopeSpans[0].spans", "logs": "resourceLogs[0].scopeLogs[0].logRecords"}


@pytest.fixture
def store(tmp_path):
    opened = Store(tmp_path / "store")
    yield opened
    opened.close()


def _item(signal: str, n: int, **fields) -> dict:
    """A valid span (``traces``) or event record (``logs``) of session ``s``, with ``fields`` over it."""
    attributes = [{"key": "session.id", "value": {"stringValue": "s"}}]
    if signal == "traces":
        item = {
            "traceId": f"{n:032x}",
            "spanId": f"{n:016x}",
            "name": "invoke_agent",
            "startTimeUnixNano": "1700000000000000000",
            "endTimeUnixNano": "1700000001000000000",
            "attributes": attributes,
        }
    else:
        item = {
            "traceId": f"{n:032x}",
            "spanId": f"{n:016x}",
            "timeUnixNano": "1700000000000000000",
            "body": {"stringValue": f"answer {n}"},
            "attributes": attributes,
        }
    return item | fields


def _body(signal: str, items: list[dict]) -> bytes:
    if signal == "traces":
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": items}]}]}).encode()
    return json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": items}]}]}).encode()


def _ingest(store: Store, signal: str, body: bytes, ctype: str = "application/json") -> tuple[int, bytes]:
    status, payload, _ = ingest_request(
        store, body, ctype, "", max_body=1 << 22, sampling=100, signal=SIGNALS[signal]
    )
    return status, payload


def _stored(store: Store, signal: str) -> list[dict]:
    table = "spans" if signal == "traces" else "records"
    with store.lock:
        return [json.loads(row[0]) for row in store.db.execute(f"SELECT document FROM {table}")]


@pytest.mark.parametrize("signal", ["traces", "logs"])
def test_an_attribute_of_json_text_nested_3000_deep_is_stored_as_the_string_it_is(store, signal):
    # Read as OpenInference's session metadata, it raised RecursionError: a 503 the exporter retried forever.
    metadata = [{"key": "metadata", "value": {"stringValue": DEEP}}]
    good = _item(signal, 2)
    assert _ingest(store, signal, _body(signal, [_item(signal, 1, attributes=metadata), good])) == (
        200,
        b"{}",
    )
    stored = _stored(store, signal)
    assert len(stored) == 2 and stored[0]["attributes"] == {"metadata": DEEP}


HOSTILE = [
    (
        {"traceId": "zz" * 16},
        "'traceId' must be 32 hex characters (OTLP's 16-byte id), found '" + "z" * 32 + "'",
    ),
    (
        {"spanId": "a" * 5000},
        "'spanId' must be 16 hex characters (OTLP's 8-byte id), found '" + "a" * 59 + "'…(5,000 characters)",
    ),
    ({"spanId": "abc"}, "'spanId' must be 16 hex characters (OTLP's 8-byte id), found 'abc' (3 characters)"),
    (
        {"traceId": "0" * 40},
        "'traceId' must be 32 hex characters (OTLP's 16-byte id), found '" + "0" * 40 + "' (40 characters)",
    ),
]
TIMES = {"traces": "startTimeUnixNano", "logs": "timeUnixNano"}
NUMBERS = [
    (
        {"intValue": "9" * 4000},
        "'attributes.x' is an integer of 4,000 digits, beyond OTLP's 64 bits (-2^63 to 2^64-1); send the value "
        "as a string",
    ),
    ({"intValue": str(2**64)}, "'attributes.x' is an integer of 20 digits, beyond OTLP's 64 bits"),
    ({"intValue": str(-(2**63) - 1)}, "'attributes.x' is an integer of 19 digits, beyond OTLP's 64 bits"),
]


def _refused(store, signal, item) -> str:
    status, payload = _ingest(store, signal, _body(signal, [item]))
    assert status == 400, payload
    message = json.loads(payload)["message"]
    assert _stored(store, signal) == []
    return message


@pytest.mark.parametrize("signal", ["traces", "logs"])
@pytest.mark.parametrize(("fields", "problem"), HOSTILE)
def test_ids_that_are_not_hex_of_otlp_lengths_are_refused_with_400_naming_the_field(
    store, signal, fields, problem
):
    message = _refused(store, signal, _item(signal, 1, **fields))
    item = "span" if signal == "traces" else "event record"
    assert message == f"no valid {item}: request: {PLACE[signal]}[0]: {problem}"


@pytest.mark.parametrize("signal", ["traces", "logs"])
@pytest.mark.parametrize(
    ("time", "shown"),
    [
        (-1, "'-1'"),
        (str(2**64), "'18446744073709551616'"),
        (2**64, "'18446744073709551616'"),
        ("9" * 4000, "'" + "9" * 59 + "'…(4,000 characters)"),
    ],
)
def test_times_outside_uint64_are_refused_with_400_naming_the_field(store, signal, time, shown):
    field = TIMES[signal]
    times = {field: time} | ({"endTimeUnixNano": time} if signal == "traces" else {})
    message = _refused(store, signal, _item(signal, 1, **times))
    assert message.endswith(
        f"[0]: '{field}' must be from 0 to 2^64-1 nanoseconds since the epoch (OTLP's fixed64), found {shown}"
    )


@pytest.mark.parametrize("signal", ["traces", "logs"])
@pytest.mark.parametrize(("value", "problem"), NUMBERS)
def test_numbers_that_are_not_finite_or_past_64_bits_are_refused_with_400_naming_the_field(
    store, signal, value, problem
):
    attributes = [{"key": "x", "value": value}, {"key": "session.id", "value": {"stringValue": "s"}}]
    assert problem in _refused(store, signal, _item(signal, 1, attributes=attributes))


@pytest.mark.parametrize("signal", ["traces", "logs"])
def test_nan_and_infinite_doubles_are_stored_as_otlp_json_strings(store, signal):
    values = {"nan": "NaN", "inf": "Infinity", "minus": "-Infinity", "over": "1e999"}
    attributes = [{"key": k, "value": {"doubleValue": v}} for k, v in values.items()]
    assert _ingest(store, signal, _body(signal, [_item(signal, 1, attributes=attributes)])) == (200, b"{}")
    (stored,) = _stored(store, signal)
    assert stored["attributes"] == {"nan": "NaN", "inf": "Infinity", "minus": "-Infinity", "over": "Infinity"}


def test_a_double_value_written_as_a_400_digit_integer_is_refused_not_a_traceback(store):
    body = _body("traces", [_item("traces", 1, attributes=[{"key": "x", "value": {"doubleValue": 1}}])])
    body = body.replace(b'"doubleValue": 1', b'"doubleValue": 1' + b"0" * 400)  # float() raised OverflowError
    status, payload = _ingest(store, "traces", body)
    assert (
        status == 400 and "'attributes[0].value.doubleValue' must be a number, found 1000" in payload.decode()
    )


@pytest.mark.parametrize("signal", ["traces", "logs"])
def test_bad_records_beside_good_ones_are_a_partial_success_naming_them(store, signal):
    items = [
        _item(signal, 1),
        _item(signal, 2, traceId="not hex"),
        _item(signal, 3),
        _item(signal, 4, spanId=""),
    ]
    status, payload = _ingest(store, signal, _body(signal, items))
    assert status == 200
    partial = json.loads(payload)["partialSuccess"]
    rejected = "rejectedSpans" if signal == "traces" else "rejectedLogRecords"
    assert partial[rejected] == ("2" if signal == "traces" else "1")
    assert f"request: {PLACE[signal]}[1]: 'traceId' must be 32 hex characters" in partial["errorMessage"]
    kept = [d["traceId"] for d in _stored(store, signal)]
    # a span needs its spanId; a record may leave it out (it joins by session.id)
    assert kept == ([f"{n:032x}" for n in (1, 3)] if signal == "traces" else [f"{n:032x}" for n in (1, 3, 4)])


def test_protobuf_ids_of_the_wrong_byte_length_are_refused_naming_the_field(store):
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"\x01" * 5, b"\x02" * 8, "invoke_agent"
    span.start_time_unix_nano = span.end_time_unix_nano = 1
    good = request.resource_spans[0].scope_spans[0].spans.add()
    good.trace_id, good.span_id, good.name = b"\x01" * 16, b"\x02" * 8, "invoke_agent"
    good.start_time_unix_nano = good.end_time_unix_nano = 1
    status, payload = _ingest(store, "traces", request.SerializeToString(), "application/x-protobuf")
    assert status == 200
    response = ExportTraceServiceResponse.FromString(payload)
    assert response.partial_success.rejected_spans == 1
    assert response.partial_success.error_message == (
        "request: resourceSpans[0].scopeSpans[0].spans[0]: 'traceId' must be 32 hex characters (OTLP's 16-byte "
        "id), found '0101010101' (10 characters)"
    )
    logs = ExportLogsServiceRequest()
    record = logs.resource_logs.add().scope_logs.add().log_records.add()
    record.trace_id, record.time_unix_nano = b"\x01" * 17, 1
    record2 = logs.resource_logs[0].scope_logs[0].log_records.add()
    record2.time_unix_nano, record2.body.double_value = 1, float("-inf")
    status, payload = _ingest(store, "logs", logs.SerializeToString(), "application/x-protobuf")
    assert status == 200
    response = ExportLogsServiceResponse.FromString(payload)
    assert response.partial_success.rejected_log_records == 1
    assert response.partial_success.error_message == (
        "request: resourceLogs[0].scopeLogs[0].logRecords[0]: 'traceId' must be 32 hex characters (OTLP's "
        "16-byte id), found '0101010101010101010101010101010101' (34 characters)"
    )
    assert [d["body"] for d in _stored(store, "logs")] == ["-Infinity"]


def test_an_exception_while_a_request_is_read_is_400_never_a_retryable_503(store, monkeypatch):
    def fails(*args):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(intake, "session_ids", fails)
    status, payload = _ingest(store, "traces", _body("traces", [_item("traces", 1)]))
    assert status == 400
    assert json.loads(payload)["message"] == (
        "the request cannot be read: RecursionError: maximum recursion depth exceeded"
    )


def test_only_a_store_that_fails_is_answered_503(tmp_path):
    server = serve(tmp_path / "store", port=0).start()
    try:
        with server.store.lock:  # a store whose connection is gone: sqlite3.ProgrammingError
            server.store.db.close()
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        body = _body("traces", [_item("traces", 1)])
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.status == 503 and response.read().startswith(b"cannot store the spans: ")
        connection.close()
    finally:
        server.stop()


@pytest.mark.parametrize("signal", ["traces", "logs"])
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("NaN", "NaN is not valid JSON"),
        ("9" * 5000, "5,000 digits"),
        ('"\\ud800"', "lone surrogate"),
        ("[" * 3000 + "]" * 3000, "nested more than 100 levels deep"),
    ],
)
def test_a_body_that_cannot_be_read_at_all_is_400_naming_why(store, signal, value, problem):
    item = json.dumps(_item(signal, 1, attributes=[{"key": "x", "value": {"doubleValue": 0}}]))
    body = _body(signal, []).replace(
        b"[]", item.replace('"doubleValue": 0', f'"doubleValue": {value}').join("[]").encode()
    )
    status, payload = _ingest(store, signal, body)
    assert status == 400 and problem in json.loads(payload)["message"]
    assert _stored(store, signal) == []
