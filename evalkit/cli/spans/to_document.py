"""``evalkit spans to-document SPANS|--store DIR --out DOC.json``: traces as an eval document to re-run.

One item per trace (``--by trace``) or one thread per session (``--by session``), each with the user prompt,
the agent's recorded answer, its tool calls (``diagnostics.tool_calls``), retrieval hits where the spans
carry them, and the trace and session ids in ``extensions``; ``--evaluator`` names the document's
``default_evaluators``. Selection: ``--session``, ``--since``, ``--filter``, ``--where-failed`` (sessions an
online evaluator failed, from ``--store``), ``--sample N`` with ``--seed``. A thin wrapper over
``evalkit.spans.to_document``.
"""

from __future__ import annotations

import sys

from evalkit.analysis.formatting import count
from evalkit.cli.arguments.paths import output_file
from evalkit.cli.spans.options import add_log_level, add_session_attribute
from evalkit.spans.online.session_tracking import Filter


def register(commands) -> None:
    parser = commands.add_parser(
        "to-document",
        help="turn traces (a span file or the online store) into an eval document to re-run",
        description="Make an eval document from traces: one item per trace (or one multi-turn thread per "
        "session with --by session) holding the user prompt, the agent's answer as the recorded response, "
        "its tool calls and retrieval hits, and the trace and session ids, so evalkit run scores it as "
        "recorded and evalkit run --agent replays the prompts against a new agent version.",
    )
    parser.add_argument(
        "spans",
        metavar="SPANS",
        nargs="?",
        help="span file or folder, in any shape evalkit spans eval reads (or give --store)",
    )
    parser.add_argument("--store", metavar="DIR", help="read the online evaluation store of spans serve")
    parser.add_argument(
        "--out", metavar="DOC.json", required=True, type=output_file, help="eval document to write"
    )
    parser.add_argument(
        "--by",
        choices=("trace", "session"),
        default="trace",
        help="one item per trace (default) or one multi-turn thread per session",
    )
    parser.add_argument(
        "--evaluator",
        metavar="NAME",
        action="append",
        help="evaluator for the document's default_evaluators (repeatable; default: none, so the upstream "
        "default Relevance + Coherence applies)",
    )
    parser.add_argument("--session", metavar="ID", action="append", help="only this session (repeatable)")
    parser.add_argument(
        "--since",
        metavar="TIME",
        help="only traces that started at or after TIME: 2026-12-01T09:00:00Z, or a duration back from now "
        "(24h, 30m, 7d); by session, sessions with such a trace",
    )
    parser.add_argument(
        "--filter",
        metavar="KEY=V",
        action="append",
        help="only traces (by session: sessions) with a span, record or resource attribute that matches: "
        f"{Filter.SYNTAX} (repeatable; all must match)",
    )
    parser.add_argument(
        "--where-failed",
        metavar="EVALUATOR",
        help="only the sessions this online evaluator failed (needs --store); by trace, the traces a trace- "
        "or tool-level result failed",
    )
    parser.add_argument(
        "--sample",
        metavar="N",
        type=int,
        help="at most N items (threads, by session), drawn at random with --seed",
    )
    parser.add_argument("--seed", metavar="S", type=int, default=0, help="seed of --sample (default 0)")
    add_session_attribute(
        parser,
        "session.id and the other session attributes agent frameworks emit; a store's sessions were decided "
        "when its spans arrived",
    )
    add_log_level(parser)
    parser.set_defaults(func=main)


def main(args) -> int:
    from evalkit.spans.datasets.to_document import to_document

    document = to_document(
        args.spans,
        store=args.store,
        by=args.by,
        session=args.session,
        since=args.since,
        filters=args.filter or (),
        where_failed=args.where_failed,
        sample=args.sample,
        seed=args.seed,
        evaluators=args.evaluator,
        session_attribute=args.session_attribute,
        out=args.out,
    )
    items = document["items"]
    traces = document["metadata"]["extensions"]["dev.evalkit.spans"]["traces"]
    what = count(len(items), "thread" if args.by == "session" else "item")
    print(f"{what} from {count(traces, 'trace')} written to {args.out}", file=sys.stdout)
    print(
        f"Run it as recorded: evalkit run {args.out}; against an agent: evalkit run {args.out} --agent TARGET"
    )
    return 0
