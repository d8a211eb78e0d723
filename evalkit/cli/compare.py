"""``evalkit compare A B [--out FILE.html]``: per-evaluator deltas between two saved runs, and an HTML report.

A and B are run folders (as written by ``evalkit run --out DIR``) or their results.json files; A is the baseline,
B the candidate. The deltas table is printed, and the page's warnings (different documents, few shared rows, too
few pairs for a test) go to stderr; ``--out`` also writes the standalone comparison report. Exit 0 when the
comparison was made (a regression is information, not a failure), 2 for user mistakes (a missing folder, a
file that is not a run).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from evalkit.cli.arguments.paths import output_file
from evalkit.cli.compare_pairwise import add_pairwise_options, run_pairwise
from evalkit.errors import EvalkitError, shown


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two runs: pass-rate and score deltas, McNemar tests, regressed items"
    )
    parser.add_argument("run_a", metavar="A", help="baseline run: a results folder or its results.json")
    parser.add_argument("run_b", metavar="B", help="candidate run: a results folder or its results.json")
    parser.add_argument(
        "--out", metavar="FILE.html", type=output_file, help="also write a standalone HTML comparison report"
    )
    parser.add_argument(
        "--seed", metavar="N", type=int, default=0, help="seed of the paired bootstrap (default 0)"
    )
    parser.add_argument(
        "--resamples",
        metavar="N",
        type=int,
        default=2000,
        help="bootstrap resamples for the 95%% intervals (default 2000)",
    )
    add_pairwise_options(parser)
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="warning")
    parser.set_defaults(func=main)


def main(args) -> int:
    from evalkit.analysis.comparison import compare
    from evalkit.reporting.comparison_page import write_html

    started = time.perf_counter()
    if args.resamples < 1:
        raise EvalkitError(f"--resamples must be at least 1, got {args.resamples}")
    comparison = compare(args.run_a, args.run_b, seed=args.seed, resamples=args.resamples)
    print(comparison.table())
    print_notices(comparison)
    judged = run_pairwise(args)  # --pairwise: win / tie / loss by a pairwise judge
    if args.out:
        out = Path(args.out)
        try:
            write_html(comparison, out, pairwise=judged)
        except OSError as exc:
            raise EvalkitError(f"cannot write the report to {shown(out)}: {exc.strerror or exc}") from None
        print(f"Report: {shown(out)}")
    print(f"Compared in {time.perf_counter() - started:.2f} s")
    return 0


def print_notices(comparison) -> None:
    """The page's banners (different documents, few shared rows, too few pairs) on stderr, one line each
    (``evalkit.analysis.comparison_checks.notice_lines``)."""
    from evalkit.analysis.comparison_checks import notice_lines

    for line in notice_lines(comparison.notices):
        print(line, file=sys.stderr)
