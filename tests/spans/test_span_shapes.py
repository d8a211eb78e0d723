"""Span files in the shapes people keep on disk, and sessions as users have them (issue 21, items 3 and 4).

The fixtures in ``tests/data/shapes/`` were written by the OpenTelemetry Python SDK (``capture_sdk.py``, run
again here into a temporary folder) or copied from opentelemetry-proto and AWS's bedrock-agentcore SDK tests
(``SOURCE.md`` says where from, under which licence). Hand-written files are edge cases, made in the tests.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.errors import EvalkitError
from evalkit.spans.reading.session_ids import SESSION_ATTRIBUTES, assign_sessions, session_id_of
from tests.spans.test_spans import run_cli, write_evaluator

SHAPES = Path(__file__).resolve().parents[1] / "data" / "shapes"
COLLECTOR = SHAPES / "collector_file_exporter.jsonl"
CONSOLE_SPANS = SHAPES / "sdk_console_spans.json"
TO_JSON_LINES = SHAPES / "sdk_to_json_spans.jsonl"
CONSOLE_LOGS = SHAPES / "sdk_console_logs.json"
OTLP_PROTOBUF_JSON = SHAPES / "sdk_otlp_protobuf.json"
MERGED = SHAPES / "agentcore_sdk_merged_spans.json"
SPAN_EVENTS = SHAPES / "agentcore_sdk_span_events.json"


def load(path, **kwargs):
    return spans.load(path, warn=False, **kwargs)


def files_summary(frame) -> list[str]:
    return [entry["summary"] for entry in frame.attrs["files"]]


# --- the OpenTelemetry Collector's file exporter ---------------------------------------------------------


def test_collector_file_exporter_lines_mix_traces_logs_and_metrics(caplog):
    with caplog.at_level(logging.INFO, logger="evalkit.spans.reading.loading"):
        df = load(COLLECTOR)
    assert df["signal"].tolist() == ["span", "record", "record"]
    span, record, event = df["document"].tolist()
    assert span["traceId"] == "5b8efff798038103d269b633813fc60c" and span["kind"] == "SERVER"
    assert (
        span["parentSpanId"] == "eee19b7ec3c1b173"
        and span["resource"]["attributes"]["service.name"] == "my.service"
    )
    assert record["spanId"] == "eee19b7ec3c1b174" and record["body"] == "Example log record"
    assert record["attributes"]["map.attribute"] == {"some.map.key": "some value"}
    # opentelemetry-proto's events.json writes kvlistValue as a bare list: read, not a traceback
    assert event["body"]["title"] == "Free Online GUID Generator" and event["body"]["type"] == 0
    assert df["name"].tolist()[2] == "browser.page_view"
    # the record joins its span's session; the trace has no session attribute, so it is its own session
    assert df["session_id"].tolist()[:2] == [span["traceId"]] * 2
    assert pd_isna(df["session_id"].tolist()[2])
    (summary,) = files_summary(df)
    assert summary.endswith(
        "collector_file_exporter.jsonl: 1 span(s) + 2 event record(s) (OpenTelemetry Collector file exporter "
        "lines: 2 × OTLP JSON resourceLogs, 1 × OTLP JSON resourceMetrics, skipped, 1 × OTLP JSON resourceSpans)"
    )
    assert summary in caplog.text
    problems = df.attrs["problems"]
    assert sum("each is evaluated as its own session" in p for p in problems) == 1
    assert any("1 event record(s) carry no trace id and no session attribute" in p for p in problems)


def pd_isna(value) -> bool:
    return value is None or value != value


# --- the OpenTelemetry Python SDK: console exporter stream, to_json() lines, OTLP encoder ----------------


def _comparable(df):
    rows = []
    for doc in df["document"]:
        rows.append(
            (
                doc["traceId"],
                doc["spanId"],
                doc.get("parentSpanId"),
                doc["name"],
                doc["kind"],
                doc["status"]["code"],
                json.dumps(doc["attributes"], sort_keys=True),
                [(e["name"], e["attributes"]) for e in doc.get("events", [])],
                doc["resource"]["attributes"]["service.name"],
            )
        )
    return sorted(rows)


def test_sdk_console_stream_to_json_lines_and_otlp_encoding_are_the_same_spans():
    console, lines, otlp = load(CONSOLE_SPANS), load(TO_JSON_LINES), load(OTLP_PROTOBUF_JSON)
    assert len(console) == len(lines) == len(otlp) == 5
    assert _comparable(console) == _comparable(lines) == _comparable(otlp)
    # to_json() prints microseconds (rounded through a float): within 1 µs of the OTLP encoder's nanoseconds
    exact = otlp.set_index("span_id")["start_ns"]
    printed = console.set_index("span_id")["start_ns"]
    assert (abs(printed - exact.loc[printed.index]) <= 1000).all() and (printed % 1000 == 0).all()
    assert (
        "OpenTelemetry SDK console exporter output: 5 × OpenTelemetry SDK ReadableSpan.to_json()"
        in (files_summary(console)[0])
    )
    assert "OpenTelemetry SDK to_json() JSON lines" in files_summary(lines)[0]
    assert "OTLP JSON: 1 × OTLP JSON resourceSpans" in files_summary(otlp)[0]
    root = console[console["name"] == "invoke_agent weather"].iloc[0]
    assert root["kind"] == "INTERNAL" and root["status_code"] == "UNSET" and root["parent_span_id"] is None
    assert (
        root["response_text"] == "Sunny, 21 °C."
    )  # the answer only: the user message event is not response text
    tools = console[console["is_tool"]]
    assert tools["tool_name"].tolist() == ["get_weather", "get_forecast"]
    assert tools["tool_output"].tolist() == ["sunny, 21 C", "rain, 15 C"]
    assert set(tools["parent_span_id"]) <= set(console["span_id"])


def test_sessions_from_gen_ai_conversation_id_and_each_trace_without_one_its_own(tmp_path):
    df = load(CONSOLE_SPANS)
    table = spans.sessions(df).set_index("session_id")
    health = df[df["name"] == "health_check"].iloc[0]
    assert table.loc["conv-weather-1", "traces"] == 2 and table.loc["conv-weather-1", "spans"] == 4
    assert table.loc["conv-weather-1", "tool_calls"] == 2
    assert health["session_id"] == health["trace_id"]  # its own session, named by its trace id
    notices = [p for p in df.attrs["problems"] if "own session" in p]
    assert notices == [
        f"{CONSOLE_SPANS}: 1 trace(s) carry no 'session.id', 'gen_ai.conversation.id' or another session "
        "attribute (on a span, its resource or its trace); each is evaluated as its own session (session id = "
        "trace id); name the attribute with --session-attribute"
    ]
    named = load(CONSOLE_SPANS, session_attribute="gen_ai.agent.name")
    assert set(named["session_id"]) == {"weather", health["trace_id"]}
    assert "carry no 'gen_ai.agent.name'" in " ".join(named.attrs["problems"])


def test_sdk_console_log_records_join_the_spans_of_their_trace(tmp_path):
    for path in (CONSOLE_SPANS, CONSOLE_LOGS):
        shutil.copy(path, tmp_path / path.name)
    df = load(tmp_path)
    records = df[df["signal"] == "record"]
    assert len(records) == 2 and set(records["session_id"]) == {"conv-weather-1"}
    assert records["name"].tolist() == ["weather.agent"] * 2
    first = records["document"].iloc[0]
    assert first["body"]["output"]["messages"] == [{"role": "assistant", "content": "Sunny, 21 °C."}]
    assert first["severityNumber"] == 9 and "startTimeUnixNano" not in first
    roots = df[(df["name"] == "invoke_agent weather")]
    assert sorted(records["span_id"]) == sorted(roots["span_id"])  # each record under its root span
    assert spans.sessions(df).set_index("session_id").loc["conv-weather-1", "records"] == 2
    summaries = files_summary(df)
    assert any(
        "0 span(s) + 2 event record(s) (OpenTelemetry SDK console exporter output: 2 × "
        "OpenTelemetry SDK LogRecord.to_json())" in s
        for s in summaries
    )


def test_a_fresh_capture_from_the_installed_sdk_reads_the_same_way(tmp_path):
    spec = importlib.util.spec_from_file_location("capture_sdk", SHAPES / "capture_sdk.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.capture(tmp_path)
    for name in ("sdk_console_spans.json", "sdk_to_json_spans.jsonl", "sdk_otlp_protobuf.json"):
        fresh, committed = load(tmp_path / name), load(SHAPES / name)
        assert fresh["name"].tolist() == committed["name"].tolist()
        assert fresh["kind"].tolist() == committed["kind"].tolist()
        assert (fresh["session_id"] == "conv-weather-1").sum() == 4
        assert fresh.attrs["files"][0]["layout"] == committed.attrs["files"][0]["layout"]
    logs = load(tmp_path / "sdk_console_logs.json")
    assert logs["signal"].tolist() == ["record", "record"]


# --- AWS's bedrock-agentcore SDK: the merged format (span_events bodies), no session id --------------------


def test_agentcore_sdk_merged_format_span_events_become_event_records():
    df = load(MERGED)
    assert df["signal"].tolist() == ["span", "record"]
    span, record = df["document"].tolist()
    assert span["name"] == "invoke_agent" and "span_events" not in span and "events" not in span
    assert record["traceId"] == "trace1" and record["spanId"] == "span1"
    assert record["eventName"] == "strands.telemetry.tracer" and record["scope"] == span["scope"]
    assert record["timeUnixNano"] == 2_000_000_000  # the span's end: the entry has no time of its own
    assert record["body"]["output"]["messages"][0]["content"]["message"] == "AI is artificial intelligence."
    assert df["session_id"].tolist() == ["trace1", "trace1"]
    assert "snake_case span dicts" in files_summary(df)[0]


def test_agentcore_sdk_span_events_without_names_or_times_load():
    df = load(SPAN_EVENTS)
    assert df["signal"].tolist().count("span") == 3 and df["signal"].tolist().count("record") == 2
    assert set(df["session_id"]) == {"abc123", "integ-trace-1"}
    assert (df[df["signal"] == "span"]["name"] == "").all()
    records = df[df["signal"] == "record"]
    assert sorted(records["span_id"]) == ["integ-span-1", "span1"]
    assert spans.sessions(df).set_index("session_id").loc["abc123", "records"] == 1


def test_spans_eval_runs_a_code_evaluator_on_the_merged_format(tmp_path, capsys):
    custom = tmp_path / "custom-evaluators"
    write_evaluator(
        custom,
        "answer_present",
        """
        EVALUATION_LEVEL = "SESSION"
        def lambda_handler(event, context):
            docs = event["evaluationInput"]["sessionSpans"]
            answers = [m["content"]["message"] for d in docs if "body" in d
                       for m in d["body"]["output"]["messages"] if m["role"] == "assistant"]
            kinds = ",".join("record" if "body" in d else "span" for d in docs)
            return {"label": "PASS" if answers else "FAIL", "value": 1.0 if answers else 0.0,
                    "explanation": kinds + ": " + " | ".join(answers)}
        """,
    )
    out = tmp_path / "out"
    argv = ["spans", "eval", str(MERGED), "--evaluator", "answer_present", "--custom-dir", str(custom)]
    assert run_cli([*argv, "--out", str(out), "--fail-under", "1"]) == 0
    (entry,) = json.loads((out / "results.json").read_text())["evaluationResults"]
    assert entry["context"]["spanContext"]["sessionId"] == "trace1"
    assert entry["label"] == "PASS" and entry["explanation"] == "span,record: AI is artificial intelligence."
    captured = capsys.readouterr()
    assert "each is evaluated as its own session" in captured.err
    assert "1 span + 1 event record, 1 session evaluated: 1 result" in captured.out


def test_spans_eval_session_attribute_and_log_level_info(tmp_path, capsys):
    custom = tmp_path / "custom-evaluators"
    write_evaluator(
        custom,
        "count",
        """
        EVALUATION_LEVEL = "SESSION"
        def lambda_handler(event, context):
            return {"label": "PASS", "value": 1.0,
                    "explanation": str(len(event["evaluationInput"]["sessionSpans"]))}
        """,
    )
    from evalkit.cli import setup_logging

    out = tmp_path / "out"
    argv = ["spans", "eval", str(CONSOLE_SPANS), "--evaluator", "count", "--custom-dir", str(custom)]
    argv += ["--out", str(out), "--session-attribute", "gen_ai.agent.name", "--log-level", "info"]
    setup_logging("info")
    try:
        assert run_cli(argv) == 0
    finally:
        setup_logging("warning")
    results = json.loads((out / "results.json").read_text())["evaluationResults"]
    by_session = {r["context"]["spanContext"]["sessionId"]: r["explanation"] for r in results}
    assert by_session["weather"] == "4" and len(by_session) == 2
    assert "(OpenTelemetry SDK console exporter output: 5 × OpenTelemetry SDK ReadableSpan.to_json())" in (
        capsys.readouterr().err
    )


# --- snake_case span dicts: edge cases (hand-written) ---------------------------------------------------


def test_snake_case_span_dict_ids_times_events_and_string_bodies(tmp_path):
    path = tmp_path / "snake.jsonl"
    rows = [
        {
            "trace_id": "0x0AF7651916CD43DD8448EB211C80319C",
            "span_id": "0xb7ad6b7169203331",
            "parent_span_id": None,
            "name": "invoke_agent",
            "start_time": 1_700_000_000_000_000_000,
            "end_time": "2023-11-14T22:13:21.5Z",
            "kind": "SpanKind.SERVER",
            "status_code": "ERROR",
            "attributes": {"session.id": "s-1"},
            "span_events": [
                {
                    "event_name": "gen_ai.user.message",
                    "attributes": {"content": "hi"},
                    "timestamp": 1_700_000_000_1,
                },
                {"event_name": "strands.telemetry.tracer", "body": json.dumps({"output": {"messages": []}})},
            ],
        },
        {
            "trace_id": "0af7651916cd43dd8448eb211c80319c",
            "span_id": "c7ad6b7169203331",
            "parent_span_id": "b7ad6b7169203331",
            "name": "execute_tool x",
            "start_time": 1_700_000_000_200_000_000,
            "end_time": 1_700_000_000_300_000_000,
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    df = load(path)
    assert df["signal"].tolist() == ["span", "span", "record"]  # the record at its span's end
    span, child, record = df["document"].tolist()
    assert span["traceId"] == "0af7651916cd43dd8448eb211c80319c" and span["spanId"] == "b7ad6b7169203331"
    assert "parentSpanId" not in span and span["kind"] == "SERVER" and span["status"] == {"code": "ERROR"}
    assert span["endTimeUnixNano"] == 1_700_000_001_500_000_000
    assert span["events"] == [
        {"attributes": {"content": "hi"}, "name": "gen_ai.user.message", "timeUnixNano": 1_700_000_000_1}
    ]
    assert (
        record["body"] == {"output": {"messages": []}} and record["timeUnixNano"] == span["endTimeUnixNano"]
    )
    assert child["parentSpanId"] == "b7ad6b7169203331"
    assert df["session_id"].tolist() == ["s-1"] * 3
    assert df.attrs["problems"] == []


# --- files of no known shape, torn streams ----------------------------------------------------------------


def test_a_strands_evals_session_dump_is_read_like_a_bare_list_of_spans(tmp_path):
    path = SHAPES / "strands_evals_session_dump.json"
    dump = json.loads(path.read_text())
    df = load(path)
    assert len(df) == dump["span_count"] == 8 and set(df["signal"]) == {"span"}
    assert sorted(d["spanId"] for d in df["document"]) == sorted(s["span_id"] for s in dump["spans"])
    assert set(df["session_id"]) == {dump["session_id"]}
    assert files_summary(df) == [
        f"{path}: 8 span(s) + 0 event record(s) (one JSON document: 8 × snake_case span dicts)"
    ]
    # one dump per line too; a bad span inside is named by its place in the list
    lines = tmp_path / "dumps.jsonl"
    bad = {"session_id": "s2", "spans": [dump["spans"][0], 7]}
    lines.write_text(json.dumps(dump) + "\n" + json.dumps(bad) + "\n")
    df = load(lines)
    assert len(df) == 8  # the repeated span is dropped as a duplicate
    assert (
        df.attrs["problems"][0]
        == f"{lines}: line 2: spans[1]: expected a span (a JSON object), found a number"
    )


def test_a_file_of_unknown_shape_says_what_it_looked_for(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"metric": "cpu", "value": 3}\n{"metric": "mem", "value": 4}\n')
    with pytest.raises(EvalkitError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: no valid span found\n  - {path}: line 1: not a span or event record")
    assert "looked for 'resourceSpans' / 'resourceLogs' (OTLP JSON)" in message
    assert (
        "'context.trace_id' (OpenTelemetry SDK to_json())" in message
        and "found keys: metric, value" in message
    )
    assert len(caught.value.problems) == 2


def test_a_torn_object_in_a_console_stream_costs_only_itself(tmp_path):
    objects = CONSOLE_SPANS.read_text().split("\n}\n")
    assert len(objects) == 6  # five objects and the trailing empty text
    torn = objects[1][: len(objects[1]) // 2]
    path = tmp_path / "console.json"
    path.write_text("\n}\n".join([objects[0], torn, *objects[2:]]))
    df = load(path)
    assert len(df) == 4
    (problem,) = [p for p in df.attrs["problems"] if "not valid JSON" in p]
    line = objects[0].count("\n") + 3
    assert problem.startswith(f"{path}: object 2 (line {line}): not valid JSON (")


# --- session ids: the attribute list, the receiver's and the stream's use of it -------------------------


@pytest.mark.parametrize(
    "attrs, resource, expected",
    [
        ({"session.id": "a", "gen_ai.conversation.id": "b"}, {}, "a"),
        ({"gen_ai.conversation.id": "b"}, {"session.id": "r"}, "b"),  # the span's own attributes first
        ({}, {"session.id": "r"}, "r"),
        ({"langfuse.session.id": "lf"}, {}, "lf"),
        ({"traceloop.association.properties.chat_id": "chat12345"}, {}, "chat12345"),
        ({"langsmith.metadata.thread_id": "th"}, {}, "th"),
        ({"metadata": json.dumps({"thread_id": "lg-1", "langgraph_step": 2})}, {}, "lg-1"),
        ({"session.id": "  ", "gen_ai.conversation.id": 42}, {}, "42"),
        ({"user.id": "u"}, {}, None),
    ],
)
def test_session_attributes_in_order(attrs, resource, expected):
    assert session_id_of(attrs, resource) == expected


def test_session_attribute_list_starts_with_the_otel_names():
    assert SESSION_ATTRIBUTES[:2] == ("session.id", "gen_ai.conversation.id")


def test_assign_sessions_records_spans_traces_and_known_traces():
    docs = [
        {"traceId": "t1", "spanId": "s1", "startTimeUnixNano": 1, "attributes": {}},
        {"traceId": "t1", "spanId": "s2", "startTimeUnixNano": 2, "attributes": {"session.id": "S"}},
        {"traceId": "t1", "spanId": "s2", "timeUnixNano": 3, "attributes": {}},
        {"traceId": "t2", "spanId": "s3", "startTimeUnixNano": 1, "attributes": {}},
        {"traceId": "t3", "spanId": "s4", "startTimeUnixNano": 1, "attributes": {}},
        {"timeUnixNano": 5, "attributes": {}},
    ]
    ids, own = assign_sessions(docs, known={"t3": "earlier"})
    assert ids == ["S", "S", "S", "t2", "earlier", None] and own == 1


def test_stream_lines_use_the_same_session_rule():
    from evalkit.spark.stream_executor import _spans

    line = COLLECTOR.read_text().split("\n")[1]  # a TracesData line: one child span, its root not in it
    ((session, doc),) = _spans(line)
    assert session is None  # its root may name a session in another line: not made a session of its own
    ((session, _),) = _spans(line, "lines", "service.name")
    assert session == "my.service"
    request = json.loads(OTLP_PROTOBUF_JSON.read_text())
    found = {d["name"]: s for s, d in _spans(json.dumps(request))}
    assert found["execute_tool get_weather"] == found["invoke_agent weather"] == "conv-weather-1"
    health = [d for s, d in _spans(json.dumps(request)) if d["name"] == "health_check"][0]
    assert found["health_check"] == health["traceId"]  # a root without a session: its own session


def test_stream_lines_of_sdk_to_json_and_snake_case_spans():
    from evalkit.spark.stream_executor import _spans

    to_json = TO_JSON_LINES.read_text().split("\n")
    found = [_spans(line) for line in to_json if line]
    assert [s for ((s, _),) in found].count(
        "conv-weather-1"
    ) == 2  # the roots; their tools are in other lines
    merged = json.dumps(json.loads(MERGED.read_text())[0])
    assert [("record" if "body" in d else "span", s) for s, d in _spans(merged)] == [
        ("span", "trace1"),
        ("record", "trace1"),
    ]


def _requests(*groups):
    """OTLP JSON request bodies, each with the named spans of the SDK's own encoding (resource kept)."""
    request = json.loads(OTLP_PROTOBUF_JSON.read_text())
    block = request["resourceSpans"][0]
    scope = block["scopeSpans"][0]
    for names in groups:
        chosen = [s for s in scope["spans"] if s["name"] in names]
        part = {"resourceSpans": [{**block, "scopeSpans": [{**scope, "spans": chosen}]}]}
        yield json.dumps(part).encode()


def test_receiver_joins_children_sent_before_their_root_and_makes_sessionless_traces_sessions(tmp_path):
    turn = ({"execute_tool get_weather"}, {"invoke_agent weather", "health_check"})
    for attribute, expected in ((None, "conv-weather-1"), ("gen_ai.agent.name", "weather")):
        server = spans.serve(tmp_path / f"store-{attribute}", session_attribute=attribute).start()
        try:
            for body in _requests(*turn):
                assert server.ingest(body, "application/json")[0] == 200
            # the tool span came first, without a session; both turns' roots (and no other tool) after it
            names = sorted(d["name"] for d in server.store.session_documents(expected))
            assert names == ["execute_tool get_weather", "invoke_agent weather", "invoke_agent weather"]
        finally:
            server.stop()
    server = spans.serve(tmp_path / "store-none", session_attribute="no.such.attribute").start()
    try:
        for body in _requests(*turn):
            server.ingest(body, "application/json")
        docs = server.store.session_documents(_trace_of("execute_tool get_weather"))
        assert sorted(d["name"] for d in docs) == ["execute_tool get_weather", "invoke_agent weather"]
        assert len(server.store.session_documents(_trace_of("health_check"))) == 1
    finally:
        server.stop()


def _trace_of(name: str) -> str:
    return load(TO_JSON_LINES).set_index("name").loc[name, "trace_id"]


# --- OpenInference and Traceloop instrumentations, calling evalkit's ModelServer ----------------------------

OPENINFERENCE = SHAPES / "openinference_console_spans.json"
TRACELOOP = SHAPES / "traceloop_to_json_spans.jsonl"


def _check_openinference(df):
    assert df["name"].tolist() == ["ChatCompletion", "ChatCompletion"]
    assert set(df["session_id"]) == {"oi-session-1"} and df["trace_id"].nunique() == 2  # using_session
    assert df.attrs["problems"] == []
    first = df["document"].iloc[0]["attributes"]
    assert first["llm.input_messages.0.message.content"] == "What is the capital of France?"
    assert df["status_code"].tolist() == ["OK", "OK"]


def _check_traceloop(df):
    assert df["name"].tolist() == ["openai.chat", "openai.chat"] and df["kind"].tolist() == ["CLIENT"] * 2
    assert (df["session_id"] == df["trace_id"]).all()  # no session attribute: each call its own session
    assert sum("2 trace(s) carry no" in p for p in df.attrs["problems"]) == 1
    messages = json.loads(df["document"].iloc[1]["attributes"]["gen_ai.input.messages"])
    assert messages[0]["parts"][0]["content"] == "And of Italy?"


def test_openinference_and_traceloop_captures_load():
    _check_openinference(load(OPENINFERENCE))
    _check_traceloop(load(TRACELOOP))


def test_a_fresh_capture_of_both_instrumentations_reads_the_same_way(tmp_path):
    pytest.importorskip("openinference.instrumentation.openai")
    pytest.importorskip("opentelemetry.instrumentation.openai")
    spec = importlib.util.spec_from_file_location(
        "capture_instrumentations", SHAPES / "capture_instrumentations.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.capture(tmp_path)
    _check_openinference(load(tmp_path / OPENINFERENCE.name))
    _check_traceloop(load(tmp_path / TRACELOOP.name))
