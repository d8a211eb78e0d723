"""Online evaluation: the OTLP/HTTP receiver, the durable store, sessions, sampling, filters, outputs, restarts.

The receiver runs in-process on a free loopback port and gets spans from the real OpenTelemetry SDK exporter
(protobuf) and from hand-written JSON requests; the restart test kills a receiver subprocess with SIGKILL.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import http.server
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.spans.online.server import serve
from evalkit.spans.online.session_tracking import Filter, parse_duration, sampled
from evalkit.spans.online.views import online_frame, pass_rate_over_time, status

CHECK = """EVALUATION_LEVEL = "SESSION"

def lambda_handler(event, context):
    spans = event["evaluationInput"]["sessionSpans"]
    ok = any(s["attributes"].get("ok") == "yes" for s in spans)
    return {"label": "PASS" if ok else "FAIL", "value": 1.0 if ok else 0.0, "explanation": f"{len(spans)} spans"}
"""

SLOW = """import os, time
EVALUATION_LEVEL = "SESSION"

def lambda_handler(event, context):
    session = event["evaluationInput"]["sessionSpans"][0]["attributes"]["session.id"]
    with open(os.environ["EVALKIT_TEST_CALLS"], "a") as handle:
        handle.write(session + "\\n")
    time.sleep(0.02)
    return {"label": "PASS", "value": 1.0}
"""


@pytest.fixture
def custom(tmp_path):
    root = tmp_path / "custom-evaluators"
    for name, text in (("check", CHECK), ("slow", SLOW)):
        (root / name).mkdir(parents=True)
        (root / name / f"{name}.py").write_text(text)
    return root


@pytest.fixture
def server_factory(tmp_path, custom):
    started = []

    def make(**options):
        options.setdefault("evaluators", ["check"])
        options.setdefault("custom_dir", custom)
        options.setdefault("session_timeout", 0.3)
        options.setdefault("poll_interval", 0.02)
        server = serve(options.pop("store", tmp_path / "store"), port=0, **options).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def _span(session: str | None, trace: int, span: int, **attrs) -> dict:
    attributes = [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]
    if session is not None:
        attributes.append({"key": "session.id", "value": {"stringValue": session}})
    return {
        "traceId": f"{trace:032X}",  # upper case: the store must normalise to lower case
        "spanId": f"{span:016x}",
        "name": "invoke_agent",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": attributes,
    }


def _request(spans: list[dict], service: str = "svc") -> dict:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]
    }


def _post(port: int, body: bytes, ctype: str = "application/json", **headers) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": ctype, **headers})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _post_json(port: int, spans: list[dict], **headers) -> tuple[int, bytes]:
    return _post(port, json.dumps(_request(spans)).encode(), **headers)


def _wait(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _states(store: Path) -> dict[str, str]:
    with sqlite3.connect(store / "store.sqlite3") as db:
        return dict(db.execute("SELECT id, state FROM sessions"))


def test_sdk_protobuf_export_is_evaluated_into_results_and_metrics(server_factory, tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    server = server_factory()
    provider = TracerProvider(resource=Resource.create({"service.name": "market-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=server.url)))
    tracer = provider.get_tracer("test")
    for session, ok in (("good", "yes"), ("bad", "no")):
        with tracer.start_as_current_span("invoke_agent", attributes={"session.id": session}):
            with tracer.start_as_current_span("execute_tool lookup", attributes={"ok": ok}):
                pass
    assert provider.force_flush(10_000)
    provider.shutdown()

    results = _wait(
        lambda: (
            len(_lines(tmp_path / "store" / "results.jsonl")) == 2
            and _lines(tmp_path / "store" / "results.jsonl")
        )
    )
    by_session = {r["attributes"]["session.id"]: r for r in results}
    good = by_session["good"]
    assert good["name"] == "gen_ai.evaluation.result"
    assert good["attributes"]["gen_ai.evaluation.name"] == "check"
    assert good["attributes"]["gen_ai.evaluation.score.label"] == "PASS"
    assert good["attributes"]["gen_ai.evaluation.score.value"] == 1.0
    assert (
        good["attributes"]["gen_ai.evaluation.explanation"] == "2 spans"
    )  # the child span has no session.id
    assert by_session["bad"]["attributes"]["gen_ai.evaluation.score.label"] == "FAIL"
    assert isinstance(good["timestamp"], int)

    metrics = _wait(
        lambda: (
            len(_lines(tmp_path / "store" / "metrics.jsonl")) == 2
            and _lines(tmp_path / "store" / "metrics.jsonl")
        )
    )
    emf = {m["session.id"]: m for m in metrics}["bad"]
    directive = emf["_aws"]["CloudWatchMetrics"][0]
    assert directive["Namespace"] == "Bedrock-AgentCore/Evaluations"
    assert directive["Metrics"][0]["Name"] == "check"
    assert directive["Dimensions"] == [["service.name", "label", "onlineEvaluationConfigId"]]
    assert emf["onlineEvaluationConfigId"] == "store"  # the store folder's name by default
    assert emf["service.name"] == "market-agent" and emf["label"] == "FAIL" and emf["check"] == 0.0

    frame = online_frame(tmp_path / "store")
    assert sorted(frame["session_id"]) == ["bad", "good"]
    assert frame["passed"].sum() == 1
    figure = pass_rate_over_time(frame)
    assert [t.name for t in figure.data] == ["check"]
    info = status(tmp_path / "store")
    assert info["counts"]["evaluated"] == 2 and info["counts"]["spans"] == 4
    assert info["hour"]["check"] == (1, 2)


def test_json_and_gzip_posts_answer_like_a_collector_and_ignore_duplicates(server_factory, tmp_path):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    server = server_factory(session_timeout=60)
    spans = [_span("s1", 1, 1, ok="yes"), _span(None, 1, 2)]
    assert _post_json(server.port, spans) == (200, b"{}")
    body = gzip.compress(json.dumps(_request(spans)).encode())
    assert _post(server.port, body, **{"Content-Encoding": "gzip"}) == (200, b"{}")  # a retry: no duplicate
    with sqlite3.connect(tmp_path / "store" / "store.sqlite3") as db:
        rows = db.execute("SELECT trace_id, span_id, session_id FROM spans ORDER BY span_id").fetchall()
    assert rows == [(f"{1:032x}", f"{1:016x}", "s1"), (f"{1:032x}", f"{2:016x}", "s1")]

    status_code, payload = _post(
        server.port, ExportTraceServiceRequest().SerializeToString(), "application/x-protobuf"
    )
    assert status_code == 200
    ExportTraceServiceResponse().ParseFromString(payload)  # a valid (empty) protobuf response

    # One bad span among good ones: partial success, the good one is kept.
    bad = dict(_span("s2", 2, 3), name=None)
    status_code, payload = _post_json(server.port, [bad, _span("s2", 2, 4)])
    assert status_code == 200 and json.loads(payload)["partialSuccess"]["rejectedSpans"] == "1"
    assert _states(tmp_path / "store") == {"s1": "open", "s2": "open"}


def test_malformed_oversized_and_unauthenticated_requests_are_refused(server_factory):
    server = server_factory(token="sekret", max_body=64 * 1024)
    auth = {"Authorization": "Bearer sekret"}
    assert _post_json(server.port, [_span("s", 1, 1)])[0] == 401
    assert _post_json(server.port, [_span("s", 1, 1)], Authorization="Bearer wrong")[0] == 401
    status_code, message = _post(server.port, b"{not json", **auth)
    assert status_code == 400 and b"not valid JSON" in message
    assert _post(server.port, b"\xff\xfe garbage", "application/x-protobuf", **auth)[0] == 400
    assert _post(server.port, b'{"foo": 1}', **auth)[0] == 400
    assert _post(server.port, b"{}", "text/plain", **auth)[0] == 415
    assert _post(server.port, b"x" * (64 * 1024 + 1), **auth)[0] == 413
    bomb = gzip.compress(b" " * (1024 * 1024))
    assert _post(server.port, bomb, **auth, **{"Content-Encoding": "gzip"})[0] == 413
    assert _post(server.port, b"\x1f\x8bnot gzip", **auth, **{"Content-Encoding": "gzip"})[0] == 400
    assert _post_json(server.port, [_span("s", 1, 1)], **auth)[0] == 200  # still serving


def test_sampling_is_a_stable_hash_split(server_factory, tmp_path):
    ids = [f"session-{i}" for i in range(2000)]
    assert not any(sampled(s, 0) for s in ids)
    assert all(sampled(s, 100) for s in ids)
    expected = [int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "big") % 10_000 < 3000 for s in ids]
    assert [sampled(s, 30) for s in ids] == expected
    assert 0.27 < sum(expected) / len(ids) < 0.33

    server = server_factory(sampling=50)
    names = [f"s{i}" for i in range(20)]
    for i, name in enumerate(names):
        assert _post_json(server.port, [_span(name, i + 1, i + 1, ok="yes")])[0] == 200
    states = _wait(lambda: (s := _states(tmp_path / "store")) and "open" not in s.values() and s)
    _wait(lambda: "complete" not in _states(tmp_path / "store").values())
    states = _states(tmp_path / "store")
    assert {n for n, st in states.items() if st == "evaluated"} == {n for n in names if sampled(n, 50)}
    assert {n for n, st in states.items() if st == "skipped"} == {n for n in names if not sampled(n, 50)}
    chosen = {n for n in names if sampled(n, 50)}
    results = tmp_path / "store" / "results.jsonl"  # exported after the store's commit: wait for it
    _wait(lambda: len(_lines(results)) >= len(chosen))
    evaluated = {r["attributes"]["session.id"] for r in _lines(results)}
    assert evaluated == chosen


def test_filters_select_sessions_by_span_attributes(server_factory, tmp_path):
    assert Filter("env=prod").matches({"attributes": {"env": "prod"}})
    assert not Filter("env!=prod").matches({"attributes": {"env": "prod"}})
    assert Filter("model~=claude").matches({"attributes": {"model": "claude-3"}})
    assert Filter("tokens>10").matches({"attributes": {"tokens": 11}})
    assert not Filter("tokens<10").matches({"attributes": {"tokens": 11}})
    assert Filter("service.name=svc").matches(
        {"attributes": {}, "resource": {"attributes": {"service.name": "svc"}}}
    )
    with pytest.raises(EvalkitError):
        Filter("no operator")
    with pytest.raises(EvalkitError):
        Filter("tokens>many")

    server = server_factory(filters=["env=prod", "model~=claude"])
    _post_json(server.port, [_span("both", 1, 1, env="prod"), _span("both", 1, 2, model="claude-3")])
    _post_json(server.port, [_span("env-only", 2, 3, env="prod", model="gpt")])
    _post_json(server.port, [_span("staging", 3, 4, env="staging", model="claude")])
    _wait(lambda: set(_states(tmp_path / "store").values()) <= {"evaluated", "skipped"})
    assert _states(tmp_path / "store") == {"both": "evaluated", "env-only": "skipped", "staging": "skipped"}


def test_configuration_is_checked(tmp_path, custom):
    with pytest.raises(EvalkitError, match="at most 10"):
        serve(tmp_path, evaluators=["check"] * 11, custom_dir=custom)
    with pytest.raises(EvalkitError, match="percentage"):
        serve(tmp_path, sampling=101)
    assert parse_duration("15m") == 900 and parse_duration("1h") == 3600 and parse_duration("250ms") == 0.25
    with pytest.raises(EvalkitError):
        parse_duration("soon")


def test_alarm_fires_once_when_the_pass_rate_drops(server_factory, tmp_path):
    received = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    hook = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    try:
        server = server_factory(
            alarm_threshold=0.8, alarm_window="1h", alarm_webhook=f"http://127.0.0.1:{hook.server_port}/"
        )
        _post_json(server.port, [_span("pass", 1, 1, ok="yes")])
        _wait(lambda: _states(tmp_path / "store").get("pass") == "evaluated")
        time.sleep(0.1)
        assert server.alarms == [] and received == []
        for i in range(3):
            _post_json(server.port, [_span(f"fail{i}", 10 + i, 10 + i, ok="no")])
        _wait(lambda: len(received) == 1)
        time.sleep(0.3)
    finally:
        hook.shutdown()
        hook.server_close()
    assert len(received) == 1  # fired once, not on every pass
    alarm = received[0]
    assert alarm["evaluator"] == "check" and alarm["state"] == "ALARM" and alarm["passRate"] < 0.8


def test_exports_resume_after_a_torn_line_without_repeats(server_factory, tmp_path):
    server = server_factory()
    for i in range(3):
        _post_json(server.port, [_span(f"s{i}", i + 1, i + 1, ok="yes")])
    _wait(lambda: len(_lines(tmp_path / "store" / "metrics.jsonl")) == 3)
    server.stop()
    results = tmp_path / "store" / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text(lines[0] + lines[1][:20])  # a crash while appending: line 2 torn, line 3 missing
    server_factory()
    assert [r["sequence"] for r in _lines(results)] == [1, 2, 3]


RECEIVER = """
import sys, time
from evalkit.spans.online.server import serve
server = serve(sys.argv[1], evaluators=["slow"], custom_dir=sys.argv[2], port=0, session_timeout=0.2,
               poll_interval=0.02).start()
print(server.port, flush=True)
time.sleep(600)
"""


def test_kill_9_mid_stream_loses_no_acknowledged_span_and_evaluates_no_session_twice(tmp_path, custom):
    store = tmp_path / "store"
    calls = tmp_path / "calls.log"
    env = {**os.environ, "EVALKIT_TEST_CALLS": str(calls)}
    child = subprocess.Popen(
        [sys.executable, "-c", RECEIVER, str(store), str(custom)], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        port = int(child.stdout.readline())
        acknowledged: list[tuple[str, str]] = []
        failures = []

        def send():
            for i in range(1, 100_000):
                spans = [_span(f"s{i}", i, i * 10 + k) for k in range(5)]
                try:
                    code, _ = _post_json(port, spans)
                except OSError as exc:
                    failures.append(exc)
                    return
                if code == 200:
                    acknowledged.extend((f"{i:032x}", f"{i * 10 + k:016x}") for k in range(5))
                time.sleep(0.01)  # a steady stream, so sessions keep completing while spans arrive

        sender = threading.Thread(target=send)
        sender.start()
        _wait(lambda: calls.exists() and len(calls.read_text().split()) >= 3)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        sender.join(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert failures, "the sender should have been cut off mid-stream"
    assert len(acknowledged) >= 25

    os.environ["EVALKIT_TEST_CALLS"] = str(calls)
    try:
        server = serve(store, evaluators=["slow"], custom_dir=custom, port=0, session_timeout=0.2,
                       poll_interval=0.02).start()  # fmt: skip
        try:
            _wait(lambda: not {"open", "complete"} & set(_states(store).values()), timeout=20)
            _wait(lambda: len(_lines(store / "results.jsonl")) == len(_states(store)))
        finally:
            server.stop()
    finally:
        del os.environ["EVALKIT_TEST_CALLS"]
    with sqlite3.connect(store / "store.sqlite3") as db:
        stored = set(db.execute("SELECT trace_id, span_id FROM spans"))
        per_session = db.execute("SELECT session_id, COUNT(*) FROM results GROUP BY session_id").fetchall()
    assert set(acknowledged) <= stored
    sessions = _states(store)
    assert set(sessions.values()) == {"evaluated"}
    assert {s for s, n in per_session} == set(sessions) and all(n == 1 for _, n in per_session)
    exported = [r["attributes"]["session.id"] for r in _lines(store / "results.jsonl")]
    assert sorted(exported) == sorted(sessions)  # each session exported exactly once
    assert [m["sequence"] for m in _lines(store / "metrics.jsonl")] == list(range(1, len(sessions) + 1))
    # At most the session being evaluated when the process died was called again.
    called = calls.read_text().split()
    assert len(called) - len(set(called)) <= 1


def test_status_command_prints_states_and_pass_rates(server_factory, tmp_path, capsys):
    import argparse

    from evalkit.cli.spans.serve import register, status_main

    server = server_factory()
    _post_json(server.port, [_span("a", 1, 1, ok="yes")])
    _post_json(server.port, [_span("b", 2, 2, ok="no")])
    _wait(lambda: len(_lines(tmp_path / "store" / "results.jsonl")) == 2)
    assert status_main(argparse.Namespace(store=str(tmp_path / "store"))) == 0
    out = capsys.readouterr().out
    assert "2 evaluated" in out and "50.0% (1/2)" in out

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(
        ["serve", "--store", "x", "--evaluator", "a", "--filter", "k=v", "--sampling", "5"]
    )
    assert args.sampling == 5.0 and args.filter == ["k=v"] and args.session_timeout == "15m"
    with pytest.raises(EvalkitError, match="no online evaluation store"):
        status_main(argparse.Namespace(store=str(tmp_path / "missing")))
