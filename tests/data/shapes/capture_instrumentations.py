"""Capture what two real OpenAI instrumentations emit, calling evalkit's own model server (``ModelServer``).

Run from the repository root: ``python tests/data/shapes/capture_instrumentations.py [OUT_DIR]`` (default:
this folder; it starts a ``ModelServer`` on loopback, or uses ``BASE_URL`` when given as a second argument).
Both run in one child process (they patch ``openai`` globally), one after the other, each uninstrumented
before the next, and write:

* ``openinference_console_spans.json``: OpenInference (``openinference-instrumentation-openai``), two chat
  calls inside ``using_session("oi-session-1")``, exported by the SDK's ``ConsoleSpanExporter`` to a file;
* ``traceloop_to_json_spans.jsonl``: Traceloop / OpenLLMetry (``opentelemetry-instrumentation-openai``), two
  chat calls with no session attribute at all, ``ReadableSpan.to_json(indent=None)`` per line.

The spans are the instrumentations' own; this script only makes the calls.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

QUESTIONS = ("What is the capital of France?", "And of Italy?")


def capture(out: Path, base_url: str | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if base_url is None:
        from evalkit.testing import ModelServer

        with ModelServer() as server:
            return capture(out, server.openai_base_url)
    subprocess.run([sys.executable, __file__, "--child", str(out), base_url], check=True)


def _child(out: Path, base_url: str) -> None:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="k")
    _openinference(client, out)
    _traceloop(client, out)


def _provider(name: str):
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    return TracerProvider(resource=Resource.create({"service.name": f"{name}-capture"}))


def _openinference(client, out: Path) -> None:
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    provider = _provider("openinference")
    with open(out / "openinference_console_spans.json", "w") as handle:
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=handle)))
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        with using_session("oi-session-1"):
            _ask(client)
        instrumentor.uninstrument()
        provider.shutdown()


def _traceloop(client, out: Path) -> None:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider, memory = _provider("traceloop"), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    _ask(client)
    instrumentor.uninstrument()
    provider.shutdown()
    lines = "".join(s.to_json(indent=None) + "\n" for s in memory.get_finished_spans())
    (out / "traceloop_to_json_spans.jsonl").write_text(lines)


def _ask(client) -> None:
    for question in QUESTIONS:
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": question}])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(Path(sys.argv[2]), sys.argv[3])
    else:
        target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
        capture(target, sys.argv[2] if len(sys.argv) > 2 else None)
