"""Core benchmark: evalkit versus azure-ai-evaluation on 100,000 recorded items, import time, dispatch.

Prints numbers and ratios; it asserts nothing (targets live in the issue, not in timed unit tests).

    .venv/bin/python benchmarks/bench_core.py            # 100,000 rows
    .venv/bin/python benchmarks/bench_core.py --rows 20000 --skip-azure
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

PYTHON = sys.executable
WORDS = (
    "policy leave vacation days salary benefits employee manager approval portal form travel expense "
    "report remote work office hours contract review payroll bonus insurance health dental vision plan"
).split()


def make_rows(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        expected = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) + "."
        words = expected.rstrip(".").split()
        if i % 3 == 0:
            response = expected
        else:
            rng.shuffle(words)
            response = " ".join(words[: max(1, len(words) - rng.randint(0, 6))]) + "."
        marker = ("", "[1]", "【1:0†doc】")[i % 3]
        rows.append(
            {
                "prompt": f"Question {i}: {words[0]}?",
                "expected_response": expected,
                "response": response + marker,
            }
        )
    return rows


def write_inputs(folder: Path, rows: list[dict]) -> tuple[Path, Path]:
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {
            "ExactMatch": {},
            "PartialMatch": {},
            "Citations": {"citation_format": "mixed"},
        },
        "items": rows,
    }
    doc_path = folder / "bench.json"
    doc_path.write_text(json.dumps(doc))
    jsonl = folder / "bench.jsonl"
    with jsonl.open("w") as handle:
        for row in rows:
            handle.write(
                json.dumps({"response": row["response"], "ground_truth": row["expected_response"]}) + "\n"
            )
    return doc_path, jsonl


def run_measured(
    args: list[str], cwd: Path | None = None, env: dict | None = None
) -> tuple[float, float, str]:
    """Run a process; return (wall seconds, peak RSS MB, stdout)."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    out = proc.stdout.read()
    err = proc.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{err[-3000:]}")
    return wall, usage.ru_maxrss / 1024, out


def import_time(statement: str = "import evalkit") -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    return min(float(subprocess.check_output([PYTHON, "-c", code], text=True)) for _ in range(5))


AZURE_INPROCESS = textwrap.dedent(
    """
    import sys, time, logging
    logging.disable(logging.WARNING)
    from azure.ai.evaluation import evaluate, F1ScoreEvaluator
    t = time.perf_counter()
    evaluate(data=sys.argv[1], evaluators={"f1": F1ScoreEvaluator()}, output_path=sys.argv[2])
    print(time.perf_counter() - t)
    """
)

EVALKIT_INPROCESS = textwrap.dedent(
    """
    import sys, time
    import evalkit
    df = evalkit.load(sys.argv[1])
    t = time.perf_counter()
    evalkit.evaluate(df, progress=False)
    print(time.perf_counter() - t)
    """
)

DISPATCH = textwrap.dedent(
    """
    import sys, time
    import evalkit
    class Constant:
        def __call__(self, **_):
            return {"score": 1, "reason": "ok"}
    fn = Constant()
    n = int(sys.argv[1])
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {}, "items": [
        {"prompt": f"p{i}", "response": f"r{i}", "expected_response": "e"} for i in range(n)]}
    df = evalkit.load(doc)
    best_run, best_own = 1e9, 1e9
    for _ in range(3):
        t = time.perf_counter(); evalkit.evaluate(df, evaluators={"constant": fn}, progress=False)
        best_run = min(best_run, time.perf_counter() - t)
        t = time.perf_counter()
        for i in range(n):
            fn(prompt="p", response="r", expected_response="e", context="")
        best_own = min(best_own, time.perf_counter() - t)
    print(best_run / n * 1e6, best_own / n * 1e6)
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--skip-azure", action="store_true", help="measure evalkit only")
    args = parser.parse_args()

    print(f"import evalkit: {import_time():.3f} s (target < 0.3 s)")
    first_use = import_time("import evalkit; evalkit.load")
    print(f"import evalkit and first use of the API (pandas loads then): {first_use:.3f} s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        doc_path, jsonl = write_inputs(folder, make_rows(args.rows))
        (folder / "custom-evaluators").mkdir()

        ek_eval = float(run_measured([PYTHON, "-c", EVALKIT_INPROCESS, str(doc_path)], cwd=folder)[2])
        ek_wall, ek_rss, _ = run_measured(
            [PYTHON, "-m", "evalkit", "run", str(doc_path), "--out", str(folder / "out")], cwd=folder
        )
        print(
            f"evalkit evaluate() on {args.rows} rows, ExactMatch + PartialMatch + Citations: {ek_eval:.3f} s"
        )
        print(
            f"evalkit run (whole process, results.json + csv + html): {ek_wall:.2f} s, peak {ek_rss:.0f} MB"
        )

        if not args.skip_azure:
            from evalkit.judges.offline import QUIET_ENVIRONMENT

            env = {**os.environ, **QUIET_ENVIRONMENT}  # keep promptflow's telemetry off the network here too
            az_wall, az_rss, out = run_measured(
                [PYTHON, "-c", AZURE_INPROCESS, str(jsonl), str(folder / "azure.json")], cwd=folder, env=env
            )
            az_eval = float(out.strip().splitlines()[-1])
            print(f"azure-ai-evaluation evaluate() with F1ScoreEvaluator alone: {az_eval:.2f} s")
            print(f"azure-ai-evaluation whole process: {az_wall:.2f} s, peak {az_rss:.0f} MB")
            print(f"ratio evaluate(): {az_eval / ek_eval:.1f}x (target >= 20x)")
            print(
                f"ratio whole process: {az_wall / ek_wall:.1f}x (target >= 4x); peak memory {az_rss / ek_rss:.2f}x"
            )

        per_row, own = (
            float(x) for x in run_measured([PYTHON, "-c", DISPATCH, "100000"], cwd=folder)[2].split()
        )
        print(
            f"code-only custom evaluator dispatch: {per_row:.2f} us/row in evaluate(), its own work {own:.2f} us/row, "
            f"overhead {per_row - own:.2f} us/row (target < 10 us)"
        )


if __name__ == "__main__":
    main()
