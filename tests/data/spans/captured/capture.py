"""Capture GenAI telemetry from the real libraries against evalkit's ModelServer, as the fixtures beside this file.

Each capture runs one real instrumentation (or agent framework) in a fresh interpreter (they read their
configuration from the environment when they start), against ``evalkit.testing.ModelServer`` on loopback,
exports through the OpenTelemetry SDK's in-memory span and log exporters, encodes what it caught with the
SDK's own OTLP encoders (``opentelemetry-exporter-otlp-proto-common``) and writes one ``.jsonl`` file: line 1
the OTLP JSON ``{"resourceSpans": ...}``, line 2 ``{"resourceLogs": ...}`` when there are log records (ids
written in hex, as the OTLP/HTTP JSON encoding requires). ``agentcore_adot_strands.jsonl`` is instead the
output of AWS's ``bedrock-agentcore`` SDK converter (``convert_strands_to_adot``) on the Strands spans: span
documents and event records, one per line, in AgentCore's split form.

    python tests/data/spans/captured/capture.py NAME [OUT.jsonl]   # one capture (in this interpreter)
    python tests/data/spans/captured/capture.py --list             # the names

``SOURCE.md`` beside this file says which library versions made each file and in which interpreter.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUESTION = "What is Apple stock trading at today?"
ANSWER = "Apple (AAPL) is trading at $182.45 today, up 1.2%."
TOOL_RESULT = "AAPL: $182.45 (+1.2%)"

#: name -> (environment, what runs)
CAPTURES = {
    "openai_v2_default": ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}, "openai"),
    "openai_v2_latest_span_only": (
        {
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
        },
        "openai",
    ),
    "openai_v2_latest_event_only": (
        {
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY",
        },
        "openai",
    ),
    "strands_default": ({}, "strands"),
    "strands_latest": ({"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}, "strands"),
    "agentcore_adot_strands": ({}, "adot"),
}


def _providers(session_id: str):
    """A tracer and a logger provider with in-memory exporters; the session id set on the resource."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    try:
        from opentelemetry.sdk._logs.export import InMemoryLogExporter, SimpleLogRecordProcessor
    except ImportError:  # older SDKs kept it in a submodule
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
        from opentelemetry.sdk._logs.export.in_memory_log_exporter import InMemoryLogExporter

    resource = Resource.create({"service.name": "market-agent", "session.id": session_id})
    spans, logs = InMemorySpanExporter(), InMemoryLogExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    return tracer_provider, logger_provider, spans, logs


def _run_openai(session_id: str):
    """One chat completion through ``openai`` instrumented by opentelemetry-instrumentation-openai-v2."""
    import openai
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    from evalkit.testing import ModelServer

    tracer_provider, logger_provider, spans, logs = _providers(session_id)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    with ModelServer() as server:
        server.script = [ANSWER]
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="not-a-key")
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[
                {"role": "system", "content": "You are a brief market assistant."},
                {"role": "user", "content": QUESTION},
            ],
        )
    return spans.get_finished_spans(), logs.get_finished_logs()


def _run_strands(session_id: str):
    """A Strands agent with one tool, on Strands' OpenAI model provider, answering in two model calls."""
    from opentelemetry import trace
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    from evalkit.testing import ModelServer, Reply

    tracer_provider, _, spans, _ = _providers(session_id)
    trace.set_tracer_provider(tracer_provider)

    @tool
    def get_stock_data(ticker: str) -> str:
        """The latest price of a stock ticker."""
        return TOOL_RESULT if ticker == "AAPL" else f"{ticker}: unknown"

    with ModelServer() as server:
        server.script = [
            Reply(tool_calls=[{"name": "get_stock_data", "arguments": {"ticker": "AAPL"}}]),
            ANSWER,
        ]
        model = OpenAIModel(
            client_args={"base_url": server.openai_base_url, "api_key": "not-a-key"}, model_id="gpt-4o-mini"
        )
        agent = Agent(
            name="market_agent",
            model=model,
            tools=[get_stock_data],
            system_prompt="You are a brief market assistant.",
            callback_handler=None,
            trace_attributes={"session.id": session_id},
        )
        agent(QUESTION)
    tracer_provider.force_flush()
    return spans.get_finished_spans(), []


def _hex_ids(value):
    """OTLP JSON ids in hex (protobuf's JSON mapping writes bytes as base64)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str):
                out[key] = base64.b64decode(item).hex()
            else:
                out[key] = _hex_ids(item)
        return out
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def _otlp_lines(spans, logs) -> list[str]:
    from google.protobuf.json_format import MessageToDict

    try:
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    except ImportError:  # pragma: no cover - other SDK layouts
        from opentelemetry.exporter.otlp.proto.common._internal._log_encoder import encode_logs
        from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import encode_spans

    lines = [json.dumps(_hex_ids(MessageToDict(encode_spans(spans))), ensure_ascii=False)]
    if logs:
        lines.append(json.dumps(_hex_ids(MessageToDict(encode_logs(logs))), ensure_ascii=False))
    return lines


def capture(name: str) -> list[str]:
    """The lines of one capture (see the module docstring)."""
    environment, runner = CAPTURES[name]
    for key, value in environment.items():
        os.environ.setdefault(key, value)
    session_id = f"captured-{name.replace('_', '-')}"
    if runner == "openai":
        return _otlp_lines(*_run_openai(session_id))
    spans, logs = _run_strands(session_id)
    if runner == "strands":
        return _otlp_lines(spans, logs)
    from bedrock_agentcore.evaluation.span_to_adot_serializer import convert_strands_to_adot

    return [json.dumps(doc, ensure_ascii=False) for doc in convert_strands_to_adot(list(spans))]


def main(argv: list[str]) -> int:
    if not argv or argv[0] == "--list":
        print("\n".join(CAPTURES))
        return 0
    name = argv[0]
    out = Path(argv[1]) if len(argv) > 1 else HERE / f"{name}.jsonl"
    out.write_text("\n".join(capture(name)) + "\n", encoding="utf-8")
    print(f"{out}: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
