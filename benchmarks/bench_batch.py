"""Batch-judging benchmark: the batch path's overhead per 1,000 judgments against the direct path.

Both sides judge the same rows with the same judge against the same local model server (no latency, batches
complete at once), in one process after a warm-up, back to back, ``--repeat`` times (median shown). The batch
side's time is everything ``evaluate(batch=True)`` does: the recording pass, the JSONL upload, creating and
polling the batch (its first poll waits 0.2 s), reading the output file, the answering pass; the direct side
sends each judgment as a chat-completions request through the judge pool. The difference is what batch
judging costs evalkit itself, on top of the service's own turnaround (up to 24 h), and is given per 1,000
judgments. Prints numbers and ratios; asserts nothing.

    .venv/bin/python benchmarks/bench_batch.py                          # 1,000 rows, Relevance
    .venv/bin/python benchmarks/bench_batch.py --judge professional_tone  # a custom .prompty (promptflow)
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def rows(n: int) -> list[dict]:
    return [
        {
            "prompt": f"How many vacation days do employees get in year {i}?",
            "response": f"They get {i % 30} days.",
        }
        for i in range(n)
    ]


def document(n: int, judge: str) -> dict:
    return {"schemaVersion": "1.11.0", "default_evaluators": {judge: {}}, "items": rows(n)}


def run(df, config, *, batch: bool, concurrency: int) -> tuple[float, dict]:
    import evalkit

    started = time.perf_counter()
    scored = evalkit.evaluate(
        df,
        custom_dir=REPO / "custom-evaluators",
        model_config=config,
        concurrency=concurrency,
        cache=False,
        progress=False,
        batch=batch,
    )
    seconds = time.perf_counter() - started
    judge = scored.attrs["evalkit"]["judge"]
    errors = int(scored.filter(like="_error").notna().sum().sum())
    if errors:
        raise SystemExit(f"{errors} judge errors in the {'batch' if batch else 'direct'} run")
    return seconds, judge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument(
        "--judge", default="Relevance", help="a built-in LLM judge or a custom-evaluators/ judge"
    )
    parser.add_argument("--concurrency", type=int, default=32, help="the direct path's judge concurrency")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    os.environ.setdefault(
        "EVALKIT_CACHE_DIR", str(Path(os.environ.get("TMPDIR", "/tmp")) / "evalkit-bench-batch")
    )

    import evalkit
    from evalkit.testing import ModelServer

    with ModelServer() as server:
        config = {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}
        df = evalkit.load(document(args.rows, args.judge))
        warm = evalkit.load(document(5, args.judge))
        run(warm, config, batch=False, concurrency=args.concurrency)
        run(warm, config, batch=True, concurrency=args.concurrency)
        direct, batch, waited = [], [], []
        for _ in range(args.repeat):
            server.reset()
            seconds, judge = run(df, config, batch=False, concurrency=args.concurrency)
            direct.append(seconds)
            server.reset()
            server.batches.reset()
            seconds, judge_b = run(df, config, batch=True, concurrency=args.concurrency)
            batch.append(seconds)
            waited.append(judge_b["batch"]["waited_s"])
            assert judge_b["calls"] == judge["calls"] == len(server.batches.lines)
    n = judge["calls"]
    d, b, w = statistics.median(direct), statistics.median(batch), statistics.median(waited)
    per_k = (b - d) / n * 1000
    print(
        f"judge {args.judge}: {n:,} judgments, direct concurrency {args.concurrency}, median of {args.repeat}"
    )
    print(
        f"  direct  {d:7.2f} s   ({n / d:7.1f} judgments/s)   runs: {', '.join(f'{x:.2f}' for x in direct)}"
    )
    print(f"  batch   {b:7.2f} s   ({n / b:7.1f} judgments/s)   runs: {', '.join(f'{x:.2f}' for x in batch)}")
    print(f"          of which polling the batch {w:.2f} s; the rest is two passes, upload and download")
    print(
        f"  batch / direct: {b / d:.2f}x; overhead {per_k:+.2f} s per 1,000 judgments ({(b - w - d) / n * 1000:+.2f} s without the poll wait)"
    )
    print(
        f"  load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} on {os.cpu_count()} cores",
        file=sys.stdout,
    )


if __name__ == "__main__":
    main()
