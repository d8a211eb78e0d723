"""The judge's cost on the command line: the ``--price IN/OUT`` option and the ``Judge:`` summary line.

``Judge: <model>: N calls, H from cache, P prompt + C completion tokens, $0.0123`` (or ``, price not set``)
counts the requests the model received (retries included, ``evalkit.judges.metering``) and prices their tokens
with ``--price`` or the ``EVALKIT_PRICES`` file (``evalkit.judges.prices``).
"""

from __future__ import annotations

import argparse

from evalkit.errors import EvalkitError


def add_price_option(parser) -> None:
    parser.add_argument(
        "--price",
        metavar="IN/OUT",
        type=price_argument,
        help="the judge model's price in USD per 1M prompt / completion tokens, e.g. 0.15/0.60 (default: its "
        "entry in the EVALKIT_PRICES file; else the cost is 'price not set')",
    )


def price_argument(text: str):
    from evalkit.judges.prices import parse_price

    try:
        return parse_price(text)
    except EvalkitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def judge_line(judge: dict) -> str:
    """The ``Judge:`` line of a run's summary (``judge_usage``: the line every judging command prints)."""
    from evalkit.analysis.formatting import judge_usage

    return f"Judge: {judge['model']}: {judge_usage(judge)}"
