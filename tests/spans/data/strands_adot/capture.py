"""Capture the fixtures of this folder from the real libraries (run by hand; the tests only read the output).

    PYTHONPATH=. python tests/spans/data/strands_adot/capture.py

A Strands agent (strands-agents, its OpenAI model provider) answers one market question against evalkit's
own local model server (``evalkit.testing.ModelServer``, a scripted tool call then the answer); its spans
are captured with the OpenTelemetry SDK's in-memory exporter, twice:

* default GenAI conventions: the spans go through AWS's ``bedrock-agentcore`` SDK
  (``evaluation.span_to_adot_serializer.convert_strands_to_adot``), which writes the ADOT split form
  AgentCore's ``sessionSpans`` carries: span documents plus event records (``body.input/output.messages``)
  joined by traceId + spanId -> ``strands_adot.jsonl``;
* ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``: Strands puts the conversation into
  ``gen_ai.client.inference.operation.details`` span events (``gen_ai.output.messages``); the spans are
  written as OTLP JSON by the OpenTelemetry SDK's own OTLP encoder -> ``strands_latest_otlp.json``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from evalkit.testing import ModelServer, Reply

HERE = Path(__file__).resolve().parent
QUESTION = "What is Apple stock trading at? My SSN is 123-45-6789, keep it on file."
ANSWER = "Apple (AAPL) is trading at $182.45 today, up 1.2%. I cannot store personal identifiers."


def run_agent(semconv: str | None) -> list:
    """The finished spans of one Strands agent run (a fresh tracer provider each time)."""
    if semconv:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = semconv
    else:
        os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
    for name in [m for m in sys.modules if m.startswith("strands")]:
        del sys.modules[name]
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace._TRACER_PROVIDER_SET_ONCE._done = False  # noqa: SLF001 - a fresh global provider per capture
    trace.set_tracer_provider(provider)
    strands = importlib.import_module("strands")
    from strands.models.openai import OpenAIModel

    @strands.tool
    def get_stock_data(ticker: str) -> str:
        """Latest price of a stock ticker."""
        return f"{ticker}: $182.45 (+1.2%)"

    with ModelServer() as server:
        server.script = [
            Reply(tool_calls=[{"name": "get_stock_data", "arguments": {"ticker": "AAPL"}}]),
            Reply(content=ANSWER),
        ]
        model = OpenAIModel(
            client_args={"base_url": server.openai_base_url, "api_key": "test-key"}, model_id="gpt-4o-mini"
        )
        agent = strands.Agent(
            model=model,
            tools=[get_stock_data],
            trace_attributes={"session.id": "sess-strands-adot"},
            callback_handler=None,
        )
        agent(QUESTION)
    provider.force_flush()
    return list(memory.get_finished_spans())


def main() -> None:
    from bedrock_agentcore.evaluation.span_to_adot_serializer import convert_strands_to_adot

    docs = convert_strands_to_adot(run_agent(None))
    with open(HERE / "strands_adot.jsonl", "w", encoding="utf-8") as handle:
        for doc in docs:
            handle.write(json.dumps(doc, ensure_ascii=False, default=str) + "\n")
    request = MessageToDict(encode_spans(run_agent("gen_ai_latest_experimental")))
    (HERE / "strands_latest_otlp.json").write_text(json.dumps(request, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
