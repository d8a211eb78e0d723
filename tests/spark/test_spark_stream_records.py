"""``evalkit spans stream`` with event records: OTLP logs lines beside traces lines reach ``sessionSpans``.

The lines are the real OpenTelemetry SDK's: spans and log records captured with its in-memory exporters
(records emitted inside spans, so their trace and span ids are the active span's) and encoded by the OTLP
exporters' own encoders (``encode_spans``, ``encode_logs``) into ``ExportTraceServiceRequest`` /
``ExportLogsServiceRequest`` JSON, one request per line, as the Collector's file exporter writes traces and
logs to one file.
"""

from __future__ import annotations

import json
import time

import pytest
from test_spark_stream import put, stream_args

from evalkit.cli import main as cli
from evalkit.spark.stream_executor import _join_records, _spans
from evalkit.spark.stream_sink import read_parts

SEEN = """EVALUATION_LEVEL = "SESSION"

def lambda_handler(event, context):
    docs = event["evaluationInput"]["sessionSpans"]
    spans = [d for d in docs if "startTimeUnixNano" in d]
    records = [d for d in docs if "startTimeUnixNano" not in d]
    answers = [m["content"]["message"] for r in records for m in r["body"]["output"]["messages"]]
    return {"label": "PASS", "value": 1.0,
            "explanation": f"{len(spans)} spans, {len(records)} records, answers {answers}"}
"""


def _captured(sessions: list[str]) -> tuple[dict, dict]:
    """``(traces request, logs request)`` as OTLP JSON dicts, from the SDK: per session a root span with
    ``session.id``, a child ``chat`` span without, and one ADOT-style record emitted inside the child."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.create({"service.name": "agent"})
    spans, logs = InMemorySpanExporter(), InMemoryLogExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    tracer = tracer_provider.get_tracer("strands.telemetry.tracer")
    logger = logger_provider.get_logger("strands.telemetry.tracer")
    for session in sessions:
        with tracer.start_as_current_span("invoke_agent", attributes={"session.id": session}):
            with tracer.start_as_current_span("chat"):
                logger.emit(
                    event_name="strands.telemetry.tracer",
                    body={
                        "input": {"messages": [{"role": "user", "content": {"content": "hi"}}]},
                        "output": {
                            "messages": [{"role": "assistant", "content": {"message": f"{session} ok"}}]
                        },
                    },
                )
    traces = MessageToDict(encode_spans(spans.get_finished_spans()))
    records = MessageToDict(encode_logs(logs.get_finished_logs()))
    return traces, records


def _clock(second: float) -> dict:
    """A span far in event time after the captured ones: the watermark passes and their sessions close."""
    start = int(second * 1e9)
    span = {"traceId": "c" * 32, "spanId": "c" * 16, "name": "clock", "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 1000),
            "attributes": [{"key": "session.id", "value": {"stringValue": "clock"}}]}  # fmt: skip
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


@pytest.fixture
def record_dirs(tmp_path):
    source, custom = tmp_path / "spans", tmp_path / "custom-evaluators"
    source.mkdir()
    (custom / "check").mkdir(parents=True)  # stream_args names the evaluator "check"
    (custom / "check" / "check.py").write_text(SEEN)
    return source, custom, tmp_path / "sink"


def test_records_in_logs_lines_reach_their_sessions_spans(spark, record_dirs):
    source, custom, sink = record_dirs
    traces, records = _captured(["r0", "r1", "r2"])
    # Logs first, then traces, and the logs line again (an exporter's retry): one file, as the Collector writes.
    put(source, "a.json", [records, traces, records])
    put(source, "b.json", [_clock(time.time() + 3600)])
    assert cli(stream_args(source, custom, sink)) == 0
    explained = {
        r["attributes"]["session.id"]: r["attributes"]["gen_ai.evaluation.explanation"]
        for r in read_parts(sink)
    }
    assert explained == {  # the clock's session is still open: the watermark has not passed it
        "r0": "2 spans, 1 records, answers ['r0 ok']",
        "r1": "2 spans, 1 records, answers ['r1 ok']",
        "r2": "2 spans, 1 records, answers ['r2 ok']",
    }


def test_a_record_joins_by_its_own_session_id_else_its_span_else_its_trace_within_a_batch():
    traces, records = _captured(["j0"])
    record = records["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    own = json.loads(json.dumps(records))
    own_record = own["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    own_record["attributes"] = [{"key": "session.id", "value": {"stringValue": "mine"}}]
    own_record["traceId"] = "AAAAAAAAAAAAAAAAAAAAAg=="  # a trace of its own
    stranger = json.loads(json.dumps(records))  # a record of a span never sent, in the same trace
    stranger["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["spanId"] = "AAAAAAAAAAE="
    lonely = json.loads(json.dumps(records))  # a record of a trace never sent
    lonely["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["traceId"] = "AAAAAAAAAAAAAAAAAAAAAQ=="
    pairs = [p for line in (records, own, stranger, lonely, traces) for p in _spans(json.dumps(line))]
    assert [s for s, _ in pairs[:4]] == [None, "mine", None, None]  # a line alone knows only its own
    joined = _join_records(pairs)
    assert [s for s, _ in joined] == ["j0", "mine", "j0", None, "j0", "j0"]
    chat, root = sorted((d for _, d in pairs[4:]), key=lambda d: d["name"] != "chat")
    assert joined[0][1]["spanId"] == chat["spanId"] != root["spanId"]  # the SDK set it from the active span
    assert record["spanId"] and record["traceId"]
