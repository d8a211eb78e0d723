"""Event records through the online receiver: ``POST /v1/logs``, the store, session joining, status, kill -9.

The end-to-end test runs the real OpenTelemetry SDK: a ``LoggerProvider`` with ``BatchLogRecordProcessor`` and
``OTLPLogExporter`` (protobuf) emitting log records inside spans (their trace and span ids come from the active
span context), beside a ``TracerProvider`` with ``OTLPSpanExporter``, both over loopback to a receiver in this
process. Edge cases (joining orders, retries, limits) use hand-written OTLP JSON requests.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import http.client
import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from evalkit.spans.online.intake import LOGS, SIGNALS, decode_request, ingest_request
from evalkit.spans.online.server import serve
from evalkit.spans.online.store import Store
from evalkit.spans.online.views import status

#: A session-level code evaluator that reports what its sessionSpans held: spans, records, the answer.
SEEN = """EVALUATION_LEVEL = "SESSION"

def lambda_handler(event, context):
    docs = event["evaluationInput"]["sessionSpans"]
    spans = [d for d in docs if "startTimeUnixNano" in d]
    records = [d for d in docs if "startTimeUnixNano" not in d]
    answers = [m["content"]["message"] for r in records for m in r["body"]["output"]["messages"]]
    ok = bool(spans) and bool(records)
    return {"label": "PASS" if ok else "FAIL", "value": 1.0 if ok else 0.0,
            "explanation": f"{len(spans)} spans, {len(records)} records, answers {answers}"}
"""


@pytest.fixture
def custom(tmp_path):
    root = tmp_path / "custom-evaluators"
    (root / "seen").mkdir(parents=True)
    (root / "seen" / "seen.py").write_text(SEEN)
    return root


@pytest.fixture
def receivers(tmp_path, custom):
    started = []

    def make(**options):
        options.setdefault("evaluators", ["seen"])
        options.setdefault("custom_dir", custom)
        options.setdefault("session_timeout", 0.3)
        options.setdefault("poll_interval", 0.02)
        server = serve(options.pop("store", tmp_path / "store"), port=0, **options).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def _wait(predicate, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x] if path.exists() else []


def _record(trace: int, span: int, answer: str = "hello", session: str | None = None, n: int = 0) -> dict:
    """An OTLP JSON log record in the ADOT form (body: input/output messages), joined to span ``span``."""
    attributes = [{"key": "event.name", "value": {"stringValue": "strands.telemetry.tracer"}}]
    if session is not None:
        attributes.append({"key": "session.id", "value": {"stringValue": session}})
    body = {
        "input": {"messages": [{"role": "user", "content": {"content": f"question {n}"}}]},
        "output": {"messages": [{"role": "assistant", "content": {"message": answer}}]},
    }
    return {
        "timeUnixNano": str(1_700_000_000_500_000_000 + n),
        "observedTimeUnixNano": str(1_700_000_000_600_000_000 + n),
        "severityNumber": 9,
        "body": _any(body),
        "attributes": attributes,
        "traceId": f"{trace:032x}",
        "spanId": f"{span:016x}",
    }


def _any(value) -> dict:
    """A plain JSON value as an OTLP ``AnyValue``."""
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _any(v)} for k, v in value.items()]}}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any(v) for v in value]}}
    return {"stringValue": str(value)}


def _logs(records: list[dict]) -> bytes:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]}
    blocks = [{"resource": resource, "scopeLogs": [{"scope": {"name": "strands"}, "logRecords": records}]}]
    return json.dumps({"resourceLogs": blocks}).encode()


def _proto_logs(records: list[dict]):
    """The ``ExportLogsServiceRequest`` message of these records (protobuf's JSON mapping wants ids in base64)."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    encoded = [
        r | {k: base64.b64encode(bytes.fromhex(r[k])).decode() for k in ("traceId", "spanId") if r.get(k)}
        for r in records
    ]
    return ParseDict(json.loads(_logs(encoded)), ExportLogsServiceRequest())


def _span(trace: int, span: int, session: str | None) -> dict:
    attributes = [] if session is None else [{"key": "session.id", "value": {"stringValue": session}}]
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{span:016x}",
        "name": "invoke_agent",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": attributes,
    }


def _traces(spans: list[dict]) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


def _post(port: int, path: str, body: bytes, ctype: str = "application/json", **headers) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", path, body=body, headers={"Content-Type": ctype, **headers})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_sdk_log_and_span_exporters_reach_the_evaluator_and_status_counts_records(
    receivers, tmp_path, capsys
):
    from opentelemetry._logs import SeverityNumber
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from evalkit.cli.spans.serve import status_main

    server = receivers()
    assert server.logs_url == f"http://127.0.0.1:{server.port}/v1/logs"
    resource = Resource.create({"service.name": "market-agent"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=server.url)))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(
        BatchLogRecordProcessor(OTLPLogExporter(endpoint=server.logs_url))
    )
    tracer = tracer_provider.get_tracer("strands.telemetry.tracer")
    logger = logger_provider.get_logger("strands.telemetry.tracer")
    for session in ("alpha", "beta"):
        with tracer.start_as_current_span("invoke_agent", attributes={"session.id": session}):
            with tracer.start_as_current_span("chat"):  # no session.id: its record joins through its span
                logger.emit(
                    event_name="strands.telemetry.tracer",
                    severity_number=SeverityNumber.INFO,
                    body={
                        "input": {"messages": [{"role": "user", "content": {"content": "price of AAPL?"}}]},
                        "output": {
                            "messages": [{"role": "assistant", "content": {"message": f"{session} ok"}}]
                        },
                    },
                    attributes={"event.name": "strands.telemetry.tracer"},
                )
    # Records first, spans after: a record stored before its span still joins the span's session.
    assert logger_provider.force_flush(10_000)
    assert tracer_provider.force_flush(10_000)
    logger_provider.shutdown()
    tracer_provider.shutdown()

    results = _wait(lambda: len(_lines(tmp_path / "store" / "results.jsonl")) == 2 and _lines(
        tmp_path / "store" / "results.jsonl"
    ))  # fmt: skip
    explanations = {
        r["attributes"]["session.id"]: r["attributes"]["gen_ai.evaluation.explanation"] for r in results
    }
    assert explanations == {
        "alpha": "2 spans, 1 records, answers ['alpha ok']",
        "beta": "2 spans, 1 records, answers ['beta ok']",
    }
    assert {r["attributes"]["gen_ai.evaluation.score.label"] for r in results} == {"PASS"}

    documents = server.store.session_documents("alpha")
    (record,) = [d for d in documents if "startTimeUnixNano" not in d]
    chat = next(d for d in documents if d.get("name") == "chat")
    assert (record["traceId"], record["spanId"]) == (chat["traceId"], chat["spanId"])
    assert record["eventName"] == "strands.telemetry.tracer" and record["severityNumber"] == 9
    assert record["resource"]["attributes"]["service.name"] == "market-agent"
    assert isinstance(record["timeUnixNano"], int) and record["timeUnixNano"] > 0

    info = status(tmp_path / "store")
    assert info["counts"]["spans"] == 4 and info["counts"]["records"] == 2
    assert status_main(argparse.Namespace(store=str(tmp_path / "store"))) == 0
    assert "4 spans, 2 records stored" in capsys.readouterr().out


def test_logs_json_gzip_protobuf_answers_and_retries_like_traces(receivers, tmp_path):
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

    server = receivers(session_timeout=60)
    body = _logs([_record(1, 1, session="s1"), _record(1, 2, n=1)])
    assert _post(server.port, "/v1/logs", body) == (200, b"{}")
    assert _post(server.port, "/v1/logs", gzip.compress(body), **{"Content-Encoding": "gzip"}) == (200, b"{}")
    assert server.store.counts()["records"] == 2  # the retry stored nothing twice

    as_proto = _proto_logs([_record(1, 3, n=2)]).SerializeToString()
    code, payload = _post(server.port, "/v1/logs", as_proto, "application/x-protobuf")
    assert code == 200 and ExportLogsServiceResponse.FromString(payload) == ExportLogsServiceResponse()
    with sqlite3.connect(tmp_path / "store" / "store.sqlite3") as db:
        rows = db.execute("SELECT span_id, session_id FROM records ORDER BY span_id").fetchall()
    # The record without session.id takes its trace's session from the other record of the request.
    assert rows == [(f"{1:016x}", "s1"), (f"{2:016x}", "s1"), (f"{3:016x}", "s1")]

    bad = dict(_record(2, 4), timeUnixNano="soon")
    code, payload = _post(server.port, "/v1/logs", _logs([bad, _record(2, 5, session="s2")]))
    assert code == 200 and json.loads(payload)["partialSuccess"]["rejectedLogRecords"] == "1"
    broken = _proto_logs([{"traceId": "", "spanId": ""}])
    code, payload = _post(server.port, "/v1/logs", broken.SerializeToString(), "application/x-protobuf")
    assert code == 400 and b"no valid event record" in payload

    code, payload = _post(server.port, "/v1/logs", _traces([_span(3, 6, "s3")]))
    assert code == 400 and b"'resourceLogs' is missing" in payload  # spans sent to the logs endpoint
    code, payload = _post(server.port, "/v1/traces", body)
    assert code == 400 and b"'resourceSpans' is missing" in payload


def test_logs_endpoint_has_the_limits_and_token_of_traces(receivers):
    server = receivers(token="sekret", max_body=64 * 1024)
    auth = {"Authorization": "Bearer sekret"}
    body = _logs([_record(1, 1, session="s")])
    assert _post(server.port, "/v1/logs", body)[0] == 401
    assert _post(server.port, "/v1/logs", body, Authorization="Bearer wrong")[0] == 401
    assert _post(server.port, "/v1/logs", b"{not json", **auth)[0] == 400
    assert _post(server.port, "/v1/logs", b"\xff\xfe garbage", "application/x-protobuf", **auth)[0] == 400
    assert _post(server.port, "/v1/logs", b"{}", "text/plain", **auth)[0] == 415
    assert _post(server.port, "/v1/logs", b"x" * (64 * 1024 + 1), **auth)[0] == 413
    bomb = gzip.compress(b" " * (1024 * 1024))
    assert _post(server.port, "/v1/logs", bomb, **auth, **{"Content-Encoding": "gzip"})[0] == 413
    raw = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    raw.putrequest("POST", "/v1/logs")
    raw.putheader("Transfer-Encoding", "chunked")
    raw.putheader("Content-Type", "application/json")
    raw.putheader("Authorization", "Bearer sekret")
    raw.endheaders()
    raw.send(b"2\r\n{}\r\n0\r\n\r\n")
    assert raw.getresponse().status == 411
    raw.close()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", "/v1/logs")
    assert connection.getresponse().status == 405
    connection.close()
    assert _post(server.port, "/v1/logs", body, **auth)[0] == 200  # still serving


def _ingest(store: Store, signal: str, body: bytes) -> None:
    status_code, _, _ = ingest_request(
        store, body, "application/json", "", max_body=1 << 22, sampling=100, signal=SIGNALS[signal]
    )
    assert status_code == 200


def _names(store: Store, session: str) -> list[str]:
    return sorted(
        "record" if "startTimeUnixNano" not in d else d["name"] for d in store.session_documents(session)
    )


def test_records_join_their_span_or_trace_in_any_order_and_reopen_a_complete_session(tmp_path):
    store = Store(tmp_path / "store")
    # 1. A record before its span, without a session id: kept without one, joined once the span arrives.
    _ingest(store, "logs", _logs([_record(1, 1)]))
    assert store.counts()["open"] == 0 and store.counts()["records"] == 1
    _ingest(store, "traces", _traces([_span(1, 1, "early")]))
    assert _names(store, "early") == ["invoke_agent", "record"]
    # 2. A record after its span, in a later request: its span's session, stored with it.
    _ingest(store, "traces", _traces([_span(2, 2, "late")]))
    _ingest(store, "logs", _logs([_record(2, 2)]))
    # 3. A record of a span never seen, in a known trace: its trace's session.
    _ingest(store, "logs", _logs([_record(2, 99)]))
    assert _names(store, "late") == ["invoke_agent", "record", "record"]
    with sqlite3.connect(store.path) as db:
        assert set(db.execute("SELECT session_id FROM records WHERE trace_id = ?", (f"{2:032x}",))) == {
            ("late",)
        }
    # 4. A record's own session.id wins, and a span without one joins the record's session by its trace.
    _ingest(store, "logs", _logs([_record(3, 3, session="own")]))
    _ingest(store, "traces", _traces([_span(3, 4, None)]))
    assert _names(store, "own") == ["invoke_agent", "record"]

    # A record reopens a complete session, as a span does; a repeated record does not.
    assert store.complete_idle(0, now=time.time() + 10) == 3
    assert "late" in {s for s, _, _ in store.complete_sessions()}
    _ingest(store, "logs", _logs([_record(2, 2, answer="again", n=7)]))
    assert "late" not in {s for s, _, _ in store.complete_sessions()}
    assert store.complete_idle(0, now=time.time() + 10) == 1
    assert store.add_records(*_decoded(_logs([_record(2, 2, answer="again", n=7)])), lambda s: True) == 0
    assert "late" in {s for s, _, _ in store.complete_sessions()}  # the retry did not reopen it
    store.close()


def _decoded(body: bytes) -> tuple[list, list]:
    docs, problems = decode_request(body, "application/json", "", signal=LOGS)
    assert not problems
    return docs, ["late"] * len(docs)


OLD_SCHEMA = """
CREATE TABLE spans (trace_id TEXT NOT NULL, span_id TEXT NOT NULL, session_id TEXT, received REAL NOT NULL,
    document TEXT NOT NULL, UNIQUE (trace_id, span_id));
CREATE INDEX spans_session ON spans (session_id);
CREATE TABLE sessions (id TEXT PRIMARY KEY, first_received REAL NOT NULL, last_received REAL NOT NULL,
    state TEXT NOT NULL DEFAULT 'open', sampled INTEGER NOT NULL, completed REAL, finished REAL);
CREATE TABLE results (seq INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, evaluator TEXT NOT NULL,
    trace_id TEXT, span_id TEXT, label TEXT, value REAL, explanation TEXT, error_code TEXT, passed INTEGER NOT NULL,
    service TEXT, timestamp REAL NOT NULL, entry TEXT NOT NULL);
"""


def test_a_store_made_before_records_still_opens_read_only_and_for_writing(tmp_path):
    folder = tmp_path / "store"
    folder.mkdir()
    span = json.dumps(_span(1, 1, None) | {"attributes": {"session.id": "old"}, "kind": "INTERNAL"})
    with sqlite3.connect(folder / "store.sqlite3") as db:  # the tables of the store before this change
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO spans VALUES (?, ?, 'old', 1.0, ?)", (f"{1:032x}", f"{1:016x}", span))
        db.execute(
            "INSERT INTO sessions (id, first_received, last_received, sampled) VALUES ('old', 1, 1, 1)"
        )
    counts = status(folder)["counts"]  # read-only: no records table, none counted
    assert (counts["spans"], counts["records"], counts["open"]) == (1, 0, 1)
    store = Store(folder)  # the writer adds the records table
    _ingest(store, "logs", _logs([_record(1, 1)]))
    assert _names(store, "old") == ["invoke_agent", "record"]
    store.close()
    assert status(folder)["counts"]["records"] == 1


RECEIVER = """
import sys, time
from evalkit.spans.online.server import serve
server = serve(sys.argv[1], evaluators=["seen"], custom_dir=sys.argv[2], port=0, session_timeout=0.2,
               poll_interval=0.02).start()
print(server.port, flush=True)
time.sleep(600)
"""


def test_kill_9_loses_no_acknowledged_record_and_evaluates_no_session_twice(tmp_path, custom):
    store = tmp_path / "store"
    child = subprocess.Popen(
        [sys.executable, "-c", RECEIVER, str(store), str(custom)], stdout=subprocess.PIPE, text=True
    )
    acknowledged: list[str] = []
    failures: list[Exception] = []
    try:
        port = int(child.stdout.readline())

        def send() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            for i in range(1, 100_000):
                # Traces and logs alternate on one keep-alive connection; every record without session.id.
                requests = [
                    ("/v1/traces", _traces([_span(i, i, f"s{i}")])),
                    ("/v1/logs", _logs([_record(i, i, n=i)])),
                ]
                for path, body in requests:
                    try:
                        connection.request(
                            "POST", path, body=body, headers={"Content-Type": "application/json"}
                        )
                        response = connection.getresponse()
                        response.read()
                    except (OSError, http.client.HTTPException) as exc:
                        failures.append(exc)
                        return
                    if response.status == 200 and path == "/v1/logs":
                        acknowledged.append(f"{i:016x}")
                time.sleep(0.005)

        sender = threading.Thread(target=send)
        sender.start()
        _wait(lambda: len(_lines(store / "results.jsonl")) >= 3)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        sender.join(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert failures and len(acknowledged) >= 5

    server = serve(
        store, evaluators=["seen"], custom_dir=custom, port=0, session_timeout=0.2, poll_interval=0.02
    )
    server.start()
    try:
        _wait(lambda: not {"open", "complete"} & set(_states(store).values()), timeout=20)
    finally:
        server.stop()
    with sqlite3.connect(store / "store.sqlite3") as db:
        stored = {row[0] for row in db.execute("SELECT span_id FROM records")}
        per_session = dict(db.execute("SELECT session_id, COUNT(*) FROM results GROUP BY session_id"))
    assert set(acknowledged) <= stored
    assert set(per_session) == set(_states(store)) and set(per_session.values()) == {1}
    explained = {r["attributes"]["session.id"]: r["attributes"]["gen_ai.evaluation.explanation"]
                 for r in _lines(store / "results.jsonl")}  # fmt: skip
    for i, span in enumerate(acknowledged, 1):  # an acknowledged record reached its session's evaluation
        assert explained[f"s{int(span, 16)}"].startswith("1 spans, 1 records"), (
            i,
            explained[f"s{int(span, 16)}"],
        )


def _states(store) -> dict[str, str]:
    with sqlite3.connect(store / "store.sqlite3") as db:
        return dict(db.execute("SELECT id, state FROM sessions"))


def test_exporter_ids_in_log_records_are_hex_in_the_protobuf_walk():
    from google.protobuf.json_format import MessageToDict

    from evalkit.spans.reading.otlp_protobuf import message_dict

    extra = {"eventName": "e", "flags": 1, "severityText": "INFO"}
    message = _proto_logs([_record(0xABC, 0xDEF, n=3) | extra])
    walked, general = message_dict(message), MessageToDict(message)
    record = walked["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    assert record["traceId"] == f"{0xABC:032x}" and record["spanId"] == f"{0xDEF:016x}"
    assert record["severityNumber"] == "SEVERITY_NUMBER_INFO"  # by name, as MessageToDict gives it
    general_record = general["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    assert general_record["traceId"] != record["traceId"]  # base64 there
    assert {k: v for k, v in record.items() if k not in ("traceId", "spanId")} == {
        k: v for k, v in general_record.items() if k not in ("traceId", "spanId")
    }
    assert walked["resourceLogs"][0]["resource"] == general["resourceLogs"][0]["resource"]


def test_span_and_record_batches_waiting_share_one_group_commit(tmp_path):
    store = Store(tmp_path / "store")
    commits = []
    store.db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    spans, _ = decode_request(_traces([_span(n, n, f"s{n}") for n in range(1, 5)]), "application/json", "")
    records, _ = decode_request(
        _logs([_record(n, n, n=n) for n in range(1, 5)]), "application/json", "", signal=LOGS
    )
    added = {}
    threads = [
        threading.Thread(target=lambda: added.setdefault("spans", store.add_spans(spans, ["s"] * 4, bool))),
        threading.Thread(
            target=lambda: added.setdefault("records", store.add_records(records, ["s"] * 4, bool))
        ),
    ]
    with store.lock:  # a commit under way: both batches queue behind it
        for thread in threads:
            thread.start()
        _wait(lambda: len(store._queue) == 2)
    for thread in threads:
        thread.join(10)
    assert commits == ["COMMIT"] and added == {"spans": 4, "records": 4}
    assert store.counts()["spans"] == 4 and store.counts()["records"] == 4
    store.close()


def test_records_follow_the_session_attribute_and_a_trace_that_is_its_own_session(tmp_path):
    store = Store(tmp_path / "store")

    def ingest(signal: str, body: bytes, attribute: str | None = None) -> None:
        code, _, _ = ingest_request(
            store, body, "application/json", "", max_body=1 << 22, sampling=100,
            session_attribute=attribute, signal=SIGNALS[signal],
        )  # fmt: skip
        assert code == 200

    # A trace naming no session: its root span makes it its own session; its record, later, joins it.
    ingest("traces", _traces([_span(7, 7, None)]))
    ingest("logs", _logs([_record(7, 7)]))
    assert _names(store, f"{7:032x}") == ["invoke_agent", "record"]
    # --session-attribute: a record naming its session in that attribute is in that session.
    record = _record(8, 8)
    record["attributes"].append({"key": "app.thread", "value": {"stringValue": "thread-1"}})
    ingest("logs", _logs([record]), "app.thread")
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT session_id FROM records WHERE trace_id = ?", (f"{8:032x}",)).fetchone() == (
            "thread-1",
        )
    store.close()
