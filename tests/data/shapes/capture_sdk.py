"""Capture the OpenTelemetry Python SDK's own span and log output, in the shapes people keep on disk.

Run from the repository root: ``python tests/data/shapes/capture_sdk.py [OUT_DIR]`` (default: this folder).
It writes, from one small agent run (two turns of one conversation plus one unrelated trace):

* ``sdk_console_spans.json``: ``ConsoleSpanExporter`` written to a file (pretty-printed ``to_json()`` objects
  one after another: not JSON lines, not an array);
* ``sdk_to_json_spans.jsonl``: ``InMemorySpanExporter`` spans, ``ReadableSpan.to_json(indent=None)`` per line;
* ``sdk_console_logs.json``: ``ConsoleLogExporter`` written to a file (``LogRecord.to_json()`` objects), the
  agent's messages as log records with a ``{"input": {"messages"}, "output": {"messages"}}`` body;
* ``sdk_otlp_protobuf.json``: the OTLP exporter's own encoder (``encode_spans``) written with protobuf's JSON
  mapping (``MessageToJson``: base64 ids, camelCase).

Everything in these files is written by the SDK; this script only decides what the agent does. The tests
load the committed files, and run this script again into a temporary folder to check a fresh capture reads
the same way (so a newer SDK that changes its output is noticed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import ConsoleLogExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

TURNS = (
    ("What's the weather in Paris?", "get_weather", '{"city": "Paris"}', "sunny, 21 C", "Sunny, 21 °C."),
    ("And tomorrow?", "get_forecast", '{"city": "Paris", "day": 1}', "rain, 15 C", "Rain, 15 °C."),
)


def capture(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    resource = Resource.create({"service.name": "weather-agent"})
    memory = InMemorySpanExporter()
    with (
        open(out / "sdk_console_spans.json", "w") as spans_file,
        open(out / "sdk_console_logs.json", "w") as logs_file,
    ):
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=spans_file)))
        tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(ConsoleLogExporter(out=logs_file)))
        _run_agent(tracer_provider, logger_provider)
        tracer_provider.shutdown()
        logger_provider.shutdown()
    spans = memory.get_finished_spans()
    (out / "sdk_to_json_spans.jsonl").write_text("".join(s.to_json(indent=None) + "\n" for s in spans))
    _write_otlp_json(spans, out / "sdk_otlp_protobuf.json")


def _run_agent(tracer_provider: TracerProvider, logger_provider: LoggerProvider) -> None:
    """Two turns of conversation ``conv-weather-1`` (``gen_ai.conversation.id`` on the root span only), and
    one trace that carries no session attribute at all."""
    tracer = tracer_provider.get_tracer("weather.agent", "1.0")
    logger = logger_provider.get_logger("weather.agent")
    for question, tool, arguments, result, answer in TURNS:
        with tracer.start_as_current_span("invoke_agent weather") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            root.set_attribute("gen_ai.agent.name", "weather")
            root.set_attribute("gen_ai.conversation.id", "conv-weather-1")
            root.add_event("gen_ai.user.message", {"content": question})
            with tracer.start_as_current_span(f"execute_tool {tool}") as call:
                call.set_attribute("gen_ai.operation.name", "execute_tool")
                call.set_attribute("gen_ai.tool.name", tool)
                call.set_attribute("gen_ai.tool.call.arguments", arguments)
                call.set_attribute("gen_ai.tool.call.result", result)
            root.add_event("gen_ai.choice", {"message": answer})
            logger.emit(
                severity_number=SeverityNumber.INFO,
                event_name="weather.agent",
                body={
                    "input": {"messages": [{"role": "user", "content": question}]},
                    "output": {"messages": [{"role": "assistant", "content": answer}]},
                },
                attributes={"event.name": "weather.agent"},
            )
    with tracer.start_as_current_span("health_check") as span:
        span.set_attribute("http.route", "/ping")


def _write_otlp_json(spans, path: Path) -> None:
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    path.write_text(MessageToJson(encode_spans(spans)) + "\n")


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    capture(target)
    print(json.dumps(sorted(p.name for p in target.glob("sdk_*"))))
