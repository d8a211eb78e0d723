"""``evalkit spans event SPANS --session ID [--level LEVEL]``: write the exact AgentCore Lambda event that
``spans eval`` would send a code-based evaluator for one session, so ``spans invoke`` can be tried on one's
own telemetry.

The event is what ``evalkit.spans.lambdas.lambda_events`` builds (byte for byte what ``spans eval`` sends):
``--level`` picks the evaluation level, ``--trace`` / ``--span`` the target among several (the first one
otherwise, with a note naming how many there are), ``--evaluator`` the ``evaluatorName`` it carries and
``--reference-inputs`` its ground truth. Written to ``--out FILE`` (atomically) or standard output.
"""

from __future__ import annotations

import sys

from evalkit.cli.arguments.paths import output_file
from evalkit.cli.spans.options import add_session_attribute

EXAMPLE = (
    "example: evalkit spans event data/agentcore_split_spans.jsonl --session sess-split-broker "
    "--level TRACE --out event.json && evalkit spans invoke NAME --event event.json"
)


def register(commands) -> None:
    event = commands.add_parser(
        "event",
        help="write the AgentCore Lambda event spans eval would send for one session (to try spans invoke)",
        description="Build the event AgentCore sends a code-based evaluator (schemaVersion, evaluatorId, "
        "evaluatorName, evaluationLevel, evaluationInput.sessionSpans, evaluationReferenceInputs, "
        "evaluationTarget) for one session of a span file, exactly as 'evalkit spans eval' sends it, and "
        "write it as JSON for 'evalkit spans invoke NAME --event FILE'.",
        epilog=EXAMPLE,
    )
    event.add_argument("spans", metavar="SPANS", help="span file or folder (every shape spans eval reads)")
    event.add_argument("--session", metavar="ID", required=True, help="the session the event carries")
    event.add_argument(
        "--level",
        choices=("SESSION", "TRACE", "TOOL_CALL"),
        default="SESSION",
        help="evaluation level (default SESSION): TRACE and TOOL_CALL events name their target trace or span",
    )
    event.add_argument(
        "--trace", metavar="TRACE_ID", help="the target trace (TRACE, TOOL_CALL); default: the first"
    )
    event.add_argument(
        "--span", metavar="SPAN_ID", help="the target tool-call span (TOOL_CALL); default: the first"
    )
    event.add_argument(
        "--evaluator",
        metavar="NAME",
        default="my_evaluator",
        help="the evaluatorName the event carries (its evaluatorId derives from it, as in spans eval)",
    )
    event.add_argument(
        "--reference-inputs",
        metavar="FILE",
        help="AgentCore reference inputs; the event carries the session's (evaluationReferenceInputs)",
    )
    add_session_attribute(event)
    event.add_argument(
        "--out", metavar="FILE", type=output_file, help="write the event here (default: stdout)"
    )
    event.set_defaults(func=main)


def main(args) -> int:
    from evalkit.documents.files.atomic import atomic_write
    from evalkit.errors import EvalkitError
    from evalkit.spans.lambdas.lambda_events import lambda_events
    from evalkit.spans.llm_judges.ground_truth import read_reference_inputs

    if args.span is not None and args.level != "TOOL_CALL":
        raise EvalkitError("--span names a tool-call span: use it with --level TOOL_CALL")
    if args.trace is not None and args.level == "SESSION":
        raise EvalkitError("--trace names a target trace: use it with --level TRACE or TOOL_CALL")
    references = read_reference_inputs(args.reference_inputs) if args.reference_inputs else None
    events = lambda_events(
        args.spans,
        session=args.session,
        level=args.level,
        evaluator=args.evaluator,
        reference_inputs=references,
        session_attribute=args.session_attribute,
    )
    chosen = [
        e
        for e in events
        if (args.trace is None or e.trace_id == args.trace) and (args.span is None or e.span_id == args.span)
    ]
    if not chosen:
        wanted = f"span {args.span}" if args.span is not None else f"trace {args.trace}"
        targets = sorted({e.span_id if args.span is not None else e.trace_id for e in events})
        raise EvalkitError(
            f"{wanted} is not a {args.level} target of session {args.session!r}; its targets: {', '.join(targets)}"
        )
    event = chosen[0]
    if len(chosen) > 1:
        kind = "traces" if args.level == "TRACE" else "tool-call spans"
        print(
            f"Note: session {args.session!r} has {len(chosen)} {kind}; this event targets the first "
            f"({event.span_id or event.trace_id}); choose another with --{'trace' if args.level == 'TRACE' else 'span'}",
            file=sys.stderr,
        )
    if args.out is None:
        sys.stdout.write(event.text + "\n")
        return 0
    with atomic_write(args.out) as handle:
        handle.write(event.text + "\n")
    print(f"Wrote the {args.level} event for session {args.session!r} to {args.out}", file=sys.stderr)
    return 0
