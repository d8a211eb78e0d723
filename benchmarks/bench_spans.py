"""Span benchmark: 10,000 sessions (about 100,000 spans) through the four reference span evaluators.

Prints load time, evaluation time, sessions per second and peak memory; asserts nothing.

    .venv/bin/python benchmarks/bench_spans.py [--sessions 10000] [--in-process]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOOLS = (
    ("identify_broker", "Broker identified: Maria Chen, Northwind Securities."),
    ("get_broker_profile", "Profile loaded: growth strategy, moderate risk, interests in technology."),
    ("get_stock_data", "AAPL: $189.32 (+0.4%) volume 52M."),
    (
        "search_news",
        "Apple shipped a new device lineup this week. Analysts expect steady services growth ahead.",
    ),
)


def span(trace, span_id, parent, name, start, attributes, events=None):
    doc = {
        "traceId": trace, "spanId": span_id, "name": name, "kind": "INTERNAL",
        "startTimeUnixNano": start, "endTimeUnixNano": start + 1_000_000, "attributes": attributes,
        "status": {"code": "UNSET"},
    }  # fmt: skip
    if parent:
        doc["parentSpanId"] = parent
    if events:
        doc["events"] = events
    return doc


def session_spans(index: int) -> list[dict]:
    """Two traces of five spans each: an agent span with its answer and four tool spans in workflow order."""
    session = f"session-{index:06d}"
    docs, clock = [], 1_700_000_000_000_000_000 + index * 10_000_000_000
    for turn in range(2):
        trace = f"{index:016x}{turn:016x}"
        root = f"{index:08x}{turn:04x}0000"
        answer = "AAPL is trading at $189.32 today; your profile favours growth." if turn else "Hello Maria."
        docs.append(span(trace, root, None, "invoke_agent market-assistant", clock,
                         {"gen_ai.operation.name": "invoke_agent", "session.id": session,
                          "gen_ai.task.output": answer}))  # fmt: skip
        for number, (tool, output) in enumerate(TOOLS, 1):
            clock += 2_000_000
            docs.append(span(trace, f"{index:08x}{turn:04x}{number:04x}", root, f"execute_tool {tool}", clock,
                             {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                              "gen_ai.tool.call.result": output, "session.id": session}))  # fmt: skip
        clock += 1_000_000_000
    return docs


def main() -> None:
    from evalkit.spans import evaluate_spans, load, load_span_evaluator

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="call the handlers in this process (isolate=False) instead of in worker processes",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spans.jsonl"
        with path.open("w") as handle:
            for index in range(args.sessions):
                for doc in session_spans(index):
                    handle.write(json.dumps(doc) + "\n")
        started = time.perf_counter()
        frame = load(path)
        loaded = time.perf_counter() - started
        names = ("tool_response_schema", "stock_price_drift", "workflow_contract", "pii_leak")
        evaluators = [load_span_evaluator(name, REPO / "custom-evaluators") for name in names]
        started = time.perf_counter()
        results = evaluate_spans(frame, evaluators, isolate=not args.in_process)
        evaluated = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    errors = sum("errorCode" in r for r in results)
    print(f"load {len(frame)} spans: {loaded:.2f} s")
    print(
        f"evaluate {args.sessions} sessions with the four reference evaluators ({len(results)} calls, "
        f"{errors} errors): {evaluated:.2f} s, {args.sessions / evaluated:.0f} sessions/s"
    )
    print(f"total {loaded + evaluated:.2f} s (target: well under 60 s); peak memory {peak:.0f} MB")


if __name__ == "__main__":
    main()
