"""Property tests of the receiver's intake (issue 29): generated requests of spans and event records, OTLP/JSON
and protobuf (built with opentelemetry-proto's own classes), mixing valid items with hostile ones (ids of the
wrong length or not hex, negative or huge times, NaN and Infinity, integers of thousands of digits, JSON text
nested 3,000 deep, long strings).

Every request must get a clean answer: 400 or a partial success naming each refused item's place and a field
that was made hostile, or 200 with every item stored as sent (a NaN or infinite double in OTLP/JSON's own
notation, ``"NaN"``, ``"Infinity"``: a float NaN is not JSON); never a 5xx, never an exception out of
``ingest_request``, never the catch-all ``the request cannot be read``. The oracle (which items are valid)
is written here from OTLP's rules, independently of ``intake_rules``. One last test sends hostile spans and
records with the real OpenTelemetry SDK exporters over loopback HTTP.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.spans.online.intake import SIGNALS, ingest_request
from evalkit.spans.online.store import Store

UINT64_MAX = 2**64 - 1
INT64_MIN = -(2**63)
DEEP = "[" * 3000 + "]" * 3000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000
SETTINGS = settings(
    max_examples=150,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: Text without the characters of key shapes the store masks (``sk-``, ``user:pw@``, ``?key=``): what is stored
#: must equal what was sent, and masking is the redactor's business, tested there.
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="-/=@"), max_size=40)
STRINGS = st.one_of(TEXT, st.sampled_from([DEEP, DEEP_OBJECT, "x" * 100_000, "", "NaN", "1e999"]))


@dataclass
class Item:
    """One generated span or record: what is sent, what should be stored, and what was made hostile."""

    sent: dict
    expected: dict  # the stored document's fields checked (when valid)
    hostile: set = field(default_factory=set)  # field kinds made hostile: "id", "time", "attr:KEY"


# --- values -------------------------------------------------------------------------------------------------


def _hex_id(size: int):
    return st.tuples(st.binary(min_size=size, max_size=size), st.booleans()).map(
        lambda pair: pair[0].hex().upper() if pair[1] else pair[0].hex()
    )


def _bad_id(size: int):
    """Ids OTLP/JSON cannot carry: hex of other lengths, non-hex, 5,000 characters (never base64 with '=',
    which the reader would take as protobuf's JSON mapping)."""
    hexes = 2 * size
    return st.one_of(
        st.binary(min_size=1, max_size=40).map(bytes.hex).filter(lambda h: len(h) != hexes),
        st.text(
            st.characters(exclude_categories=("Cs",), exclude_characters="="), min_size=1, max_size=60
        ).filter(lambda t: not re.fullmatch(f"[0-9a-fA-F]{{{hexes}}}", t)),
        st.just("a" * 5000),
        st.just("g" * hexes),
    )


GOOD_TIME = st.integers(1, UINT64_MAX)
BAD_TIME = st.one_of(
    st.integers(max_value=-1),
    st.integers(min_value=UINT64_MAX + 1, max_value=10**400),
    st.integers(min_value=UINT64_MAX + 1, max_value=10**400).map(str),
    st.just("9" * 4000),
    st.just("9" * 5000),
    st.sampled_from(["-5", "1e3", "soon", "²", " 5", "0x10", "1.5"]),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
)


#: A doubleValue OTLP/JSON writes as a string, and what is stored for it: OTLP/JSON's own notation of a
#: non-finite double (``span_document``), since a float NaN is not JSON.
NON_FINITE = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "1e999": "Infinity",
    "-1e999": "-Infinity",
}


def _attribute():
    """``(AnyValue JSON, plain value stored, hostile)``."""
    good = st.one_of(
        STRINGS.map(lambda s: ({"stringValue": s}, s)),
        st.integers(INT64_MIN, UINT64_MAX).map(lambda n: ({"intValue": str(n)}, n)),
        st.floats(allow_nan=False, allow_infinity=False).map(lambda f: ({"doubleValue": f}, f)),
        st.sampled_from(sorted(NON_FINITE)).map(lambda s: ({"doubleValue": s}, NON_FINITE[s])),
        st.booleans().map(lambda b: ({"boolValue": b}, b)),
        st.lists(st.integers(INT64_MIN, 2**63 - 1), max_size=3).map(
            lambda ns: ({"arrayValue": {"values": [{"intValue": str(n)} for n in ns]}}, ns)
        ),
        st.just(({"arrayValue": {"values": [{"stringValue": "ok"}, {"doubleValue": "NaN"}]}}, ["ok", "NaN"])),
    ).map(lambda pair: (*pair, False))
    bad = st.one_of(
        st.one_of(st.integers(min_value=UINT64_MAX + 1), st.integers(max_value=INT64_MIN - 1)).map(
            lambda n: {"intValue": str(n)}
        ),
        st.integers(21, 4000).map(lambda d: {"intValue": "9" * d}),
        st.just({"intValue": "9" * 5000}),
        st.just({"doubleValue": 10**400}),
        st.just({"arrayValue": {"values": [{"stringValue": "ok"}, {"intValue": str(2**64)}]}}),
    ).map(lambda value: (value, None, True))
    return st.one_of(good, good, bad)


# --- items --------------------------------------------------------------------------------------------------


@st.composite
def _item(draw, signal: str, n: int) -> Item:
    hostile: set = set()
    ids = {}
    for key, size in (("traceId", 16), ("spanId", 8)):
        if draw(st.integers(0, 5)) == 0:
            ids[key] = draw(_bad_id(size))
            hostile.add("id")
        elif signal == "logs" and draw(st.integers(0, 5)) == 0:
            ids[key] = ""  # a record may leave its ids out
        else:
            ids[key] = draw(_hex_id(size))
    if signal == "traces":  # unique ids: a repeated span is ignored as an exporter's retry
        ids["spanId"] = ids["spanId"] if "id" in hostile else f"{n:016x}"
    attributes = [{"key": "session.id", "value": {"stringValue": "s"}}]
    plain = {"session.id": "s", "n": n}
    attributes.append({"key": "n", "value": {"intValue": str(n)}})  # records are unique by content
    for k in range(draw(st.integers(0, 3))):
        value, stored, bad = draw(_attribute())
        key = draw(
            st.sampled_from([f"k{k}", "metadata", "gen_ai.output.messages"]).filter(lambda x: x not in plain)
        )
        attributes.append({"key": key, "value": value})
        plain[key] = stored
        if bad:
            hostile.add(f"attr:{key}")
    if signal == "traces":
        start, end = sorted([draw(GOOD_TIME), draw(GOOD_TIME)])
        times = {"startTimeUnixNano": str(start), "endTimeUnixNano": str(end)}
        if draw(st.integers(0, 5)) == 0:
            times[draw(st.sampled_from(sorted(times)))] = draw(BAD_TIME)
            hostile.add("time")
        sent = {**ids, "name": "invoke_agent", **times, "attributes": attributes}
        expected = {"startTimeUnixNano": start, "endTimeUnixNano": end}
    else:
        time = draw(GOOD_TIME)
        times = {"timeUnixNano": str(time)}
        if draw(st.integers(0, 5)) == 0:
            times["timeUnixNano"] = draw(BAD_TIME)
            hostile.add("time")
        sent = {**ids, **times, "body": {"stringValue": draw(STRINGS)}, "attributes": attributes}
        expected = {"timeUnixNano": time, "body": sent["body"]["stringValue"]}
    for key, value in ids.items():
        if value:
            expected[key] = value.lower()
    expected["attributes"] = plain
    return Item(sent, expected, hostile)


def _items(signal: str):
    return st.integers(1, 4).flatmap(lambda count: st.tuples(*(_item(signal, n + 1) for n in range(count))))


# --- the check ----------------------------------------------------------------------------------------------

PLACE = re.compile(
    r"request: resource(?:Spans|Logs)\[0\]\.scope(?:Spans|Logs)\[0\]\.(?:spans|logRecords)\[(\d+)\]: '([^']+)'"
)
TIME_FIELDS = {"startTimeUnixNano", "endTimeUnixNano", "timeUnixNano", "observedTimeUnixNano"}


def _names_a_hostile_field(item: Item, name: str) -> bool:
    if name in ("traceId", "spanId"):
        return "id" in item.hostile
    if name in TIME_FIELDS or name.endswith("timeUnixNano"):
        return "time" in item.hostile
    keys = [a["key"] for a in item.sent["attributes"]]
    for kind in item.hostile:
        if kind.startswith("attr:"):
            key = kind[5:]
            index = keys.index(key)
            if name == f"attributes.{key}" or name.startswith(
                (f"attributes.{key}[", f"attributes[{index}].")
            ):
                return True
    return False


def _stored(store: Store, signal: str) -> list[dict]:
    table = "spans" if signal == "traces" else "records"
    with store.lock:
        return [
            json.loads(row[0]) for row in store.db.execute(f"SELECT document FROM {table} ORDER BY rowid")
        ]


def _same(a, b) -> bool:
    """Equal, floats compared bit for bit (-0.0 is not 0.0 in what is stored)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


_STORE: dict[str, Store] = {}


def _store() -> Store:
    """One store for every example (emptied before each): opening a store and committing with fsync for each
    of hundreds of examples would spend a minute waiting for the disk, which is not what is tested here."""
    store = _STORE.get("store")
    if store is None:
        store = _STORE["store"] = Store(tempfile.mkdtemp(prefix="evalkit-intake-properties-"))
        store.db.execute("PRAGMA synchronous=OFF")
    with store.lock:
        for table in ("spans", "records", "sessions"):
            store.db.execute(f"DELETE FROM {table}")
    return store


def teardown_module() -> None:
    store = _STORE.pop("store", None)
    if store is not None:
        store.close()
        shutil.rmtree(store.folder, ignore_errors=True)


def _check(signal: str, items: tuple[Item, ...], body: bytes, ctype: str) -> None:
    store = _store()
    status, payload, _ = ingest_request(
        store, body, ctype, "", max_body=1 << 24, sampling=100, signal=SIGNALS[signal]
    )
    stored = _stored(store, signal)
    bad = [i for i, item in enumerate(items) if item.hostile]
    good = [item for item in items if not item.hostile]
    assert status in (200, 400), (status, payload)
    if ctype == "application/json":
        answer = json.loads(payload) if payload else {}
        message = answer.get("message") or answer.get("partialSuccess", {}).get("errorMessage", "")
        rejected = int(answer.get("partialSuccess", {}).get(SIGNALS[signal].rejected, 0))
    else:
        answer = None
        message, rejected = _protobuf_answer(signal, status, payload)
    assert not message.startswith("the request cannot"), message  # never the catch-all
    if not good:
        assert status == 400 and stored == []
    else:
        assert status == 200 and rejected == len(bad), (message, [i.hostile for i in items])
    named = PLACE.findall(message)
    assert len(named) == min(len(bad), 5), message
    for index, name in named:
        assert int(index) in bad and _names_a_hostile_field(items[int(index)], name), (index, name, message)
    assert len(stored) == len(good)
    for item, doc in zip(good, stored):
        for key, value in item.expected.items():
            assert _same(doc.get(key), value), (key, doc.get(key), value)


def _protobuf_answer(signal: str, status: int, payload: bytes) -> tuple[str, int]:
    if status != 200:
        return payload.decode(), 0
    response = SIGNALS[signal].message(SIGNALS[signal].response).FromString(payload)
    if not response.HasField("partial_success"):
        return "", 0
    partial = response.partial_success
    count = partial.rejected_spans if signal == "traces" else partial.rejected_log_records
    return partial.error_message, count


def _json_body(signal: str, items) -> bytes:
    sent = [item.sent for item in items]
    if signal == "traces":
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": sent}]}]}).encode()
    return json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": sent}]}]}).encode()


@SETTINGS
@given(_items("traces"))
def test_json_spans_are_refused_by_field_or_stored_faithfully(items):
    _check("traces", items, _json_body("traces", items), "application/json")


@SETTINGS
@given(_items("logs"))
def test_json_records_are_refused_by_field_or_stored_faithfully(items):
    _check("logs", items, _json_body("logs", items), "application/json")


# --- protobuf, built with opentelemetry-proto's classes ---------------------------------------------------------


def _proto_value(target, plain) -> None:
    if isinstance(plain, bool):
        target.bool_value = plain
    elif isinstance(plain, int):
        target.int_value = plain
    elif isinstance(plain, float):
        target.double_value = plain
    else:
        target.string_value = plain


PROTO_VALUES = st.one_of(
    STRINGS.map(lambda s: (s, s)),
    st.integers(INT64_MIN, 2**63 - 1).map(lambda n: (n, n)),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: (f, f)),
    st.booleans().map(lambda b: (b, b)),
    st.sampled_from([(math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity")]),
)


@st.composite
def _proto_items(draw, signal: str):
    """``(request message, items)``: ids as bytes of any length up to 20 (OTLP's are 16 and 8), times fixed64,
    attribute values of every AnyValue kind a span carries, NaN and Infinity among the doubles."""
    if signal == "traces":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        request = ExportTraceServiceRequest()
        holder = request.resource_spans.add().scope_spans.add().spans
    else:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

        request = ExportLogsServiceRequest()
        holder = request.resource_logs.add().scope_logs.add().log_records
    items = []
    for n in range(1, draw(st.integers(1, 4)) + 1):
        hostile, expected = set(), {}
        message = holder.add()
        for key, attr, size in (("traceId", "trace_id", 16), ("spanId", "span_id", 8)):
            raw = draw(st.one_of(st.binary(min_size=size, max_size=size), st.binary(max_size=20)))
            if signal == "traces" and key == "spanId" and len(raw) == size:
                raw = n.to_bytes(8, "big")
            setattr(message, attr, raw)
            if raw and len(raw) != size or signal == "traces" and not raw:
                hostile.add("id")
            elif raw:
                expected[key] = raw.hex()
        plain = {"session.id": "s", "n": n}
        for key, value in plain.items():
            attribute = message.attributes.add()
            attribute.key = key
            _proto_value(attribute.value, value)
        for k in range(draw(st.integers(0, 3))):
            value, stored = draw(PROTO_VALUES)
            attribute = message.attributes.add()
            attribute.key = f"k{k}"
            _proto_value(attribute.value, value)
            plain[f"k{k}"] = stored
        if signal == "traces":
            message.name = "invoke_agent"
            message.start_time_unix_nano, message.end_time_unix_nano = sorted(
                [draw(GOOD_TIME), draw(GOOD_TIME)]
            )
            expected |= {
                "startTimeUnixNano": message.start_time_unix_nano,
                "endTimeUnixNano": message.end_time_unix_nano,
            }
        else:
            message.time_unix_nano = draw(GOOD_TIME)
            message.body.string_value = draw(STRINGS)
            expected |= {"timeUnixNano": message.time_unix_nano, "body": message.body.string_value}
        expected["attributes"] = plain
        sent = {"attributes": [{"key": a.key} for a in message.attributes]}
        items.append(Item(sent, expected, hostile))
    return request, tuple(items)


@SETTINGS
@given(_proto_items("traces"))
def test_protobuf_spans_are_refused_by_field_or_stored_faithfully(drawn):
    request, items = drawn
    _check("traces", items, request.SerializeToString(), "application/x-protobuf")


@SETTINGS
@given(_proto_items("logs"))
def test_protobuf_records_are_refused_by_field_or_stored_faithfully(drawn):
    request, items = drawn
    _check("logs", items, request.SerializeToString(), "application/x-protobuf")


# --- the real OpenTelemetry SDK exporters over loopback HTTP ------------------------------------------------------


def test_sdk_exporters_have_hostile_values_stored_as_sent(tmp_path):
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogExporter, LogExportResult, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from evalkit.spans.online.server import serve

    spans, records = InMemorySpanExporter(), InMemoryLogExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(records))
    tracer = tracer_provider.get_tracer("t")
    logger = logger_provider.get_logger("t")
    for name, value in (
        ("deep", DEEP_OBJECT),
        ("nan", math.nan),
        ("long", "é" * 100_000),
        ("inf", -math.inf),
    ):
        with tracer.start_as_current_span(name, attributes={"session.id": "s", "metadata": value}):
            logger.emit(body=value, attributes={"session.id": "s", "kind": name})
    server = serve(tmp_path / "store", port=0, session_timeout=60).start()
    try:
        # export() returns once the receiver answered: SUCCESS for a 200, no retry
        assert (
            OTLPSpanExporter(endpoint=server.url).export(spans.get_finished_spans())
            == SpanExportResult.SUCCESS
        )
        exported = OTLPLogExporter(endpoint=server.logs_url).export(records.get_finished_logs())
        assert exported == LogExportResult.SUCCESS
        documents = server.store.session_documents("s")
    finally:
        server.stop()
        tracer_provider.shutdown()
        logger_provider.shutdown()
    expected = {"deep": DEEP_OBJECT, "nan": "NaN", "long": "é" * 100_000, "inf": "-Infinity"}
    stored_spans = {d["name"]: d["attributes"]["metadata"] for d in documents if "startTimeUnixNano" in d}
    assert stored_spans == expected
    stored_records = {d["attributes"]["kind"]: d["body"] for d in documents if "startTimeUnixNano" not in d}
    assert stored_records == expected
