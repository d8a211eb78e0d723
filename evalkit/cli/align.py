"""``evalkit align NAME --labels FILE [DOCUMENT]``: align an LLM judge to human labels (``evalkit.align``).

The labelled rows are split (seeded) into an optimisation set and a held-out set; the optimiser model proposes
revised prompts from the disagreements; the variant with the best agreement on the optimisation set is kept and
measured on the held-out rows against the original. Prints the variants tried, the held-out before/after table
(kappa, Spearman, exact agreement with bootstrap intervals and the paired difference) and the verdict, then the
aligned judge's folder (``custom-evaluators/NAME_aligned/``: run it by naming ``NAME_aligned`` in a document).
``--dry-run`` prints the calls, tokens and dollars it would spend, calling nothing. DOCUMENT defaults to the
document beside the labels (``demo.labels.json`` -> ``demo.json``). Exit 0 when the alignment ran (whatever
the verdict), 2 for user mistakes, 3 when no judge model is configured.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from evalkit.cli.arguments.judge_cost import price_argument


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "align",
        help="align an LLM judge to human labels: revised prompt, held-out agreement before and after",
    )
    parser.add_argument(
        "name", metavar="NAME", help="the judge: a custom .prompty judge or Relevance, Coherence, ..."
    )
    parser.add_argument(
        "document", metavar="DOCUMENT", nargs="?", help="the eval document the labels are for"
    )
    parser.add_argument(
        "--labels", metavar="FILE", required=True, help="the labels file (<stem>.labels.json)"
    )
    parser.add_argument(
        "--custom-dir", metavar="DIR", default="custom-evaluators", help="custom evaluators folder"
    )
    parser.add_argument("--evaluator", metavar="NAME", help="use the labels made for this evaluator name")
    parser.add_argument(
        "--optimizer-model",
        metavar="MODEL",
        help="model (deployment) proposing prompts, on the judge's endpoint",
    )
    parser.add_argument(
        "--holdout", metavar="SHARE", type=parse_share, default=0.5, help="share held out (default 0.5)"
    )
    parser.add_argument(
        "--seed", metavar="N", type=int, default=0, help="seed of the split and bootstrap (0)"
    )
    parser.add_argument(
        "--rounds", metavar="N", type=int, default=2, help="most optimiser rounds (default 2)"
    )
    parser.add_argument("--max-calls", metavar="N", type=int, help="most judge calls (default: no cap)")
    parser.add_argument(
        "--shots", metavar="N", type=int, default=3, help="most few-shot examples (default 3)"
    )
    parser.add_argument("--resamples", metavar="N", type=int, default=2000, help="bootstrap resamples (2000)")
    parser.add_argument("--dry-run", action="store_true", help="print what it would cost; call nothing")
    parser.add_argument(
        "--no-write", action="store_true", help="measure only; do not write the aligned judge"
    )
    parser.add_argument(
        "--price",
        metavar="IN/OUT",
        type=price_argument,
        help="USD per 1M prompt / completion tokens (both models)",
    )
    parser.add_argument("--concurrency", metavar="N", type=int, default=8, help="judge calls in flight (8)")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="warning")
    parser.set_defaults(func=main)


def main(args) -> int:
    from evalkit.analysis.alignment.loop import align

    result = align(
        args.name,
        Path(args.labels),
        Path(args.document) if args.document else None,
        custom_dir=Path(args.custom_dir),
        optimizer_model=args.optimizer_model,
        evaluator=args.evaluator,
        holdout=args.holdout,
        seed=args.seed,
        rounds=args.rounds,
        max_calls=args.max_calls,
        shots=args.shots,
        dry_run=args.dry_run,
        write=not args.no_write,
        price=args.price,
        concurrency=args.concurrency,
        resamples=args.resamples,
    )
    print(result.text() if args.dry_run else result.table())
    return 0


def parse_share(text: str) -> float:
    """A share of the labelled items strictly between 0 and 1: ``0.3`` or ``30%``."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share: write e.g. 0.5 or 50%") from None
    if not (math.isfinite(value) and 0 < value < 1):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a share between 0 and 1 (or 0% and 100%), both excluded"
        )
    return value
