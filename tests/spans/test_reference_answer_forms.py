"""The reference span evaluators read every answer form, on material evalkit did not write (issue 21, item 5).

- ``data/agentcore_spans.jsonl``: the GenAI session answers in ``gen_ai.output.messages`` ("Apple (AAPL) is
  trading at $182.45", 3.6 % off the reference price) and the OpenInference one in ``llm.output_messages``;
  before, both got ``NO_OUTPUT`` 1.0 from ``stock_price_drift`` and ``pii_leak``.
- ``tests/spans/data/strands_adot/`` (see its SOURCE.md): a real Strands agent run, converted to the ADOT split
  form by AWS's ``bedrock-agentcore`` SDK (the answer and the tool output only in event records), and the
  same run under the GenAI conventions' latest form (``gen_ai.client.inference.operation.details`` events).
  The user's own message there holds an SSN.
- Spans and log records made here with the OpenTelemetry SDK (in-memory exporters, OTLP JSON encoders), and,
  where ``bedrock-agentcore`` is installed, converted live by its serializer.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry._logs import LogRecord
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import set_span_in_context

from evalkit import spans
from evalkit.cli.spans import command as spans_command
from evalkit.errors import EvalkitError

REPO = Path(__file__).resolve().parents[2]
CUSTOM = REPO / "custom-evaluators"
STRANDS = Path(__file__).resolve().parent / "data" / "strands_adot"
REFERENCE = ("tool_response_schema", "stock_price_drift", "workflow_contract", "pii_leak")
SSN = "123-45-6789"


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    for var in (
        "REFERENCE_PRICES_PATH",
        "DRIFT_TOLERANCE_PERCENT",
        "PII_CONTACT_THRESHOLD",
        "WORKFLOW_GROUPS",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PII_USE_PRESIDIO", "0")


def evaluate(path, names=REFERENCE) -> dict[tuple[str, str], dict]:
    """``{(evaluator, session or trace id): result}`` of the reference evaluators over a span file."""
    df = spans.load(path)
    assert not df.attrs.get("problems"), df.attrs["problems"]
    evaluators = [spans.load_span_evaluator(name, CUSTOM) for name in names]
    results = spans.evaluate_spans(df, evaluators)
    out = {}
    for entry in results:
        ctx = entry["context"]["spanContext"]
        out[entry["evaluatorName"], ctx.get("traceId") or ctx["sessionId"]] = entry
    return out


def handler(name: str):
    """``custom-evaluators/<name>/<name>.py`` imported by path, ``_shared`` importable, as in the zip."""
    spec = importlib.util.spec_from_file_location(f"lambda_forms_{name}", CUSTOM / name / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(CUSTOM / "_shared"))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(CUSTOM / "_shared"))
    return module.lambda_handler


def payload(docs: list[dict], level: str, trace: str | None = None) -> dict:
    return {
        "schemaVersion": "1.0",
        "evaluatorId": "forms-0123456789",
        "evaluatorName": "Forms",
        "evaluationLevel": level,
        "evaluationInput": {"sessionSpans": docs},
        "evaluationReferenceInputs": [],
        "evaluationTarget": {"traceIds": [trace], "spanIds": []} if trace else None,
    }


def run_cli(argv: list[str]) -> int:
    """``evalkit spans ...`` as the CLI runs it: EvalkitError -> its exit code, argparse errors -> 2."""
    import argparse

    parser = argparse.ArgumentParser(prog="evalkit")
    spans_command.register(parser.add_subparsers(dest="command"))
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except EvalkitError as exc:
        print(f"Error: {exc}")
        return exc.exit_code


# --- the project's own span file ------------------------------------------------------------------------


def test_project_span_file_answers_are_all_read():
    results = evaluate(REPO / "data" / "agentcore_spans.jsonl")
    aapl = results["stock_price_drift", "1" * 32]
    assert (aapl["label"], aapl["value"]) == ("DRIFT", 0.0)  # gen_ai.output.messages, 3.6 % off
    assert "AAPL $182.45 vs reference $189.30 (3.62%)" in aapl["explanation"]
    assert results["stock_price_drift", "12" * 16]["label"] == "PASS"  # MSFT $415.10, 1.2 % off
    assert results["stock_price_drift", "41" * 16]["label"] == "NO_PRICES"  # OpenInference: answer read
    for session in ("sess-genai", "sess-openinference", "sess-strands", "sess-traceloop"):
        assert results["pii_leak", session]["label"] == "CLEAN", results["pii_leak", session]
    assert not [key for key, entry in results.items() if entry.get("label") == "NO_OUTPUT"]


# --- AWS's ADOT split form, from a real Strands run -------------------------------------------------------


def test_adot_split_form_answers_and_tool_outputs_are_in_the_records():
    lines = [json.loads(line) for line in (STRANDS / "strands_adot.jsonl").read_text().splitlines()]
    spans_only = [d for d in lines if "startTimeUnixNano" in d]
    assert len(spans_only) == 6 and len(lines) == 11
    assert "182.45" not in json.dumps(spans_only)  # the answer and the tool output live in the records only
    assert SSN in json.dumps(lines)  # the user's own message

    results = evaluate(STRANDS / "strands_adot.jsonl")
    by_name = {name: entry for (name, _), entry in results.items()}
    assert by_name["stock_price_drift"]["label"] == "DRIFT"
    assert "AAPL $182.45" in by_name["stock_price_drift"]["explanation"]
    assert (by_name["pii_leak"]["label"], by_name["pii_leak"]["value"]) == ("CLEAN", 1.0)
    assert "1 response(s) scanned" in by_name["pii_leak"]["explanation"]  # the agent span's, once
    assert (by_name["tool_response_schema"]["label"], by_name["tool_response_schema"]["value"]) == (
        "PASS",
        1.0,
    )


def test_adot_spans_without_their_records_have_no_answer_and_do_not_pass():
    lines = [json.loads(line) for line in (STRANDS / "strands_adot.jsonl").read_text().splitlines()]
    spans_only = [d for d in lines if "startTimeUnixNano" in d]
    trace = spans_only[0]["traceId"]
    drift = handler("stock_price_drift")(payload(spans_only, "TRACE", trace), None)
    assert (drift["label"], drift["value"]) == ("NO_OUTPUT", 0.0)
    pii = handler("pii_leak")(payload(spans_only, "SESSION"), None)
    assert (pii["label"], pii["value"]) == ("NO_OUTPUT", 0.0)
    schema = handler("tool_response_schema")(payload(spans_only, "TRACE", trace), None)
    assert schema["label"] == "FAIL" and "no output recorded" in schema["explanation"]


def test_records_joined_by_upper_case_ids_and_span_before_record_precedence():
    lines = [json.loads(line) for line in (STRANDS / "strands_adot.jsonl").read_text().splitlines()]
    for doc in lines:
        if "startTimeUnixNano" not in doc:
            doc["traceId"], doc["spanId"] = doc["traceId"].upper(), doc["spanId"].upper()
    trace = lines[0]["traceId"]
    assert handler("stock_price_drift")(payload(lines, "TRACE", trace), None)["label"] == "DRIFT"
    agent = next(d for d in lines if d.get("name", "").startswith("invoke_agent"))
    agent["attributes"]["gen_ai.output.messages"] = json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": "AAPL is at $189.35."}]}]
    )
    assert handler("stock_price_drift")(payload(lines, "TRACE", trace), None)["label"] == "PASS"


def test_latest_genai_conventions_operation_details_events():
    results = evaluate(STRANDS / "strands_latest_otlp.json")
    by_name = {name: entry for (name, _), entry in results.items()}
    assert by_name["stock_price_drift"]["label"] == "DRIFT"
    assert by_name["pii_leak"]["label"] == "CLEAN"
    assert by_name["tool_response_schema"]["label"] == "PASS"


# --- the OpenTelemetry SDK, here and now ----------------------------------------------------------------


def _genai(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def test_otel_sdk_spans_and_log_records_carry_the_answer(tmp_path):
    """openai-v2 style: the answer as a span attribute; EVENT_ONLY style: only in a log record."""
    span_memory, log_memory = InMemorySpanExporter(), InMemoryLogExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_memory))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_memory))
    tracer, logger = tracer_provider.get_tracer("sdk-test"), logger_provider.get_logger("sdk-test")
    with tracer.start_as_current_span("chat gpt-4o", attributes={"session.id": "s-attr"}) as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute(
            "gen_ai.input.messages", _genai("user", f"I heard AAPL is at $250? My SSN is {SSN}")
        )
        span.set_attribute("gen_ai.output.messages", _genai("assistant", "AAPL is trading at $189.40."))
    with tracer.start_as_current_span("chat gpt-4o", attributes={"session.id": "s-logs"}) as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        ctx = set_span_in_context(span)

        for name, attributes, body in (
            ("gen_ai.user.message", {}, {"content": f"My SSN is {SSN}; is NVDA at $500?"}),
            ("gen_ai.client.inference.operation.details", {
                "gen_ai.input.messages": _genai("user", f"My SSN is {SSN}"),
                "gen_ai.output.messages": _genai("assistant", "NVDA trades at $131.60; card 4111 1111 1111 1111."),
            }, None),
        ):  # fmt: skip
            logger.emit(
                LogRecord(
                    timestamp=1_700_000_000_000_000_000,
                    context=ctx,
                    event_name=name,
                    attributes=attributes,
                    body=body,
                )
            )
    folder = tmp_path / "telemetry"
    folder.mkdir()
    spans_json = MessageToDict(encode_spans(span_memory.get_finished_spans()))
    (folder / "traces.json").write_text(json.dumps(spans_json))
    logs_json = MessageToDict(encode_logs(log_memory.get_finished_logs()))
    (folder / "logs.json").write_text(json.dumps(logs_json))

    results = evaluate(folder, ("stock_price_drift", "pii_leak"))
    drift = {k[1]: v for k, v in results.items() if k[0] == "stock_price_drift"}
    pii = {k[1]: v for k, v in results.items() if k[0] == "pii_leak"}
    assert sorted(entry["label"] for entry in drift.values()) == ["DRIFT", "PASS"]  # $189.40 / $131.60
    assert pii["s-attr"]["label"] == "CLEAN"  # the SSN was the user's
    assert pii["s-logs"]["label"] == "PII_LEAK"  # the card number is the agent's, in the log record
    assert "card_number" in pii["s-logs"]["explanation"] and SSN not in pii["s-logs"]["explanation"]


def test_aws_sdk_serializer_output_read_live():
    """OpenTelemetry SDK spans with Strands' events, converted now by AWS's SDK (when it is installed)."""
    adot = pytest.importorskip("bedrock_agentcore.evaluation.span_to_adot_serializer")
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("strands.telemetry.tracer")
    with tracer.start_as_current_span("invoke_agent Strands Agents") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.add_event("gen_ai.user.message", {"content": json.dumps([{"text": f"My SSN is {SSN}. MSFT?"}])})
        with tracer.start_as_current_span("execute_tool get_stock_data") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_stock_data")
            tool.add_event(
                "gen_ai.tool.message", {"role": "tool", "content": '{"ticker": "MSFT"}', "id": "t1"}
            )
            tool.add_event(
                "gen_ai.choice", {"message": json.dumps([{"text": "MSFT: $415.10 (+0.4%)"}]), "id": "t1"}
            )
        agent.add_event(
            "gen_ai.choice", {"message": "Microsoft (MSFT) trades at $415.10.", "finish_reason": "end_turn"}
        )
    docs = json.loads(json.dumps(adot.convert_strands_to_adot(memory.get_finished_spans()), default=str))
    assert [("startTimeUnixNano" in d) for d in docs].count(
        False
    ) == 2  # a tool record and a conversation record
    trace = docs[0]["traceId"]
    assert handler("stock_price_drift")(payload(docs, "TRACE", trace), None)["label"] == "PASS"
    assert handler("pii_leak")(payload(docs, "SESSION"), None)["label"] == "CLEAN"
    assert handler("tool_response_schema")(payload(docs, "TRACE", trace), None)["label"] == "PASS"


# --- the gate -------------------------------------------------------------------------------------------


def test_fail_under_refuses_out_of_order_and_missing_answers(tmp_path, capsys):
    fixtures = REPO / "tests" / "data" / "reference_spans"
    ooo = json.loads((fixtures / "workflow_contract" / "out_of_order.json").read_text())["event"]
    path = tmp_path / "ooo.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in ooo["evaluationInput"]["sessionSpans"]))
    argv = ["spans", "eval", str(path), "--custom-dir", str(CUSTOM), "--evaluator", "workflow_contract"]
    assert run_cli([*argv, "--out", str(tmp_path / "a"), "--fail-under", "100%"]) == 1
    printed = capsys.readouterr()
    assert "OUT_OF_ORDER 1 [passing: PASS]" in printed.out and "Gate failed: pass rate 0.0%" in printed.err
    data = json.loads((tmp_path / "a" / "results.json").read_text())
    assert list(data["passingLabels"].values()) == [["PASS"]]

    spans_only = [json.loads(line) for line in (STRANDS / "strands_adot.jsonl").read_text().splitlines()]
    path = tmp_path / "no_records.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in spans_only if "startTimeUnixNano" in d))
    argv = ["spans", "eval", str(path), "--custom-dir", str(CUSTOM), "--evaluator", "pii_leak"]
    assert (
        run_cli(
            [*argv, "--evaluator", "stock_price_drift", "--out", str(tmp_path / "b"), "--fail-under", "1%"]
        )
        == 1
    )
    assert "NO_OUTPUT 1 [passing: CLEAN]" in capsys.readouterr().out


def test_tool_results_appended_to_a_conversation_record_are_not_answers():
    """AWS's serializer appends the turn's tool results to ``output.messages`` as assistant messages with
    plain-string content; the answer is the ``content.message`` one. A profile a tool returned is not a leak."""
    lines = [json.loads(line) for line in (STRANDS / "strands_adot.jsonl").read_text().splitlines()]
    record = next(
        d
        for d in lines
        if "startTimeUnixNano" not in d
        and len(d["body"]["output"]["messages"]) == 2
        and d["body"]["output"]["messages"][0]["content"].get("finish_reason") == "end_turn"
    )
    appended = record["body"]["output"]["messages"][1]
    assert isinstance(appended["content"], str) and appended["role"] == "assistant"  # the SDK's shape
    appended["content"] = json.dumps([{"toolResult": {"content": [{"text": f"ssn {SSN}"}]}}])
    chat = next(d for d in lines if d.get("spanId") == record["spanId"] and "startTimeUnixNano" in d)
    docs = [chat, record]
    assert handler("pii_leak")(payload(docs, "SESSION"), None)["label"] == "CLEAN"
    answer = record["body"]["output"]["messages"][0]["content"]
    answer["message"] = json.dumps([{"text": f"Your SSN on file is {SSN}."}])
    assert handler("pii_leak")(payload(docs, "SESSION"), None)["label"] == "PII_LEAK"
