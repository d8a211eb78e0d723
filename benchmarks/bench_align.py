"""Alignment benchmark: what ``evalkit.align`` spends (judge calls, optimiser calls, tokens, seconds).

Runs the alignment of the built-in Relevance judge against evalkit's local model server (rule-following mode)
on the bundled FeedbackQA labels (``data/feedbackqa``, 54 rows rated by people) and on evalkit's synthetic
labelled sets (``evalkit.testing.labelled``) of growing size, and prints per set: the dry run's planned judge
calls, the judge calls the server actually received, optimiser calls, prompt and completion tokens (as the
server counted them), seconds, and the held-out kappa before -> after with the verdict. The planned number is
an upper bound; the search stops early when a round finds nothing better. Asserts nothing. The machine may be
shared: give ``uptime`` beside the times.

    .venv/bin/python benchmarks/bench_align.py                      # bundled + synthetic 80 and 400
    .venv/bin/python benchmarks/bench_align.py --sizes 80 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PF_DISABLE_TRACING", "true")
os.environ.setdefault("PF_TRACING_SKIP_LOCAL_SETUP", "true")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import evalkit  # noqa: E402
from evalkit.testing import ModelServer  # noqa: E402
from evalkit.testing.labelled import synthetic_labelled  # noqa: E402


def measure(name: str, labels: Path, document: Path, rounds: int, server: ModelServer, work: Path) -> dict:
    config = {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}
    custom = work / f"custom-{name}"
    plan = evalkit.align(
        "Relevance", labels, document, custom_dir=custom, model_config=config, rounds=rounds, dry_run=True
    )
    server.reset()
    started = time.perf_counter()
    result = evalkit.align(
        "Relevance", labels, document, custom_dir=custom, model_config=config, rounds=rounds, resamples=1000
    )
    seconds = time.perf_counter() - started
    requests = server.requests
    optimiser = sum("revise the prompt of an LLM judge" in json.dumps(r["body"]) for r in requests)
    tokens = server.tokens_reported
    return {
        "set": name,
        "rows": result.split["labelled"],
        "planned": plan.judge_calls,
        "judge_calls": len(requests) - optimiser,
        "reported_calls": result.cost["judge_calls"],
        "optimiser_calls": optimiser,
        "prompt_tokens": tokens["prompt"],
        "completion_tokens": tokens["completion"],
        "seconds": seconds,
        "kappa": f"{result.before['kappa'][0]:.2f} -> {result.after['kappa'][0]:.2f}",
        "verdict": result.verdict.split(";")[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=[80, 400], help="synthetic set sizes")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, ModelServer() as server:
        work = Path(tmp)
        rows.append(
            measure(
                "feedbackqa (bundled)",
                REPO / "data" / "feedbackqa.labels.json",
                REPO / "data" / "feedbackqa.json",
                args.rounds,
                server,
                work,
            )
        )
        for size in args.sizes:
            document, labels = synthetic_labelled(size, seed=size)
            (work / f"syn{size}.json").write_text(json.dumps(document), encoding="utf-8")
            (work / f"syn{size}.labels.json").write_text(json.dumps(labels), encoding="utf-8")
            rows.append(
                measure(
                    f"synthetic {size}",
                    work / f"syn{size}.labels.json",
                    work / f"syn{size}.json",
                    args.rounds,
                    server,
                    work,
                )
            )
    head = ["set", "rows", "planned", "judge_calls", "reported_calls", "optimiser_calls", "prompt_tokens",
            "completion_tokens", "seconds", "kappa", "verdict"]  # fmt: skip
    cells = [[f"{r[h]:.1f}" if isinstance(r[h], float) else str(r[h]) for h in head] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *cells)]
    for line in [head, *cells]:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)))
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
