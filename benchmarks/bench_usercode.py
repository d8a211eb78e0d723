"""The one runner's cost (``evalkit.usercode``): a trivial code-only custom evaluator over many rows, and a
trivial span handler called again and again in its warm worker.

Prints wall time per row / per call and, for span calls, the CPU per call of evalkit's process and of the
worker (CPU time is what a loaded machine does not inflate); asserts nothing.

    .venv/bin/python benchmarks/bench_usercode.py [--rows 100000] [--calls 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path


def trivial(*, prompt="", **_):
    return {"score": 1, "reason": "ok"}


def rows(count: int) -> None:
    import pandas as pd

    import evalkit

    df = pd.DataFrame({"prompt": [f"p{i}" for i in range(count)], "response": ["r"] * count})
    for limit in (None, 60):
        times = []
        for _ in range(3):
            started = time.perf_counter()
            evalkit.evaluate(df, evaluators={"trivial": trivial}, evaluator_timeout=limit, progress=False)
            times.append(time.perf_counter() - started)
        way = "in evalkit's process (no limit)" if limit is None else "in a forked worker (limit 60 s)"
        print(
            f"custom evaluator, {count:,} rows {way}: best {min(times):.3f} s, {min(times) / count * 1e6:.1f} us/row"
        )


def calls(count: int) -> None:
    from evalkit import spans
    from evalkit.spans.lambdas.evaluator_workers import EvaluatorWorkers

    home = Path(tempfile.mkdtemp()) / "custom-evaluators" / "trivial"
    home.mkdir(parents=True)
    (home / "trivial.py").write_text(
        "EVALUATION_LEVEL = 'SESSION'\ndef lambda_handler(event, context):\n    return {'label': 'PASS', 'value': 1.0}\n"
    )
    evaluator = spans.load_span_evaluator("trivial", home.parent)
    payload = json.dumps({"evaluationLevel": "SESSION", "evaluationInput": {"sessionSpans": [{"a": 1}] * 20}})
    tick = os.sysconf("SC_CLK_TCK")

    def cpu(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    with EvaluatorWorkers() as workers:
        workers.call(evaluator, payload, 30, "warm-up")
        (worker,) = workers._workers.values()
        pid = worker.pid
        worker_cpu, own_cpu, wall = cpu(pid), time.process_time(), time.perf_counter()
        for _ in range(count):
            workers.call(evaluator, payload, 30, "bench")
        worker_cpu, own_cpu, wall = (
            cpu(pid) - worker_cpu,
            time.process_time() - own_cpu,
            time.perf_counter() - wall,
        )
    print(
        f"span handler, {count:,} calls in a warm worker: evalkit CPU {own_cpu / count * 1e6:.0f} us/call, worker CPU "
        f"{worker_cpu / count * 1e6:.0f} us/call, wall {wall / count * 1e6:.0f} us/call"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=5_000)
    args = parser.parse_args()
    rows(args.rows)
    calls(args.calls)


if __name__ == "__main__":
    main()
