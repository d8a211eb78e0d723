"""``evalkit spans stream``: Collector file-exporter output in, sessions closed by session_window, sampled and
filtered as ``spans serve`` does, results and EMF metrics out, exactly once across a kill and a restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO

from evalkit.cli import main as cli
from evalkit.spans.online.session_tracking import sampled
from evalkit.spark.stream_executor import _spans
from evalkit.spark.stream_sink import read_parts

T0 = 1_760_000_000_000_000_000
CHECK = """EVALUATION_LEVEL = "SESSION"

def lambda_handler(event, context):
    spans = event["evaluationInput"]["sessionSpans"]
    ok = any(s["attributes"].get("ok") == "yes" for s in spans)
    return {"label": "PASS" if ok else "FAIL", "value": 1.0 if ok else 0.0, "explanation": f"{len(spans)} spans"}
"""


def _span(session, trace: int, span: int, second: float, **attrs) -> dict:
    attributes = [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]
    if session is not None:
        attributes.append({"key": "session.id", "value": {"stringValue": session}})
    start = T0 + int(second * 1e9)
    return {
        "traceId": f"{trace:032X}",
        "spanId": f"{span:016x}",
        "name": "invoke_agent",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 200_000_123),  # nanoseconds: Spark keeps microseconds
        "attributes": attributes,
    }


def _request(spans: list[dict], service: str = "svc") -> dict:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]
    }


def _sessions(first: int, count: int, second: float) -> list[dict]:
    """One exported request per session: a root span with session.id, a child span without (same trace)."""
    requests = []
    for number in range(first, first + count):
        attrs = {"ok": "yes" if number % 3 else "no", "team": "blue" if number % 4 else "red"}
        requests.append(
            _request(
                [
                    _span(f"s{number}", number + 1, 1, second + number, **attrs),
                    _span(None, number + 1, 2, second + number + 0.5),
                ]
            )
        )
    return requests


def put(folder: Path, name: str, requests: list[dict]) -> None:
    """A file appears in the source folder whole, as after the Collector's rotation: written, then moved in."""
    staging = folder.parent / f".{name}.tmp"
    staging.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    os.replace(staging, folder / name)


@pytest.fixture
def stream_dirs(tmp_path):
    source, custom = tmp_path / "spans", tmp_path / "custom-evaluators"
    source.mkdir()
    (custom / "check").mkdir(parents=True)
    (custom / "check" / "check.py").write_text(CHECK)
    return source, custom, tmp_path / "sink"


def stream_args(source, custom, sink, *extra) -> list[str]:
    return ["spans", "stream", "--source", str(source), "--sink", str(sink), "--evaluator", "check",
            "--custom-dir", str(custom), "--session-timeout", "30s", "--watermark", "5s", "--once",
            "--max-files-per-trigger", "1", *extra]  # fmt: skip


def test_sessions_are_sampled_filtered_and_evaluated_as_spans_serve_does(spark, stream_dirs, capsys):
    source, custom, sink = stream_dirs
    put(source, "spans-a.json", _sessions(0, 24, 0))
    put(
        source, "spans-b.json", [_request([_span("clock", 999, 1, 3600)])]
    )  # event time moves on: the 24 close
    live = json.dumps(_request([_span("live", 555, 1, 10, ok="yes", team="blue")]))
    (source / "spans.json").write_text(
        live + "\n" + live[:40]
    )  # the file the Collector is still appending to
    extra = ("--sampling", "50", "--filter", "team=blue", "--source-glob", "spans-*.json")
    assert cli(stream_args(source, custom, sink, *extra)) == 0
    results = read_parts(sink)
    expected = {f"s{n}" for n in range(24) if n % 4 and sampled(f"s{n}", 50)}  # team=blue: n % 4 != 0
    assert sampled("live", 50)  # so only --source-glob keeps it out
    assert 3 <= len(expected) < 24
    assert sorted(r["attributes"]["session.id"] for r in results) == sorted(expected)  # once each
    for result in results:
        number = int(result["attributes"]["session.id"][1:])
        attributes = result["attributes"]
        assert attributes["gen_ai.evaluation.score.label"] == ("PASS" if number % 3 else "FAIL")
        assert attributes["gen_ai.evaluation.explanation"] == "2 spans"  # the child span found its session
        assert attributes["service.name"] == "svc" and result["name"] == "gen_ai.evaluation.result"
    assert [r["sequence"] for r in results] == list(range(1, len(results) + 1))
    metrics = read_parts(sink, "metrics")
    assert len(metrics) == len(results)
    assert metrics[0]["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Bedrock-AgentCore/Evaluations"
    assert {m["check"] for m in metrics} <= {0.0, 1.0} and metrics[0]["service.name"] == "svc"
    assert f"{len(results)} results for {len(expected)} sessions" in capsys.readouterr().out

    parquet = sink.parent / "sink-parquet"
    assert cli(stream_args(source, custom, parquet, *extra, "--format", "parquet")) == 0
    frame = pd.read_parquet(parquet / "results.parquet")
    assert sorted(frame["session_id"]) == sorted(expected)
    assert set(frame.columns) >= {"session_id", "session_end", "evaluator", "passed", "entry"}


CRASH = """
import os, sys
from evalkit.spark.session import get_session
from evalkit.spark import stream_sink
get_session("local[2]", config={"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"})
write = stream_sink.SessionSink.__call__

def write_then_die(self, batch, batch_id):
    write(self, batch, batch_id)
    if (self.folder / "results" / stream_sink.part_name(batch_id)).exists():
        os._exit(9)  # the output is written, the batch's commit is not: the worst moment to die

stream_sink.SessionSink.__call__ = write_then_die
from evalkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_and_restarted_query_gives_each_session_once(spark, stream_dirs, tmp_path):
    source, custom, sink = stream_dirs
    put(source, "a.json", _sessions(0, 10, 0))
    put(source, "b.json", [_request([_span("clock-1", 998, 1, 1000)])])
    script = tmp_path / "crash.py"
    script.write_text(textwrap.dedent(CRASH))
    proc = subprocess.run(
        [sys.executable, str(script), *stream_args(source, custom, sink)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )  # fmt: skip
    assert proc.returncode == 9, proc.stderr[-3000:]
    written = sorted((sink / "results").iterdir())
    assert len(written) == 1
    before = written[0].read_bytes()
    batch = int(written[0].stem.split("-")[1])
    commits = sink / "_checkpoint" / "commits"
    assert not (commits / str(batch)).exists() and (sink / "_checkpoint" / "offsets" / str(batch)).exists()

    put(source, "c.json", _sessions(10, 10, 2000))  # more traffic arrives while the job is down
    put(source, "d.json", [_request([_span("clock-2", 997, 1, 5000)])])
    assert cli(stream_args(source, custom, sink)) == 0  # restarted from the checkpoint
    assert (sink / "results" / written[0].name).read_bytes() == before  # the replayed batch, identical
    results = read_parts(sink)
    sessions = [r["attributes"]["session.id"] for r in results]
    assert sorted(sessions) == sorted({f"s{n}" for n in range(20)} | {"clock-1"})
    assert len(sessions) == len(set(sessions))
    assert [r["sequence"] for r in results] == list(range(1, len(results) + 1))
    assert cli(stream_args(source, custom, sink)) == 0  # nothing new: nothing written again
    assert read_parts(sink) == results


def test_lines_are_read_as_otlp_json_protobuf_and_flat_documents():
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = _request([_span("p1", 7, 1, 0, ok="yes"), _span(None, 7, 2, 1)])
    message = ParseDict(request, ExportTraceServiceRequest()).SerializeToString()
    from_proto = _spans(message, "otlp_proto")
    from_json = _spans(json.dumps(request), "lines")
    assert [s for s, _ in from_proto] == [s for s, _ in from_json] == ["p1", "p1"]
    assert (
        from_proto[0][1]["attributes"] == from_json[0][1]["attributes"] == {"ok": "yes", "session.id": "p1"}
    )
    flat = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "x", "startTimeUnixNano": 1, "endTimeUnixNano": 2,
            "attributes": {"session.id": "f1"}}  # fmt: skip
    assert [s for s, _ in _spans(json.dumps(flat))] == ["f1"]
    assert _spans("not json") == [] and _spans(b"\x00garbage", "otlp_proto") == []


def test_kafka_source_options_and_a_missing_connector(spark, stream_dirs, capsys):
    from evalkit.spark.streaming import kafka_options

    options = kafka_options({"bootstrap_servers": "broker:9092", "topic": "otlp_spans",
                             "options": {"kafka.security.protocol": "SASL_SSL"}})  # fmt: skip
    assert options == {
        "kafka.bootstrap.servers": "broker:9092", "subscribe": "otlp_spans", "startingOffsets": "earliest",
        "failOnDataLoss": "true", "kafka.security.protocol": "SASL_SSL",
    }  # fmt: skip
    source, custom, sink = stream_dirs
    args = ["spans", "stream", "--kafka-bootstrap", "broker:9092", "--kafka-topic", "otlp_spans", "--sink",
            str(sink), "--evaluator", "check", "--custom-dir", str(custom), "--once"]  # fmt: skip
    assert cli(args) == 3
    assert f"--packages org.apache.spark:spark-sql-kafka-0-10_2.13:{spark.version}" in capsys.readouterr().err


def test_configuration_mistakes_are_refused_before_the_query_starts(spark, stream_dirs, capsys):
    source, custom, sink = stream_dirs
    assert cli(stream_args(source, custom, sink, "--filter", "nonsense")) == 2
    assert "filter 'nonsense'" in capsys.readouterr().err
    assert cli([*stream_args(source, custom, sink)[:-2], "--evaluator", "missing"]) == 2
    assert cli(stream_args(source / "absent", custom, sink)) == 2
    assert "no such folder" in capsys.readouterr().err
    assert not sink.exists()
