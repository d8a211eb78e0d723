"""``evalkit report RUN_DIR [--baseline RUN_DIR] [--title T] [-p NAME VALUE] --out FILE.html``: the run report as one HTML file.

Executes the report notebook (``evalkit/reporting/templates/report.ipynb``, the same file as the repository's
``notebooks/report.ipynb``) with papermill on the ``python3`` Jupyter kernel and exports its outputs as a
standalone page that opens offline (see :mod:`evalkit.reporting.notebook_report`). Exit 0 when the report is written, 2 for user
mistakes (a missing folder, a file that is not a run), 3 when there is no Jupyter kernel to run it on.
"""

from __future__ import annotations

import time
from pathlib import Path

from evalkit.cli.arguments.paths import output_file
from evalkit.errors import EvalkitError, shown


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write the report of a run (provenance, summary, charts, failing rows) as one HTML file",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run: a results folder or its results.json")
    parser.add_argument(
        "--baseline", metavar="RUN_DIR", help="also compare with this baseline run (deltas, regressed rows)"
    )
    parser.add_argument("--title", metavar="T", help="report title (default: the document's name)")
    parser.add_argument(
        "--history", metavar="DIR", help="also show the trend of pass rates across the runs under DIR"
    )
    parser.add_argument(
        "--out", metavar="FILE.html", type=output_file, required=True, help="where to write the HTML report"
    )
    parser.add_argument(
        "--notebook",
        metavar="FILE.ipynb",
        type=output_file,
        help="also keep the executed notebook (outputs included)",
    )
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        default=[],
        help="set another parameter of the report notebook (as papermill -p); an unknown NAME is an error",
    )
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="warning")
    parser.set_defaults(func=main)


def main(args) -> int:
    from evalkit.reporting.notebook_report import render_report

    started = time.perf_counter()
    out = Path(args.out)
    try:
        render_report(
            args.run_dir,
            out,
            baseline_dir=args.baseline,
            title=args.title,
            notebook_out=getattr(args, "notebook", None),
            parameters=dict(getattr(args, "parameter", None) or []),
            history_dir=getattr(args, "history", None),
        )
    except OSError as exc:
        raise EvalkitError(f"cannot write the report to {shown(out)}: {exc.strerror or exc}") from None
    size = out.stat().st_size
    print(f"Report: {shown(out)} ({size / 1e6:.1f} MB) in {time.perf_counter() - started:.1f} s")
    return 0
