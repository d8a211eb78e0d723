"""Spans in (OTLP JSON, CloudWatch-style JSONL, the OpenTelemetry SDK) and AgentCore-style Lambda evaluators.

The fixtures under ``tests/data/spans/`` are written by hand: ``market.jsonl`` holds session ``sess-a`` (two
traces, three tool spans found three different ways, an agent answer in a ``gen_ai.choice`` event) and session
``sess-b`` (its id on the resource only); ``malformed.jsonl`` mixes valid spans with broken lines.
"""

from __future__ import annotations

import argparse
import base64
import csv
import json
import re
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from evalkit import spans
from evalkit.cli.spans import command as spans_command
from evalkit.errors import EvalkitError

DATA = Path(__file__).resolve().parents[1] / "data" / "spans"
MARKET = DATA / "market.jsonl"
MALFORMED = DATA / "malformed.jsonl"
T1 = "0af7651916cd43dd8448eb211c80319c"
T2 = "1bf7651916cd43dd8448eb211c80319d"
T3 = "2cf7651916cd43dd8448eb211c80319e"

RECORDER = """
    import json

    CALLS = []

    def lambda_handler(event, context):
        CALLS.append({"event": event, "function_name": context.function_name,
                      "request_id": context.aws_request_id,
                      "remaining": context.get_remaining_time_in_millis()})
        spans = event["evaluationInput"]["sessionSpans"]
        return {"label": "PASS", "value": 1.0, "explanation": f"{len(spans)} spans"}
"""


def write_evaluator(custom: Path, name: str, source: str) -> Path:
    home = custom / name
    home.mkdir(parents=True, exist_ok=True)
    path = home / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def evaluator(tmp_path: Path, name: str, source: str, **kwargs) -> spans.SpanEvaluator:
    write_evaluator(tmp_path / "custom-evaluators", name, source)
    return spans.load_span_evaluator(name, tmp_path / "custom-evaluators", **kwargs)


def returning(value: str, level: str = "SESSION") -> str:
    """Source of an evaluator whose handler returns (or does) ``value``."""
    return f"EVALUATION_LEVEL = {level!r}\n\ndef lambda_handler(event, context):\n    {value}\n"


# --- a converter from span documents to OTLP JSON, written independently of the loader ---------------------


def otlp_value(value):
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [otlp_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": otlp_attributes(value)}}
    return {"stringValue": value}


def otlp_attributes(attributes: dict) -> list:
    return [{"key": k, "value": otlp_value(v)} for k, v in attributes.items()]


KIND_NUMBERS = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
STATUS_NUMBERS = {"UNSET": 0, "OK": 1, "ERROR": 2}


def to_otlp(docs: list[dict]) -> dict:
    """Group span documents by resource and scope into one OTLP/HTTP JSON export request."""
    blocks: dict[str, dict] = {}
    for doc in docs:
        resource = doc.get("resource") or {}
        block = blocks.setdefault(
            json.dumps(resource, sort_keys=True),
            {"resource": {"attributes": otlp_attributes(resource.get("attributes", {}))}, "scopes": {}},
        )
        scope = doc.get("scope") or {}
        spans_of_scope = block["scopes"].setdefault(json.dumps(scope, sort_keys=True), (scope, []))[1]
        span = {"traceId": doc["traceId"], "spanId": doc["spanId"]}
        if doc.get("parentSpanId"):
            span["parentSpanId"] = doc["parentSpanId"]
        span["name"] = doc["name"]
        span["kind"] = KIND_NUMBERS[doc["kind"]]
        span["startTimeUnixNano"] = str(doc["startTimeUnixNano"])
        span["endTimeUnixNano"] = str(doc["endTimeUnixNano"])
        span["attributes"] = otlp_attributes(doc.get("attributes", {}))
        if doc.get("events"):
            span["events"] = [
                {
                    "timeUnixNano": str(e["timeUnixNano"]),
                    "name": e["name"],
                    "attributes": otlp_attributes(e.get("attributes", {})),
                }
                for e in doc["events"]
            ]
        code = STATUS_NUMBERS[doc["status"]["code"]]
        span["status"] = {
            "code": code,
            **({"message": doc["status"]["message"]} if "message" in doc["status"] else {}),
        }
        if not code:
            span["status"] = {}  # proto3 JSON leaves default values out
        spans_of_scope.append(span)
    return {
        "resourceSpans": [
            {
                "resource": b["resource"],
                "scopeSpans": [{"scope": s, "spans": sp} for s, sp in b["scopes"].values()],
            }
            for b in blocks.values()
        ]
    }


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- loading -----------------------------------------------------------------------------------------------


def test_load_jsonl_derives_columns_from_the_fact_sheet_attributes():
    df = spans.load(MARKET)
    assert list(df.columns) == list(spans.COLUMNS)
    assert len(df) == 10
    assert df["start_ns"].is_monotonic_increasing  # file order was export (end) order
    assert df["start_ns"].dtype == "uint64"  # OTLP's fixed64: up to 2^64-1 (issue 29)
    by_id = df.set_index("span_id")
    assert by_id.loc["c000000000000001", "session_id"] == "sess-b"  # from the resource attributes
    assert by_id.loc["b000000000000002", "session_id"] == "sess-a"  # inherited from its trace
    assert by_id.loc["a000000000000001", "parent_span_id"] is None
    assert by_id.loc["a000000000000002", "kind"] == "CLIENT"
    assert by_id.loc["b000000000000003", "status_code"] == "ERROR"
    assert by_id.loc["a000000000000003", "operation"] == "execute_tool"

    tools = df[df["is_tool"]]
    assert tools["span_id"].tolist() == ["a000000000000003", "b000000000000002", "b000000000000003"]
    # gen_ai.tool.name; the span name without "execute_tool "; traceloop.entity.name (a traceloop tool)
    assert tools["tool_name"].tolist() == ["get_stock_data", "search_news", "get_stock_data"]
    assert tools["tool_output"].tolist()[0] == "AAPL: $182.45 (+1.2%)"
    assert tools["tool_output"].tolist()[2] == "MSFT $410.10"
    assert df.loc[~df["is_tool"], "tool_name"].isna().all()

    text = by_id["response_text"]
    assert text["a000000000000004"] == "AAPL is trading at $182.45, up 1.2% today."  # gen_ai.choice event
    assert (
        text["a000000000000002"] is None
    )  # only a gen_ai.user.message event: the user's words, not an answer
    assert (
        text["b000000000000004"] == "Apple unveiled new chips; MSFT trades at $410.10."
    )  # gen_ai.completion
    assert text["c000000000000001"] == "Hello! Ask me about any ticker."  # gen_ai.task.output
    assert text["a000000000000001"] is None

    doc = by_id.loc["a000000000000003", "document"]
    assert doc["attributes"]["gen_ai.tool.name"] == "get_stock_data"
    assert (
        doc["status"] == {"code": "OK"}
        and doc["resource"]["attributes"]["service.name"] == "market-trends-agent"
    )
    assert "parentSpanId" not in by_id.loc["a000000000000001", "document"]
    assert df.attrs["problems"] == []

    table = spans.sessions(df)
    assert table.to_dict("records") == [
        {
            "session_id": "sess-a",
            "traces": 2,
            "spans": 8,
            "records": 0,
            "tool_calls": 3,
            "start_ns": 1700000000000000000,
            "end_ns": 1700000015000000000,
        },
        {
            "session_id": "sess-b",
            "traces": 1,
            "spans": 2,
            "records": 0,
            "tool_calls": 0,
            "start_ns": 1700000020000000000,
            "end_ns": 1700000022000000000,
        },
    ]


def test_otlp_json_and_jsonl_of_the_same_spans_give_identical_frames(tmp_path):
    docs = read_jsonl(MARKET)
    single = tmp_path / "market.otlp.json"
    single.write_text(json.dumps(to_otlp(docs), indent=2))
    per_line = (
        tmp_path / "market.otlp.jsonl"
    )  # one export request per line, as a collector file exporter writes
    per_line.write_text("\n".join(json.dumps(to_otlp([d])) for d in reversed(docs)) + "\n")

    expected = spans.load(MARKET)
    for path in (single, per_line):
        got = spans.load(path)
        pd.testing.assert_frame_equal(got, expected)
        assert got["document"].tolist() == expected["document"].tolist()
        assert got.attrs["problems"] == []


def test_otlp_any_values_ids_and_enums_are_normalised():
    df = spans.load(DATA / "small_otlp.json")
    root, tool = df.to_dict("records")
    assert root["trace_id"] == "5f07651916cd43dd8448eb211c8031a1"  # hex ids lower-cased
    assert tool["parent_span_id"] == "f000000000000001"
    assert root["session_id"] == tool["session_id"] == "sess-x"
    assert root["document"]["attributes"] == {
        "gen_ai.operation.name": "invoke_agent",
        "llm.request.count": 3,
        "llm.temperature": 0.2,
        "agent.streaming": True,
        "agent.tools": ["get_stock_data", "search_news"],
        "agent.config": {"max_steps": 8, "mode": "analyst"},
        "agent.empty": None,
    }
    assert (root["kind"], root["status_code"]) == ("INTERNAL", "UNSET")
    assert (tool["kind"], tool["status_code"]) == ("INTERNAL", "ERROR")
    assert tool["document"]["status"] == {"code": "ERROR", "message": "news feed timed out"}
    assert tool["is_tool"] and tool["tool_name"] == "search_news"
    assert tool["tool_output"] == '{"headline":"Chips rally"}'  # a kvlist output as compact JSON
    assert tool["document"]["events"][0] == {
        "timeUnixNano": 1700000050900000000,
        "name": "exception",
        "attributes": {"exception.type": "TimeoutError"},
    }


def test_opentelemetry_sdk_spans_round_trip_through_otlp_json(tmp_path):
    from google.protobuf.json_format import MessageToDict, MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "market-trends-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("evalkit.test")
    with tracer.start_as_current_span(
        "invoke_agent market_trends_agent", attributes={"session.id": "otel-1"}
    ):
        with tracer.start_as_current_span(
            "execute_tool get_stock_data",
            attributes={"gen_ai.tool.name": "get_stock_data", "gen_ai.tool.call.result": "AMZN $178.20"},
        ) as tool:
            tool.set_status(Status(StatusCode.ERROR, "stale quote"))
        with tracer.start_as_current_span("chat", kind=SpanKind.CLIENT, attributes={"retries": 2}) as chat:
            chat.add_event("gen_ai.choice", {"message": "AMZN trades at $178.20."})
    finished = exporter.get_finished_spans()
    provider.shutdown()
    request = encode_spans(finished)

    # protobuf's own JSON mapping: base64 ids, enum names.
    proto_json = tmp_path / "proto.json"
    proto_json.write_text(MessageToJson(request))
    # the OTLP/HTTP JSON encoding: hex ids, enums as integers.
    otlp = MessageToDict(request, use_integers_for_enums=True)
    for block in otlp["resourceSpans"]:
        for scope in block["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    otlp_json = tmp_path / "otlp.json"
    otlp_json.write_text(json.dumps(otlp))

    df = spans.load(proto_json)
    pd.testing.assert_frame_equal(spans.load(otlp_json), df)
    by_name = {s.name: s for s in finished}
    rows = df.set_index("name")
    assert len(df) == 3 and set(df["session_id"]) == {"otel-1"}
    for name, span in by_name.items():
        assert rows.loc[name, "trace_id"] == format(span.context.trace_id, "032x")
        assert rows.loc[name, "span_id"] == format(span.context.span_id, "016x")
        assert rows.loc[name, "start_ns"] == span.start_time and rows.loc[name, "end_ns"] == span.end_time
    root = by_name["invoke_agent market_trends_agent"]
    assert rows.loc["chat", "parent_span_id"] == format(root.context.span_id, "016x")
    assert rows.loc["execute_tool get_stock_data", "is_tool"]
    assert rows.loc["execute_tool get_stock_data", "tool_output"] == "AMZN $178.20"
    assert rows.loc["execute_tool get_stock_data", "status_code"] == "ERROR"
    assert rows.loc["chat", "kind"] == "CLIENT"
    assert rows.loc["chat", "response_text"] == "AMZN trades at $178.20."
    assert rows.loc["chat", "document"]["attributes"]["retries"] == 2
    assert rows.loc["chat", "document"]["resource"]["attributes"]["service.name"] == "market-trends-agent"


def test_malformed_lines_are_reported_with_file_line_and_field_and_valid_spans_kept():
    with pytest.warns(UserWarning, match="7 problem"):
        df = spans.load(MALFORMED)
    problems = [p.removeprefix(f"{MALFORMED}: ") for p in df.attrs["problems"]]
    assert problems == [
        "line 2: 'traceId' is missing",
        "line 3: not valid JSON (Expecting value at column 1)",
        "line 6: 'startTimeUnixNano' must be an integer (nanoseconds since the epoch), found 'soon'",
        "line 7: expected a span (a JSON object), found a list",
        "line 10: 'attributes' must be an object, found a string",
        "line 11: 'traceId' must be a string, found a number",
        "line 9: duplicate of the span at line 1 (traceId 3df7651916cd43dd8448eb211c80319f, spanId "
        "d000000000000001); ignored",
    ]
    assert df["span_id"].tolist() == ["d000000000000001", "d000000000000003", "e000000000000001"]
    assert spans.sessions(df)["session_id"].tolist() == ["sess-c", "sess-d"]


def test_a_file_without_any_valid_span_is_an_error(tmp_path):
    bad = tmp_path / "spans.jsonl"
    bad.write_text('{"spanId": "x", "name": "a"}\nnope\n')
    with pytest.raises(EvalkitError) as caught:
        spans.load(bad)
    assert "no valid span" in str(caught.value)
    assert f"{bad}: line 1: 'traceId' is missing" in str(caught.value)
    assert f"{bad}: line 2: not valid JSON" in str(caught.value)
    with pytest.raises(EvalkitError, match="span file not found"):
        spans.load(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(EvalkitError, match="the file is empty"):
        spans.load(tmp_path / "empty.jsonl")


def test_a_folder_of_span_files_is_read_as_one(tmp_path):
    docs = read_jsonl(MARKET)
    (tmp_path / "part1.jsonl").write_text("\n".join(json.dumps(d) for d in docs[:4]))
    (tmp_path / "part2.json").write_text(json.dumps(to_otlp(docs[4:])))
    (tmp_path / "notes.txt").write_text("not spans")
    pd.testing.assert_frame_equal(spans.load(tmp_path), spans.load(MARKET))


# --- span evaluators -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "targets"),
    [
        ("SESSION", [("sess-a", None), ("sess-b", None)]),
        (
            "TRACE",
            [("sess-a", {"traceIds": [T1]}), ("sess-a", {"traceIds": [T2]}), ("sess-b", {"traceIds": [T3]})],
        ),
        (
            "TOOL_CALL",
            [
                ("sess-a", {"traceIds": [T1], "spanIds": ["a000000000000003"]}),
                ("sess-a", {"traceIds": [T2], "spanIds": ["b000000000000002"]}),
                ("sess-a", {"traceIds": [T2], "spanIds": ["b000000000000003"]}),
            ],
        ),
    ],
)
def test_one_call_per_session_trace_or_tool_span_with_the_exact_payload(tmp_path, level, targets):
    ev = evaluator(tmp_path, "recorder", f"EVALUATION_LEVEL = {level!r}\n" + textwrap.dedent(RECORDER))
    assert ev.level == level
    assert re.fullmatch(r"recorder-[0-9a-f]{10}", ev.evaluator_id)
    df = spans.load(MARKET)
    results = spans.evaluate_spans(df, [ev], isolate=False)

    calls = ev.module.CALLS
    assert len(calls) == len(targets)
    documents = {s: df.loc[df["session_id"] == s, "document"].tolist() for s in ("sess-a", "sess-b")}
    for call, (session_id, target) in zip(calls, targets):
        event = call["event"]
        assert list(event) == [
            "schemaVersion",
            "evaluatorId",
            "evaluatorName",
            "evaluationLevel",
            "evaluationInput",
            "evaluationReferenceInputs",
            "evaluationTarget",
        ]
        assert event == {
            "schemaVersion": "1.0",
            "evaluatorId": ev.evaluator_id,
            "evaluatorName": "recorder",
            "evaluationLevel": level,
            "evaluationInput": {"sessionSpans": documents[session_id]},
            "evaluationReferenceInputs": [],
            "evaluationTarget": target,
        }
        assert call["function_name"] == "recorder"
        assert 0 < call["remaining"] <= 300_000
    assert len({c["request_id"] for c in calls}) == len(calls)

    expected = []
    for session_id, target in targets:
        span_context = {"sessionId": session_id}
        if target:
            span_context["traceId"] = target["traceIds"][0]
            if "spanIds" in target:
                span_context["spanId"] = target["spanIds"][0]
        expected.append(
            {
                "evaluatorName": "recorder",
                "evaluatorId": ev.evaluator_id,
                "context": {"spanContext": span_context},
                "label": "PASS",
                "value": 1.0,
                "explanation": f"{len(documents[session_id])} spans",
            }
        )
    assert results == expected


def test_level_option_session_filter_and_reference_inputs(tmp_path):
    write_evaluator(tmp_path / "custom-evaluators", "recorder", RECORDER)
    custom = tmp_path / "custom-evaluators"
    assert spans.load_span_evaluator("recorder", custom).level == "TRACE"  # the default
    ev = spans.load_span_evaluator("recorder", custom, options={"level": "session"})
    assert ev.level == "SESSION"
    assert spans.load_span_evaluator("recorder", custom, level="TOOL_CALL").evaluator_id != ev.evaluator_id
    reference = {
        "context": {"spanContext": {"sessionId": "sess-b"}},
        "expectedResponse": {"text": "A greeting."},
        "assertions": [{"text": "Offers help with tickers."}],
    }
    other = {
        "context": {"spanContext": {"sessionId": "sess-a", "traceId": T1}},
        "expectedResponse": {"text": "x"},
    }
    results = spans.evaluate_spans(
        MARKET, [ev], session="sess-b", reference_inputs=[reference, other], isolate=False
    )
    assert [r["context"]["spanContext"]["sessionId"] for r in results] == ["sess-b"]
    assert ev.module.CALLS[0]["event"]["evaluationReferenceInputs"] == [reference]
    with pytest.raises(EvalkitError, match="'sess-z' not found"):
        spans.evaluate_spans(MARKET, [ev], session="sess-z")
    with pytest.raises(EvalkitError, match=r"reference input \[0\] has no context.spanContext.sessionId"):
        spans.evaluate_spans(MARKET, [ev], reference_inputs=[{"expectedResponse": {"text": "x"}}])


def test_a_handler_cannot_corrupt_the_spans_of_later_calls(tmp_path):
    ev = evaluator(
        tmp_path,
        "mutator",
        """
        EVALUATION_LEVEL = "TRACE"
        SEEN = []
        def lambda_handler(event, context):
            spans = event["evaluationInput"]["sessionSpans"]
            SEEN.append(len(spans))
            spans[0]["attributes"].clear()
            spans.clear()
            return {"label": "PASS"}
        """,
    )
    df = spans.load(MARKET)
    before = json.dumps(df["document"].tolist())
    spans.evaluate_spans(df, [ev], isolate=False)
    assert ev.module.SEEN == [8, 8, 2]
    assert json.dumps(df["document"].tolist()) == before


def test_session_spans_are_in_start_order_even_from_a_reordered_frame(tmp_path):
    ev = evaluator(tmp_path, "recorder", "EVALUATION_LEVEL = 'SESSION'\n" + textwrap.dedent(RECORDER))
    df = spans.load(MARKET)
    spans.evaluate_spans(df.iloc[::-1], [ev], session="sess-a", isolate=False)
    sent = ev.module.CALLS[0]["event"]["evaluationInput"]["sessionSpans"]
    assert [s["spanId"] for s in sent] == df.loc[df["session_id"] == "sess-a", "span_id"].tolist()


CONTRACT_CASES = {
    "no_label": ('return {"value": 1.0}', "InvalidEvaluatorResponse", "the response has no 'label'"),
    "empty_label": ('return {"label": ""}', "InvalidEvaluatorResponse", "'label' must be a non-empty string"),
    "text_value": (
        'return {"label": "PASS", "value": "high"}',
        "InvalidEvaluatorResponse",
        "'value' must be a number, found the string 'high'",
    ),
    "bool_value": (
        'return {"label": "PASS", "value": True}',
        "InvalidEvaluatorResponse",
        "'value' must be a number",
    ),
    "nan_value": (  # as Lambda's runtime: NaN cannot be marshalled (the worker sends JSON only)
        'return {"label": "PASS", "value": float("nan")}',
        "InvalidEvaluatorResponse",
        "the response is not JSON-serialisable (Out of range float values are not JSON compliant",
    ),
    "number_explanation": (
        'return {"label": "PASS", "explanation": 42}',
        "InvalidEvaluatorResponse",
        "'explanation' must be a string",
    ),
    "a_list": (
        'return ["PASS"]',
        "InvalidEvaluatorResponse",
        "lambda_handler returned a list, not an object",
    ),
    "a_string": ('return "PASS"', "InvalidEvaluatorResponse", "lambda_handler returned the string 'PASS'"),
    "nothing": ("pass", "InvalidEvaluatorResponse", "lambda_handler returned null"),
    "not_json": (
        'return {"label": "PASS", "extra": object()}',
        "InvalidEvaluatorResponse",
        "the response is not JSON-serialisable",
    ),
    "raises": (
        'raise ValueError("no spans for target")',
        "EvaluatorException",
        "lambda_handler raised ValueError: no spans for target (line 4)",
    ),
    "exits": (
        "raise SystemExit(3)",
        "EvaluatorCrashed",
        "evaluator process exited with code 3 while evaluating",
    ),
    "half_error": (  # AWS's SDK allows an error without a message: evalkit says there was none
        'return {"errorCode": "UpstreamDown"}',
        "UpstreamDown",
        "the evaluator returned errorCode 'UpstreamDown' without an errorMessage",
    ),
    "error_code_number": (
        'return {"errorCode": 500, "errorMessage": "x"}',
        "InvalidEvaluatorResponse",
        "'errorCode' must be a string",
    ),
    "passes_error_through": (
        'return {"errorCode": "UpstreamDown", "errorMessage": "quote service unavailable"}',
        "UpstreamDown",
        "quote service unavailable",
    ),
}


def test_contract_violations_become_error_results_and_other_evaluators_keep_theirs(tmp_path):
    evaluators = [evaluator(tmp_path, name, returning(body)) for name, (body, _, _) in CONTRACT_CASES.items()]
    good = evaluator(
        tmp_path,
        "good",
        returning('return {"label": "PASS", "value": 1, "explanation": "x" * 5000, "extra": [1]}'),
    )
    results = spans.evaluate_spans(MARKET, [*evaluators[:5], good, *evaluators[5:]])
    by_name: dict[str, list[dict]] = {}
    for r in results:
        by_name.setdefault(r["evaluatorName"], []).append(r)
    assert len(results) == 2 * (len(CONTRACT_CASES) + 1)
    for name, (_, code, message) in CONTRACT_CASES.items():
        for entry in by_name[name]:
            assert entry["errorCode"] == code, name
            assert message in entry["errorMessage"], (name, entry["errorMessage"])
            assert "label" not in entry and "value" not in entry
    for entry in by_name["good"]:
        assert entry["label"] == "PASS" and entry["value"] == 1.0 and isinstance(entry["value"], float)
        assert entry["explanation"] == "x" * 2048  # the service keeps 2048 characters
        assert "errorCode" not in entry and "extra" not in entry


def test_a_slow_handler_times_out_and_the_run_goes_on(tmp_path):
    slow = evaluator(
        tmp_path,
        "slow",
        """
        import threading
        EVALUATION_LEVEL = "SESSION"
        RELEASE = threading.Event()
        def lambda_handler(event, context):
            RELEASE.wait(30)
            return {"label": "LATE"}
        """,
    )
    fast = evaluator(tmp_path, "fast", returning('return {"label": "PASS", "value": 1.0}'))
    started = time.perf_counter()
    try:
        results = spans.evaluate_spans(MARKET, [slow, fast], timeout=0.5)
    finally:
        slow.module.RELEASE.set()
    elapsed = time.perf_counter() - started
    assert 0.9 < elapsed < 5
    assert [(r["evaluatorName"], r.get("errorCode"), r.get("label")) for r in results] == [
        ("slow", "Timeout", None),
        ("slow", "Timeout", None),
        ("fast", None, "PASS"),
        ("fast", None, "PASS"),
    ]
    assert results[0]["errorMessage"] == (
        "lambda_handler did not return within 0.5 s (the Lambda time limit); its worker process was killed"
    )


def test_payloads_over_6_mb_drop_the_latest_spans_outside_the_target(tmp_path):
    big = "x" * (2_500_000)
    lines = []

    def span(trace, span_id, start, size="", session="big"):
        return {
            "traceId": trace,
            "spanId": span_id,
            "name": "chat",
            "kind": "INTERNAL",
            "startTimeUnixNano": start,
            "endTimeUnixNano": start + 1,
            "attributes": {"session.id": session, "gen_ai.completion": size or "ok"},
            "status": {"code": "UNSET"},
        }

    t = [f"{i:032x}" for i in range(1, 6)]
    lines.append(span(t[0], "1" * 16, 100))
    lines.append(span(t[0], "2" * 16, 110))
    lines.append(span(t[1], "3" * 16, 200, big))
    lines.append(span(t[2], "4" * 16, 300, big))
    lines.append(span(t[3], "5" * 16, 400, big))
    lines.append(span(t[4], "6" * 16, 500, "y" * 6_400_000, session="huge"))
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    recorder = """
        import json
        SEEN = []
        def lambda_handler(event, context):
            SEEN.append(([s["spanId"][0] for s in event["evaluationInput"]["sessionSpans"]],
                         len(json.dumps(event, separators=(",", ":")).encode())))
            return {"label": "PASS", "value": 1.0, "explanation": "checked"}
    """
    trace_level = evaluator(tmp_path, "rec_trace", "EVALUATION_LEVEL = 'TRACE'\n" + textwrap.dedent(recorder))
    session_level = evaluator(
        tmp_path, "rec_session", "EVALUATION_LEVEL = 'SESSION'\n" + textwrap.dedent(recorder)
    )
    results = spans.evaluate_spans(path, [trace_level, session_level], isolate=False)

    assert [seen for seen, _ in trace_level.module.SEEN] == [
        ["1", "2", "3", "4"],  # target t0: the latest span (t3) dropped
        ["1", "2", "3", "4"],  # target t1: the same
        ["1", "2", "3", "4"],  # target t2: the same
        ["1", "2", "3", "5"],  # target t3: t2's span dropped, the target kept
    ]
    assert [seen for seen, _ in session_level.module.SEEN] == [["1", "2", "3", "4"]]
    assert all(size <= spans.PAYLOAD_LIMIT for _, size in trace_level.module.SEEN + session_level.module.SEEN)
    ok = [r for r in results if "errorCode" not in r]
    assert len(ok) == 5 and all(r["truncated"] for r in ok)
    assert ok[0]["explanation"].startswith(
        "checked [evalkit: sessionSpans truncated to fit the 6 MB payload limit"
    )
    assert "1 of 5 spans dropped" in ok[0]["explanation"]
    too_large = [r for r in results if "errorCode" in r]  # session "huge": its one span alone is over 6 MB
    assert [(r["evaluatorName"], r["errorCode"]) for r in too_large] == [
        ("rec_trace", "PayloadTooLarge"),
        ("rec_session", "PayloadTooLarge"),
    ]
    assert "truncated" not in too_large[0]


def test_malformed_span_file_still_evaluates_the_valid_sessions(tmp_path):
    ev = evaluator(tmp_path, "recorder", "EVALUATION_LEVEL = 'SESSION'\n" + textwrap.dedent(RECORDER))
    with pytest.warns(UserWarning):
        results = spans.evaluate_spans(MALFORMED, [ev])
    assert [(r["context"]["spanContext"]["sessionId"], r["explanation"]) for r in results] == [
        ("sess-c", "2 spans"),
        ("sess-d", "1 spans"),
    ]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda custom: None, "span evaluator 'check' not found: there is no folder"),
        (lambda custom: (custom / "check").mkdir(parents=True), "check.py or "),
        (lambda custom: write_evaluator(custom, "check", "X = 1\n"), "check.py defines no lambda_handler"),
        (lambda custom: write_evaluator(custom, "check", "lambda_handler = 3\n"), "is not a function"),
        (
            lambda custom: write_evaluator(custom, "check", "def lambda_handler(event, context)\n    pass\n"),
            "check.py failed to import: SyntaxError: expected ':' (line 1)",
        ),
        (
            lambda custom: write_evaluator(
                custom, "check", "import no_such_module_here\ndef lambda_handler(e, c): pass\n"
            ),
            "check.py failed to import: ModuleNotFoundError: No module named 'no_such_module_here' (line 1)",
        ),
        (
            lambda custom: write_evaluator(
                custom, "check", "EVALUATION_LEVEL = 'SPAN'\ndef lambda_handler(e, c): pass\n"
            ),
            "evaluation level 'SPAN' is not one of TRACE, TOOL_CALL, SESSION",
        ),
    ],
)
def test_load_span_evaluator_errors_name_the_file(tmp_path, setup, message):
    custom = tmp_path / "custom-evaluators"
    setup(custom)
    with pytest.raises(EvalkitError) as caught:
        spans.load_span_evaluator("check", custom)
    assert message in str(caught.value)
    assert str(custom / "check") in str(caught.value)


def test_an_evaluator_imports_modules_deployed_beside_it(tmp_path):
    custom = tmp_path / "custom-evaluators"
    write_evaluator(
        custom,
        "pii",
        "from pii_rules import PATTERN\ndef lambda_handler(e, c):\n    return {'label': PATTERN}\n",
    )
    (custom / "pii" / "pii_rules.py").write_text("PATTERN = 'SSN'\n")
    results = spans.evaluate_spans(MARKET, ["pii:SESSION"], custom_dir=custom)
    assert [r["label"] for r in results] == ["SSN", "SSN"]
    with pytest.raises(EvalkitError, match="not valid"):
        spans.SpanEvaluator("my-evaluator", lambda e, c: None)


# --- the command line ------------------------------------------------------------------------------------


def run_cli(argv: list[str]) -> int:
    """``evalkit spans ...`` as the CLI runs it: EvalkitError -> its exit code, argparse errors -> 2."""
    parser = argparse.ArgumentParser(prog="evalkit")
    spans_command.register(parser.add_subparsers(dest="command"))
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except EvalkitError as exc:
        print(f"Error: {exc}")
        return exc.exit_code
    except SystemExit as exc:
        return exc.code


def test_cli_writes_results_and_gates_on_the_pass_rate(tmp_path, capsys):
    custom = tmp_path / "custom-evaluators"
    write_evaluator(custom, "schema_check", "EVALUATION_LEVEL = 'TOOL_CALL'\n" + textwrap.dedent(RECORDER))
    write_evaluator(
        custom,
        "workflow",
        """
        EVALUATION_LEVEL = "SESSION"
        def lambda_handler(event, context):
            spans = event["evaluationInput"]["sessionSpans"]
            tools = [s for s in spans if s["name"].startswith("execute_tool")]
            if not tools:
                return {"errorCode": "NoToolCalls", "errorMessage": "no tool calls in the session"}
            return {"label": "PARTIAL", "value": 0.5, "explanation": "2 of 3, steps, in order"}
        """,
    )
    out = tmp_path / "out"
    argv = ["spans", "eval", str(MARKET), "--evaluator", "schema_check", "--evaluator", "workflow"]
    argv += ["--custom-dir", str(custom), "--out", str(out)]
    assert run_cli(argv) == 0
    printed = capsys.readouterr().out
    assert "schema_check (TOOL_CALL)  3 results: PASS 3" in printed
    assert "workflow (SESSION)        2 results: PARTIAL 1; 1 error (NoToolCalls 1)" in printed
    assert "Pass rate 60.0% (3 of 5 results passing; 1 error, counted as not passing)\n" in printed

    data = json.loads((out / "results.json").read_text())
    assert list(data) == ["evaluationResults", "passingLabels"] and len(data["evaluationResults"]) == 5
    assert list(data["passingLabels"].values()) == [None, None]  # neither declares PASSING_LABELS
    assert data["evaluationResults"][3]["label"] == "PARTIAL"
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [
        "evaluatorName",
        "level",
        "sessionId",
        "traceId",
        "spanId",
        "label",
        "value",
        "explanation",
        "errorCode",
        "errorMessage",
        "passed",
    ]
    assert [row["passed"] for row in rows] == ["True", "True", "True", "False", "False"]
    assert rows[0] == {
        "evaluatorName": "schema_check",
        "level": "TOOL_CALL",
        "sessionId": "sess-a",
        "traceId": T1,
        "spanId": "a000000000000003",
        "label": "PASS",
        "value": "1.0",
        "explanation": "8 spans",
        "errorCode": "",
        "errorMessage": "",
        "passed": "True",
    }
    assert rows[3]["explanation"] == "2 of 3, steps, in order" and rows[3]["level"] == "SESSION"
    assert rows[4]["errorCode"] == "NoToolCalls" and rows[4]["traceId"] == ""
    assert sorted(p.name for p in out.iterdir()) == ["results.csv", "results.json"]  # no temporary files left

    assert run_cli([*argv, "--fail-under", "0.6"]) == 0
    assert run_cli([*argv, "--fail-under", "61%"]) == 1
    assert "Gate failed: pass rate 60.0% is below --fail-under 61.0%" in capsys.readouterr().err
    assert run_cli([*argv, "--session", "sess-b", "--fail-under", "1"]) == 1  # only an error result


def test_cli_user_mistakes_exit_2(tmp_path, capsys):
    custom = tmp_path / "custom-evaluators"
    write_evaluator(custom, "ok", returning('return {"label": "PASS"}'))
    base = ["spans", "eval", str(MARKET), "--custom-dir", str(custom), "--out", str(tmp_path / "out")]
    assert run_cli([*base, "--evaluator", "missing"]) == 2
    assert "span evaluator 'missing' not found" in capsys.readouterr().out
    assert run_cli([*base[:2], str(tmp_path / "none.jsonl"), *base[3:], "--evaluator", "ok"]) == 2
    assert "none.jsonl: span file not found" in capsys.readouterr().out
    assert run_cli([*base, "--evaluator", "ok", "--session", "nope"]) == 2
    assert run_cli([*base, "--evaluator", "ok", "--fail-under", "2"]) == 2
    assert run_cli([*base, "--evaluator", "ok", "--timeout", "0"]) == 2
    assert run_cli([*base, "--evaluator", "ok:NEVER"]) == 2
    assert not (tmp_path / "out").exists()


def test_cli_reports_span_file_problems_and_evaluates_the_rest(tmp_path, capsys):
    custom = tmp_path / "custom-evaluators"
    write_evaluator(custom, "ok", returning('return {"label": "PASS", "value": 1.0}'))
    argv = ["spans", "eval", str(MALFORMED), "--evaluator", "ok", "--custom-dir", str(custom)]
    assert run_cli([*argv, "--out", str(tmp_path / "out"), "--fail-under", "100%"]) == 0
    err = capsys.readouterr().err
    assert f"Warning: {MALFORMED}: line 2: 'traceId' is missing" in err
    assert len(json.loads((tmp_path / "out" / "results.json").read_text())["evaluationResults"]) == 2
