"""``evalkit spans eval SPANS --evaluator NAME ...``: run Lambda-style span evaluators over exported spans.

Writes ``DIR/results.json`` (``{"evaluationResults": [...]}``, the entries of AgentCore's Evaluate response)
and ``DIR/results.csv`` (one flat row per result), prints the labels each evaluator gave, and with
``--fail-under RATE`` exits 1 when the pass rate is below RATE.

The pass rate is the share of all results that pass by their evaluator's rule (``spans.lambdas.passing_rule``):
a label in the evaluator's ``PASSING_LABELS`` (an LLM judge: the top of its scale), else a ``value`` of at
least 1.0. Errors (exceptions, timeouts, contract violations) count against the gate rather than being left
out of it. results.json says the rule of each evaluator (``passingLabels``, by evaluator id: a list, or null
for the value rule) and results.csv has a ``passed`` column.

``--reference-inputs FILE`` is AgentCore's ground truth (``evaluationReferenceInputs``): code evaluators get
their session's in the payload; ``Builtin.Correctness``, ``Builtin.GoalSuccessRate``, the three
``Builtin.Trajectory*Match`` and custom judges' ground-truth placeholders read them
(``llm_judges.ground_truth``).

The ``spans`` group's other subcommands have their own modules beside this one, registered here:
``package`` (the AWS Lambda zip), ``invoke``, ``serve`` (with ``status``), ``stream`` and ``to_document``.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from collections import Counter
from pathlib import Path

from evalkit.analysis.formatting import count, percent
from evalkit.cli.arguments.paths import output_folder
from evalkit.cli.run import parse_rate, parse_seconds
from evalkit.cli.run_options import ci_outputs
from evalkit.cli.spans.event import register as register_event
from evalkit.cli.spans.invoke import register as register_invoke
from evalkit.cli.spans.options import add_custom_dir, add_log_level, add_session_attribute
from evalkit.cli.spans.package import register as register_package
from evalkit.cli.spans.serve import register as register_serve
from evalkit.cli.spans.stream import register as register_stream
from evalkit.cli.spans.to_document import register as register_to_document
from evalkit.documents.files.atomic import atomic_write
from evalkit.errors import EvalkitError, shown

SHOWN_PROBLEMS = 20


def register(subparsers) -> None:
    parser = subparsers.add_parser("spans", help="evaluate OpenTelemetry spans with Lambda-style evaluators")
    commands = parser.add_subparsers(dest="spans_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=_no_subcommand(parser))
    ev = commands.add_parser(
        "eval",
        help="run AgentCore-compatible code-based evaluators over a span file",
        description="Call each evaluator's lambda_handler with the AgentCore payload, per session, trace or "
        "tool call, and write results.json and results.csv.",
    )
    ev.add_argument(
        "spans",
        metavar="SPANS",
        help="span file or folder (OTLP JSON, Collector file exporter lines, CloudWatch lines, snake_case span "
        "dicts, the OpenTelemetry SDK's to_json() / console exporter output)",
    )
    ev.add_argument(
        "--evaluator",
        metavar="NAME[:LEVEL][@MODULE.FUNCTION]",
        action="append",
        required=True,
        help="span evaluator: Builtin.<Name> (an AgentCore built-in: an LLM judge or Builtin.Trajectory*Match) "
        "or custom-evaluators/NAME/ (NAME.json, an LLM judge, or NAME.py or lambda_function.py defining "
        "lambda_handler or handler; @MODULE.FUNCTION names another handler, as Lambda's handler setting); "
        "LEVEL (TRACE, TOOL_CALL, SESSION) overrides its "
        "EVALUATION_LEVEL; repeat for several (at most 10, as AgentCore allows)",
    )
    ev.add_argument(
        "--session", metavar="ID", action="append", help="evaluate only this session (repeatable)"
    )
    add_custom_dir(ev)
    ev.add_argument("--out", metavar="DIR", type=output_folder, required=True, help="results folder")
    ev.add_argument(
        "--reference-inputs",
        metavar="FILE",
        help='AgentCore ground truth: a JSON list (or {"evaluationReferenceInputs": [...]}) of reference '
        "inputs, each context.spanContext.sessionId (and traceId for one trace) with expectedResponse, "
        "assertions and/or expectedTrajectory; read by code evaluators, Builtin.Correctness, "
        "Builtin.GoalSuccessRate, Builtin.Trajectory*Match and custom judges' ground-truth placeholders",
    )
    ev.add_argument(
        "--fail-under",
        metavar="RATE",
        type=parse_rate,
        help="exit 1 when the share of results that are not errors and have value >= 1.0 (for a categorical "
        "LLM judge: a passing label) is below RATE (0-1, or 80%%)",
    )
    ev.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=300.0,
        help="per evaluator call, as the Lambda time limit (default 300)",
    )
    ev.add_argument(
        "--concurrency", metavar="N", type=int, default=8, help="LLM judge calls in flight (default 8)"
    )
    ev.add_argument(
        "--judge-timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=120.0,
        help="per LLM judge call (default 120)",
    )
    ev.add_argument("--no-cache", action="store_true", help="do not read or write the judge cache")
    add_session_attribute(ev)
    add_log_level(ev)
    ci_outputs.add_options(ev)
    from evalkit.cli.arguments.judge_cost import add_price_option

    add_price_option(ev)
    ev.set_defaults(func=main)
    register_serve(commands)
    register_package(commands)
    register_stream(commands)
    register_invoke(commands)
    register_event(commands)
    register_to_document(commands)


def _no_subcommand(parser):
    def missing(args) -> int:
        from evalkit.cli.arguments.parser import missing_command

        missing_command(parser)

    return missing


def main(args) -> int:
    from evalkit.spans import evaluate_spans, load, passing, results_frame, sessions
    from evalkit.spans.evaluation import check_evaluator_count
    from evalkit.spans.evaluator_specs import resolve_span_evaluator
    from evalkit.spans.llm_judges.ground_truth import read_reference_inputs
    from evalkit.spans.llm_judges.judge_runner import SpanJudges, needs_judges

    started = time.perf_counter()
    check_evaluator_count(len(args.evaluator))
    evaluators = [resolve_span_evaluator(spec, args.custom_dir) for spec in args.evaluator]
    llm = needs_judges(evaluators)
    judges = None
    if llm:  # no judge model configured: exit 3 before the spans are read
        judges = SpanJudges(
            concurrency=args.concurrency,
            timeout=args.judge_timeout,
            cache=not args.no_cache,
            what=f"Span evaluator {llm[0]}",
        )
        args.price = _price(judges, args)  # a bad EVALKIT_PRICES file: exit 3 before any judge call
    references = read_reference_inputs(args.reference_inputs) if args.reference_inputs else None
    ci = ci_outputs.prepare(args, "spans")
    df = load(args.spans, warn=False, session_attribute=args.session_attribute)
    problems = df.attrs.get("problems", [])
    for problem in problems[:SHOWN_PROBLEMS]:
        print(f"Warning: {problem}", file=sys.stderr)
    if len(problems) > SHOWN_PROBLEMS:
        print(f"Warning: ... and {count(len(problems) - SHOWN_PROBLEMS, 'more problem')}", file=sys.stderr)
    table = sessions(df)
    try:
        results = evaluate_spans(
            df,
            evaluators,
            session=args.session,
            timeout=args.timeout,
            reference_inputs=references,
            judges=judges,
        )
    finally:
        if judges is not None:
            judges.close()
    out = Path(args.out)
    try:
        json_path, csv_path = _write(results, results_frame(results, evaluators), out, evaluators)
    except OSError as exc:
        raise EvalkitError(f"cannot write results to {shown(out)}: {exc.strerror or exc}") from None
    chosen = len(set(args.session)) if args.session else len(table)
    records = int((df["signal"] == "record").sum()) if "signal" in df.columns else 0
    read = count(len(df) - records, "span") + (f" + {count(records, 'event record')}" if records else "")
    print(
        f"{read}, {count(chosen, 'session')} evaluated: {count(len(results), 'result')} "
        f"in {time.perf_counter() - started:.2f} s"
    )
    _print_summary(evaluators, results)
    if judges is not None:
        from evalkit.analysis.formatting import judge_usage
        from evalkit.judges.models import describe

        print(f"Judge: {describe(judges.model_config)}: {judge_usage(_judge_counts(judges, args))}")
    passed, total = passing(results, evaluators=evaluators)
    rate = passed / total if total else 0.0
    errors = sum("errorCode" in entry for entry in results)
    said = f"; {count(errors, 'error')}, counted as not passing" if errors else ", no error"
    print(f"Pass rate {percent(rate)} ({passed} of {count(total, 'result')} passing{said})")
    print(f"Results: {json_path}")
    print(f"CSV:     {csv_path}")
    code = ci.finish_spans(out, _judge_counts(judges, args))
    if args.fail_under is not None and rate < args.fail_under:
        print(
            f"Gate failed: pass rate {rate:.1%} is below --fail-under {args.fail_under:.1%}", file=sys.stderr
        )
        return 1
    return code


def _judge_counts(judges, args) -> dict | None:
    """What the run counted of its LLM judge calls, for the CI summary."""
    if judges is None:
        return None
    from evalkit.judges.prices import judge_cost

    counts = {
        "calls": judges.pool.usage.requests,
        "cache_hits": judges.pool.cache_hits,
        "prompt_tokens": judges.tokens["prompt"],
        "completion_tokens": judges.tokens["completion"],
    }
    return {**counts, "cost": judge_cost(counts, getattr(args, "price", None))}


def _price(judges, args):
    """The judge's price: ``--price``, else the ``EVALKIT_PRICES`` entry of its model, else None."""
    from evalkit.judges.prices import price_for

    config = judges.model_config
    return price_for(config.get("azure_deployment") or config.get("model"), getattr(args, "price", None))


def _write(results: list[dict], frame, out: Path, evaluators) -> tuple[Path, Path]:
    from evalkit.documents.encoding.csv_cells import guard  # numpy: not imported with the command line

    json_path, csv_path = out / "results.json", out / "results.csv"
    rules = {
        e.evaluator_id: sorted(e.passing_labels) if e.passing_labels is not None else None for e in evaluators
    }
    # One result per line, each encoded in one C-accelerated call: json.dump with indent would take the
    # pure-Python encoder (3 s for 50,000 results).
    encode = json.JSONEncoder(ensure_ascii=False).encode
    with atomic_write(json_path) as handle:
        handle.write('{"evaluationResults": [')
        for index, entry in enumerate(results):
            handle.write(",\n  " if index else "\n  ")
            handle.write(encode(entry))
        handle.write("\n]," if results else "],")
        handle.write(f' "passingLabels": {encode(rules)}}}\n')
    with atomic_write(csv_path, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([guard(c) for c in frame.columns])
        for row in frame.itertuples(index=False):  # text cells guarded against formula injection
            writer.writerow(
                ["" if v is None or v != v else guard(v) if v.__class__ is str else v for v in row]
            )
    return json_path, csv_path


def _print_summary(evaluators, results: list[dict]) -> None:
    """One line per evaluator: how many results, the labels counted, the error codes counted."""
    by_key: dict[tuple[str, str], list[dict]] = {(e.name, e.level): [] for e in evaluators}
    ids = {e.evaluator_id: (e.name, e.level) for e in evaluators}
    rules = {(e.name, e.level): e.passing_labels for e in evaluators}
    for entry in results:
        by_key[ids[entry["evaluatorId"]]].append(entry)
    width = max(len(f"{n} ({lv})") for n, lv in by_key)
    for (name, level), entries in by_key.items():
        labels = Counter(e["label"] for e in entries if "label" in e)
        errors = Counter(e["errorCode"] for e in entries if "errorCode" in e)
        parts = [", ".join(f"{label} {count}" for label, count in labels.most_common())] if labels else []
        if errors:
            n = sum(errors.values())
            detail = ", ".join(f"{code} {count}" for code, count in errors.most_common())
            parts.append(f"{n} error{'s' if n != 1 else ''} ({detail})")
        head = f"{name} ({level})"
        count = f"{len(entries)} result{'s' if len(entries) != 1 else ''}"
        declared = rules.get((name, level))
        rule = f" [passing: {', '.join(sorted(declared))}]" if declared is not None else ""
        print(f"  {head:<{width}}  {count}: {'; '.join(parts) or '-'}{rule}")
