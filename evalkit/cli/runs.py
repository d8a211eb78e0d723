"""``evalkit runs DIR``: the runs saved under a folder, oldest first (see :func:`evalkit.runs`).

Prints one line per run: time, folder, document and the first 12 characters of its sha256, evalkit version,
judge model, rows, the row pass rate and each evaluator's, the judge's tokens, calls and cost ("price not set"
when the run's judge model had no price) and, when some run judged each row K times (``--samples K``),
``samples`` (``3 (all)``: K and the pass rule) and ``flaky_rows``. The results of ``evalkit spans eval`` below
DIR follow under their own heading (folder, results, pass rate, errors): they have no document or items to put
in the table. Exit 0, or 2 when DIR holds no run of a document.
"""

from __future__ import annotations

import math

from evalkit.cli.arguments.paths import output_file
from evalkit.errors import shown as shown_path


def register(subparsers) -> None:
    parser = subparsers.add_parser("runs", help="list the runs saved under a folder with their pass rates")
    parser.add_argument("folder", metavar="DIR", help="a folder of runs (every results.json below it)")
    parser.add_argument(
        "--csv", metavar="FILE", type=output_file, help="also write the full table (full sha256) as CSV"
    )
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="warning")
    parser.set_defaults(func=main)


def _rate(value: float) -> str:
    return "\u2013" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.1%}"


def _cost(usd: float, judge_model) -> str:
    """``$0.0123``; "price not set" for a judged run without a price; empty for a run without a judge."""
    from evalkit.judges.prices import cost_text

    if isinstance(usd, float) and math.isnan(usd):
        return cost_text(None) if isinstance(judge_model, str) and judge_model else ""
    return cost_text({"usd": usd})


def _samples_shown(shown):
    """``samples`` as ``3 (all)`` for a run with ``--samples 3`` (``1`` for a run judged once), ``flaky_rows``
    blank for a run judged once; ``pass_rule`` is then in ``samples``. A folder of runs judged once only (every
    run before --samples, too) keeps the table as it was: no sample columns."""
    import pandas as pd

    if "samples" not in shown.columns:
        return shown
    if (shown["samples"] == 1).all():
        return shown.drop(columns=["samples", "pass_rule", "flaky_rows"])
    shown["samples"] = [
        str(k) if k == 1 or not isinstance(rule, str) else f"{k} ({rule})"
        for k, rule in zip(shown["samples"], shown["pass_rule"], strict=True)
    ]
    shown["flaky_rows"] = ["" if pd.isna(f) else str(int(f)) for f in shown["flaky_rows"]]
    return shown.drop(columns=["pass_rule"])


def _print_span_runs(span_runs: list[dict]) -> None:
    """The span evaluations found next to the runs (``evalkit spans eval --out``), one line each."""
    import pandas as pd

    if not span_runs:
        return
    print()
    print("Span evaluations (evalkit spans eval):")
    table = pd.DataFrame(span_runs)[["run", "results", "pass_rate", "errors"]]
    table["pass_rate"] = [_rate(v) for v in table["pass_rate"]]
    print(table.to_string(index=False))


def main(args) -> int:
    from evalkit.analysis.history import runs

    table = runs(args.folder)
    shown = table.copy()
    shown["time"] = [
        ("" if t is None or str(t) == "NaT" else t.strftime("%Y-%m-%d %H:%M")) for t in table["time"]
    ]
    shown["document_sha256"] = [str(s)[:12] if isinstance(s, str) else "" for s in table["document_sha256"]]
    for column in [c for c in table.columns if c.startswith("pass_rate")]:
        shown[column] = [_rate(v) for v in table[column]]
    if "judge_cost_usd" in table.columns:
        shown["judge_cost_usd"] = [
            _cost(usd, model) for usd, model in zip(table["judge_cost_usd"], table["judge_model"])
        ]
        shown = shown.rename(columns={"judge_cost_usd": "judge_cost"})
    shown = _samples_shown(shown)
    shown = shown.rename(columns={c: c.split(":", 1)[1] for c in shown.columns if c.startswith("pass_rate:")})
    print(shown.fillna("").to_string(index=False))
    _print_span_runs(table.attrs.get("span_runs") or [])
    if args.csv:
        from evalkit.documents.encoding.csv_cells import write_frame

        with open(
            args.csv, "w", encoding="utf-8", newline=""
        ) as handle:  # folder and document names are text: guarded
            write_frame(table.copy(), handle)
        print(f"CSV: {shown_path(args.csv)}")
    return 0
