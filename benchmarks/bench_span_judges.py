"""Span judge benchmark: AgentCore built-in LLM judges over many sessions, against the local model server.

Replicates the sessions of ``data/agentcore_spans.jsonl`` (new ids) and runs ``Builtin.Helpfulness``,
``Builtin.GoalSuccessRate`` and ``Builtin.ToolSelectionAccuracy`` through ``evaluate_spans``: a first run (every
judgment a model call, the server answering after ``--latency`` seconds) and a second run answered by the
judge cache. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_span_judges.py                 # 200 copies, latency 0.25 s, 32 in flight
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVALUATORS = ["Builtin.Helpfulness", "Builtin.GoalSuccessRate", "Builtin.ToolSelectionAccuracy"]


def replicate(copies: int, path: Path) -> None:
    docs = [json.loads(line) for line in (REPO / "data" / "agentcore_spans.jsonl").read_text().splitlines()]
    with open(path, "w", encoding="utf-8") as handle:
        for n in range(copies):
            for doc in docs:
                copy = json.loads(json.dumps(doc))
                copy["traceId"] = f"{n:08x}" + copy["traceId"][8:]
                copy["attributes"]["session.id"] = f"{copy['attributes']['session.id']}-{n}"
                handle.write(json.dumps(copy) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["EVALKIT_CACHE_DIR"] = tmp
        from evalkit.spans import evaluate_spans, load
        from evalkit.spans.llm_judges.judge_runner import SpanJudges
        from evalkit.testing import ModelServer

        spans = Path(tmp) / "spans.jsonl"
        replicate(args.copies, spans)
        frame = load(spans)
        with ModelServer(latency=args.latency) as server:
            config = {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}
            for label in ("first run", "cached re-run"):
                judges = SpanJudges(config, concurrency=args.concurrency)
                started = time.perf_counter()
                results = evaluate_spans(frame, EVALUATORS, judges=judges)
                seconds = time.perf_counter() - started
                judges.close()
                errors = sum("errorCode" in r for r in results)
                print(
                    f"{label}: {len(results)} judgments ({errors} errors), {judges.pool.calls_made} model calls, "
                    f"{judges.pool.cache_hits} cached, {seconds:.2f} s, {len(results) / seconds:.0f} judgments/s; "
                    f"tokens {judges.tokens['prompt']} + {judges.tokens['completion']}"
                )
        ideal = len(results) * args.latency / args.concurrency
        print(f"lower bound at {args.concurrency} in flight and {args.latency} s latency: {ideal:.2f} s")


if __name__ == "__main__":
    main()
