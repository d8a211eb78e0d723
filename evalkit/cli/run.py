"""``evalkit run DOC``: load, evaluate, and write results.json, results.csv and report.html."""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

from evalkit.cli.arguments.judge_cost import add_price_option, judge_line
from evalkit.cli.arguments.paths import output_folder
from evalkit.cli.run_options import ci_outputs
from evalkit.cli.run_options.batch import add_batch_option, batch_line, check_batch
from evalkit.cli.run_options.evaluators import CUSTOM_DIR_HELP, add_evaluator_option, extra_evaluators
from evalkit.cli.run_options.jury_lines import jury_lines
from evalkit.cli.run_options.samples import add_sample_options, flaky_line
from evalkit.errors import EvalkitError, shown

LOG_LEVELS = ("debug", "info", "warning", "error")


def register(subparsers) -> None:
    parser = subparsers.add_parser("run", help="evaluate an eval document and write the results")
    parser.add_argument(
        "document",
        metavar="DOC",
        help="eval document (JSON); with --engine spark also a case table in Parquet",
    )
    parser.add_argument(
        "--out", metavar="DIR", type=output_folder, help="results folder (default: results/<document name>)"
    )
    parser.add_argument("--custom-dir", metavar="DIR", help=CUSTOM_DIR_HELP)
    add_evaluator_option(parser)
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
    parser.add_argument(
        "--evaluate-only",
        action="store_true",
        help="score the responses recorded in DOC without calling an agent (upstream 1.10); not with --agent",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the judge cache")
    parser.add_argument(
        "--history",
        metavar="DIR",
        help="show the trend of pass rates across the runs under DIR in report.html",
    )
    parser.add_argument(
        "--judge-timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=120.0,
        help="per judge call (default 120)",
    )
    parser.add_argument(
        "--evaluator-timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=60.0,
        help="per row and code-only custom evaluator call; a longer call is an evaluatorTimeout error for that "
        "row (default 60)",
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
    ci_outputs.add_options(parser)
    add_price_option(parser)
    add_sample_options(parser)
    add_batch_option(parser)
    parser.set_defaults(func=main, read_ahead=read_document_ahead)


def read_document_ahead(args):
    """Start reading the document in a forked child (``documents.load_ahead``): ``evalkit.cli.main`` calls this
    before it imports pandas, keeps the reader as ``args.ahead`` (and closes it at the end), and ``_run`` takes
    the table once the engine is imported. The Spark engine reads its input itself."""
    if args.engine == "spark":
        return None
    from evalkit.documents.load_ahead import LoadAhead

    return LoadAhead.start(args.document)


def parse_seconds(text: str) -> float:
    """A positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds: write e.g. 60 or 2.5"
        ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a positive number of seconds: write e.g. 60 or 2.5"
        )
    return value


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
    check_batch(args)
    if args.engine == "spark":
        from evalkit.cli.run_options.spark import run_spark

        ci = ci_outputs.prepare(args, "run")
        code = run_spark(args, _model_config(args), print_summary)
        return max(
            code, ci.finish_folder(Path(args.out) if args.out else Path("results") / Path(args.document).stem)
        )
    if args.master:
        raise EvalkitError("--master is for --engine spark")
    from evalkit import engine
    from evalkit.analysis.formatting import count, percent
    from evalkit.analysis.summaries import status_counts, summary
    from evalkit.cli.process.heap import give_back_free_memory
    from evalkit.documents import case_table as documents
    from evalkit.engine.forked_parts import usable_cores
    from evalkit.reporting.run_files import save_results

    started = time.perf_counter()
    if getattr(args, "evaluate_only", False) and args.agent:
        raise EvalkitError(
            f"--evaluate-only scores the responses recorded in {args.document} and calls no agent, so it "
            f"cannot be combined with --agent {args.agent}: drop --agent to score the recorded responses, or "
            "drop --evaluate-only to send the prompts to the agent."
        )
    path = Path(args.document)
    ci = ci_outputs.prepare(args, "run")
    ahead = getattr(args, "ahead", None)  # the document, read ahead (``read_document_ahead``)
    if ahead is not None:  # while the child reads: what the run loads later anyway (the time is free now)
        import tqdm.auto  # noqa: F401 - evaluate's progress bar

        from evalkit.reporting.html_page import prepare_page_writer

        prepare_page_writer()
    df = ahead.table() if ahead is not None else documents.load(path)
    scored = engine.evaluate(
        df,
        custom_dir=args.custom_dir,
        evaluators=extra_evaluators(args),
        model_config=_model_config(args),
        concurrency=max(1, args.concurrency),
        cache=not args.no_cache,
        judge_timeout=args.judge_timeout,
        evaluator_timeout=args.evaluator_timeout,
        agent=args.agent,
        price=args.price,
        samples=args.samples,
        pass_rule=args.pass_rule,
        batch=args.batch,
        copy=False,  # no unscored copy beside the scored table at the run's peak: it shares the columns
        processes=usable_cores(),  # large tables: the deterministic evaluators on every core
    )
    del df  # with --agent the answered table is a new one: the unscored one goes
    give_back_free_memory()  # before the fork: the forked writer starts from what the scored table needs
    out = Path(args.out) if args.out else Path("results") / path.stem
    spans: list[int] = []
    extra = {}
    if args.agent:  # spans.jsonl belongs to the run's set of files: replaced together with the others
        from evalkit.agents.span_capture import write_spans_jsonl

        extra["spans.jsonl"] = lambda target: spans.append(write_spans_jsonl(scored, target))
    tallies = {}

    def tally() -> None:  # while the forked writer finishes the page: the numbers printed below
        tallies["counts"], tallies["summary"] = status_counts(scored), summary(scored)

    try:
        paths = save_results(
            scored,
            out,
            parallel=True,
            extra=extra,
            history=getattr(args, "history", None),
            while_waiting=tally,
        )
    except OSError as exc:
        raise EvalkitError(f"cannot write results to {shown(out)}: {exc.strerror or exc}") from None
    if not tallies:  # a save_results that did not call back (as tests may substitute)
        tally()
    counts = tallies["counts"]
    total = counts["total"]
    rate = counts["pass"] / total if total else 0.0
    print(
        f"{count(total, 'row')}: {counts['pass']} pass, {counts['fail']} fail, {counts['partial']} partial, "
        f"{counts['error']} error (pass rate {percent(rate)}) in {time.perf_counter() - started:.2f} s"
    )
    print_summary(tallies["summary"])
    judge = scored.attrs["evalkit"].get("judge")
    if judge:
        print(judge_line(judge))
        if batch_line(judge):
            print(batch_line(judge))
    if flaky_line(scored):
        print(flaky_line(scored))
    for line in jury_lines(scored):
        print(line)
    print(f"Results: {shown(paths['json'])}")
    print(f"CSV:     {shown(paths['csv'])}")
    print(f"Report:  {shown(paths['html'])}")
    if args.agent:
        print(f"Spans:   {shown(paths['spans.jsonl'])} ({count(spans[0], 'span')})")
    code = ci.finish_run(scored, paths["html"])
    if args.fail_under is not None and rate < args.fail_under:
        print(
            f"Gate failed: pass rate {percent(rate)} is below --fail-under {percent(args.fail_under)}",
            file=sys.stderr,
        )
        return 1
    return code


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


def print_summary(table) -> None:
    """One line per evaluator of an ``evalkit.summary`` table: pass rate and counts."""
    from evalkit.analysis.formatting import percent

    rows = [name for name in table.index if name != "(status)"]
    if not rows:
        return
    width = max(len(n) for n in rows)
    for name in rows:
        r = table.loc[name]
        rate = f"{percent(r['pass_rate']):>6}"
        print(
            f"  {name:<{width}}  {rate}  ({int(r['passed'])} pass, {int(r['failed'])} fail, "
            f"{int(r['errored'])} error)"
        )
