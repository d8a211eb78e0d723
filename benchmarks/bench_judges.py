"""Judge benchmark: evalkit versus azure-ai-evaluation against the local model server (0.25 s latency).

Prints numbers and ratios; asserts nothing.

    .venv/bin/python benchmarks/bench_judges.py            # 300 rows, --concurrency 32
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from evalkit.judges.offline import QUIET_ENVIRONMENT
from evalkit.testing import ModelServer

PYTHON = sys.executable

AZURE = textwrap.dedent(
    """
    import sys, time, logging
    logging.disable(logging.WARNING)
    from azure.ai.evaluation import evaluate, RelevanceEvaluator
    config = {"type": "openai", "base_url": sys.argv[2], "model": "judge", "api_key": "k"}
    t = time.perf_counter()
    evaluate(data=sys.argv[1], evaluators={"relevance": RelevanceEvaluator(model_config=config)},
             output_path=sys.argv[3])
    print(time.perf_counter() - t)
    """
)

IN_PROCESS = textwrap.dedent(
    """
    import sys, time, json, evalkit
    df = evalkit.load(sys.argv[1])
    config = {"base_url": sys.argv[2], "model": "judge", "api_key": "k"}
    evalkit.evaluate(df.head(1), model_config=config, cache=False, progress=False)  # imports, warm-up
    t = time.perf_counter()
    evalkit.evaluate(df, model_config=config, concurrency=int(sys.argv[3]), cache=False, progress=False)
    print(time.perf_counter() - t)
    """
)


def rows(n: int) -> list[dict]:
    return [
        {
            "prompt": f"How many vacation days do employees get in year {i}?",
            "response": f"They get {i % 30} days.",
        }
        for i in range(n)
    ]


def timed(args: list[str], env: dict) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} failed:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - started, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--skip-azure", action="store_true")
    args = parser.parse_args()
    ideal = args.rows * args.latency / args.concurrency

    with tempfile.TemporaryDirectory() as tmp, ModelServer(latency=args.latency) as server:
        folder = Path(tmp)
        doc = folder / "doc.json"
        doc.write_text(
            json.dumps(
                {"schemaVersion": "1.11.0", "default_evaluators": {"Relevance": {}}, "items": rows(args.rows)}
            )
        )
        env = {**os.environ, **QUIET_ENVIRONMENT, "EVALKIT_CACHE_DIR": str(folder / "cache")}

        judged = float(
            timed([PYTHON, "-c", IN_PROCESS, str(doc), server.openai_base_url, str(args.concurrency)], env)[1]
        )
        print(
            f"{args.rows} Relevance judgments at concurrency {args.concurrency}: {judged:.2f} s "
            f"(ideal {ideal:.2f} s; ratio {judged / ideal:.2f}, target <= 1.5)"
        )

        run_env = {
            **env,
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_MODEL": "judge",
            "OPENAI_API_KEY": "k",
        }
        command = [
            PYTHON,
            "-m",
            "evalkit",
            "run",
            str(doc),
            "--out",
            str(folder / "out"),
            "--concurrency",
            str(args.concurrency),
        ]
        whole, _ = timed(command, run_env)
        cached, out = timed(command, run_env)
        print(f"evalkit run, whole process: {whole:.2f} s; cached re-run: {cached:.2f} s (target < 2 s)")
        print("  " + next(line for line in out.splitlines() if line.startswith("Judge:")))

        if not args.skip_azure:
            jsonl = folder / "doc.jsonl"
            jsonl.write_text(
                "".join(
                    json.dumps({"query": r["prompt"], "response": r["response"]}) + "\n"
                    for r in rows(args.rows)
                )
            )
            azure_wall, out = timed(
                [PYTHON, "-c", AZURE, str(jsonl), server.openai_base_url, str(folder / "az.json")], env
            )
            print(
                f"azure-ai-evaluation evaluate() with RelevanceEvaluator: {float(out.strip().splitlines()[-1]):.2f} s, "
                f"whole process {azure_wall:.2f} s"
            )
            azure_eval = float(out.strip().splitlines()[-1])
            print(
                f"ratio whole process: {azure_wall / whole:.1f}x (target >= 4x); "
                f"against azure-ai-evaluation's evaluate() call alone: {azure_eval / whole:.1f}x"
            )


if __name__ == "__main__":
    main()
