"""``evalkit run DOC``: load, evaluate, and write results.json, results.csv and report.html."""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

from evalkit.errors import EvalkitError

LOG_LEVELS = ("debug", "info", "warning", "error")


def register(subparsers) -> None:
    parser = subparsers.add_parser("run", help="evaluate an eval document and write the results")
    parser.add_argument(
        "document",
        metavar="DOC",
        help="eval document (JSON); with --engine spark also a case table in Parquet",
    )
    parser.add_argument("--out", metavar="DIR", help="results folder (default: results/<document name>)")
    parser.add_argument(
        "--custom-dir", metavar="DIR", help="custom evaluators folder (default: ./custom-evaluators)"
    )
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="warning")
    parser.add_argument(
        "--fail-under",
        metavar="RATE",
        type=parse_rate,
        help="exit 1 when the share of items (and turns) with status pass is below RATE (0-1, or 80%%)",
    )
    parser.add_argument(
        "--concurrency",
        metavar="N",
        type=int,
        default=8,
        help="most judge calls in flight at once (default 8)",
    )
    parser.add_argument(
        "--agent",
        metavar="TARGET",
        help="the agent under test: path/to/file.py:function, package.module:function, or an OpenAI-compatible "
        "http(s):// endpoint (model from AGENT_MODEL or URL#model, key from AGENT_API_KEY)",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the judge cache")
    parser.add_argument(
        "--judge-timeout", metavar="SECONDS", type=float, default=120.0, help="per judge call (default 120)"
    )
    parser.add_argument(
        "--azure-ai-auth-mode",
        choices=("api-key", "default-credential"),
        default=None,
        help="Azure OpenAI judge sign-in: the API key, or azure-identity's DefaultAzureCredential "
        "(the default when no key is set)",
    )
    parser.add_argument(
        "--engine",
        choices=("pandas", "spark"),
        default="pandas",
        help="pandas (default: one process) or spark (the same engine per partition; needs evalkit[spark])",
    )
    parser.add_argument(
        "--master",
        metavar="URL",
        help="Spark master for --engine spark (default: spark-submit's, else local[*])",
    )
    parser.set_defaults(func=main)


def parse_rate(text: str) -> float:
    """A pass-rate gate: ``0.8`` or ``80%``."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate: write 0.8 or 80%") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate between 0 and 1 (or 0% and 100%)")
    return value


def main(args) -> int:
    # A batch run builds many containers and drops them all at the end: reference counting frees them,
    # and the cyclic collector's repeated scans of a growing heap only cost time (about 5% at 100k items).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if was_enabled:
            gc.enable()


def _run(args) -> int:
    if args.engine == "spark":
        from evalkit.cli.run_spark import run_spark

        return run_spark(args, _model_config(args), print_summary)
    if args.master:
        raise EvalkitError("--master is for --engine spark")
    from evalkit import engine
    from evalkit.analysis.summaries import status_counts
    from evalkit.documents import case_table as documents
    from evalkit.reporting.run_files import save_results

    started = time.perf_counter()
    path = Path(args.document)
    df = documents.load(path)
    scored = engine.evaluate(
        df,
        custom_dir=args.custom_dir,
        model_config=_model_config(args),
        concurrency=max(1, args.concurrency),
        cache=not args.no_cache,
        judge_timeout=args.judge_timeout,
        agent=args.agent,
    )
    out = Path(args.out) if args.out else Path("results") / path.stem
    try:
        paths = save_results(scored, out, parallel=True)
    except OSError as exc:
        raise EvalkitError(f"cannot write results to {out}: {exc.strerror or exc}") from None
    counts = status_counts(scored)
    total = counts["total"]
    rate = counts["pass"] / total if total else 0.0
    print(
        f"{total} rows: {counts['pass']} pass, {counts['fail']} fail, {counts['partial']} partial, "
        f"{counts['error']} error (pass rate {rate:.1%}) in {time.perf_counter() - started:.2f} s"
    )
    _print_evaluators(scored)
    judge = scored.attrs["evalkit"].get("judge")
    if judge:
        print(
            f"Judge: {judge['model']}: {judge['calls']} calls, {judge['cache_hits']} from cache, "
            f"{judge['prompt_tokens']} prompt + {judge['completion_tokens']} completion tokens"
        )
    print(f"Results: {paths['json']}")
    print(f"CSV:     {paths['csv']}")
    print(f"Report:  {paths['html']}")
    if args.agent:
        from evalkit.agents.runner import write_spans_jsonl

        count = write_spans_jsonl(scored, out / "spans.jsonl")
        print(f"Spans:   {out / 'spans.jsonl'} ({count} spans)")
    if args.fail_under is not None and rate < args.fail_under:
        print(
            f"Gate failed: pass rate {rate:.1%} is below --fail-under {args.fail_under:.1%}", file=sys.stderr
        )
        return 1
    return 0


def _model_config(args) -> dict | None:
    """The judge configuration from the environment, adjusted by ``--azure-ai-auth-mode``."""
    if args.azure_ai_auth_mode != "default-credential":
        return None
    from evalkit.judges.models import judge_config

    config = judge_config()
    if config is None or "azure_endpoint" not in config:
        raise EvalkitError(
            "--azure-ai-auth-mode default-credential needs an Azure OpenAI judge: set AZURE_AI_OPENAI_ENDPOINT "
            "and AZURE_AI_MODEL_NAME."
        )
    config.pop("api_key", None)
    return config


def _print_evaluators(scored) -> None:
    from evalkit.analysis.summaries import summary

    print_summary(summary(scored))


def print_summary(table) -> None:
    """One line per evaluator of an ``evalkit.summary`` table: pass rate and counts."""
    rows = [name for name in table.index if name != "(status)"]
    if not rows:
        return
    width = max(len(n) for n in rows)
    for name in rows:
        r = table.loc[name]
        rate = "   n/a" if r["pass_rate"] != r["pass_rate"] else f"{r['pass_rate']:6.1%}"
        print(
            f"  {name:<{width}}  {rate}  ({int(r['passed'])} pass, {int(r['failed'])} fail, "
            f"{int(r['errored'])} error)"
        )
