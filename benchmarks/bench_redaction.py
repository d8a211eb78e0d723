"""Benchmark of the redactor on the online store's path: span documents serialized and redacted as values.

    .venv/bin/python benchmarks/bench_redaction.py [--docs 10000] [--old REF]

Per span document (a 12-attribute GenAI tool span), in batches of 100 as the receiver stores them:
``redacted_json`` (``evalkit.documents.redaction``: the JSON text looked at, the value walked only when it
could change) against ``json`` serialization alone, for a document with nothing to mask and for one with a
URL holding a key (``?api-key=``), which is walked. With ``--old REF`` (e.g. ``fdca9dd``), the text-level
``redact_json_lines`` of that commit's redaction module is timed too. Median of 5 rounds.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalkit.documents import redaction  # noqa: E402

DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def span(n: int, url: bool) -> dict:
    attributes = {
        "session.id": f"session-{n // 10}",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.arguments": json.dumps({"q": "what is the weather in Paris today?"}),
        "gen_ai.tool.call.result": "Sunny, 21 degrees, light wind from the west.\nTomorrow: rain.",
        "gen_ai.usage.input_tokens": 120,
        "service.name": "agent",
    }
    if url:
        attributes["url.full"] = "https://api.example.org/v1/search?q=paris&api-key=abc123"
    return {
        "traceId": f"{n:032x}",
        "spanId": f"{n:016x}",
        "parentSpanId": f"{n + 1:016x}",
        "name": "execute_tool lookup",
        "kind": "INTERNAL",
        "startTimeUnixNano": 1700000000000000000 + n,
        "endTimeUnixNano": 1700000000000000500 + n,
        "status": {"code": "OK"},
        "attributes": attributes,
        "resource": {"attributes": {"service.name": "agent", "telemetry.sdk.language": "python"}},
        "scope": {"name": "strands", "version": "1.0"},
    }


def _old_module(ref: str):
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:evalkit/documents/redaction.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_redaction.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("old_redaction", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--old", metavar="REF")
    args = parser.parse_args()
    old = _old_module(args.old) if args.old else None
    for url in (False, True):
        docs = [span(n, url) for n in range(args.docs)]
        batches = [docs[i : i + 100] for i in range(0, len(docs), 100)]
        timings = {"redacted_json": [], "json alone": [], "old text redaction": []}
        for _ in range(5):
            started = time.perf_counter()
            for batch in batches:
                redaction.redacted_json(batch, DUMPS)
            timings["redacted_json"].append(time.perf_counter() - started)
            started = time.perf_counter()
            for batch in batches:
                [DUMPS(d) for d in batch]
            timings["json alone"].append(time.perf_counter() - started)
            if old is not None:
                started = time.perf_counter()
                for batch in batches:
                    old.redact_json_lines([DUMPS(d) for d in batch])
                timings["old text redaction"].append(time.perf_counter() - started)
        shown = ", ".join(
            f"{name} {statistics.median(t) / len(docs) * 1e6:.1f} us" for name, t in timings.items() if t
        )
        print(f"{'a URL with a key' if url else 'nothing to mask'}: {shown} per span document")


if __name__ == "__main__":
    main()
