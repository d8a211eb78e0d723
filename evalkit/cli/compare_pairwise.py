"""``evalkit compare A B --pairwise [--judge FILE.prompty | MODEL]``: a pairwise judge on the shared prompts.

Beside the deltas, the judge model (configured as for ``evalkit run``: the environment or ``.env``) sees each
paired row's two responses in both orders (``evalkit.analysis.pairwise``); the CLI prints win / tie / loss with
the exact interval of B's win share and the rows that decided it, and ``--out`` adds the pairwise section to
the comparison page.

May import: ``evalkit.analysis``, ``evalkit.judges``, ``evalkit.errors``.
"""

from __future__ import annotations


def add_pairwise_options(parser) -> None:
    """``--pairwise``, ``--judge``, ``--concurrency``, ``--no-cache`` and ``--price`` for ``evalkit compare``."""
    from evalkit.cli.arguments.judge_cost import add_price_option

    parser.add_argument(
        "--pairwise",
        action="store_true",
        help="also judge B against A on every shared prompt, both responses in both orders (win / tie / loss)",
    )
    parser.add_argument(
        "--judge",
        metavar="FILE.prompty|MODEL",
        help="with --pairwise: a custom pairwise .prompty (inputs query, response_a, response_b), or a model name "
        "for evalkit's pairwise prompt (default: evalkit's prompt on the configured judge model)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="with --pairwise: judge calls in flight (default 8)"
    )
    parser.add_argument("--no-cache", action="store_true", help="with --pairwise: do not use the judge cache")
    add_price_option(parser)


def run_pairwise(args):
    """The ``Pairwise`` of ``args.run_a`` and ``args.run_b`` (printed), or None without ``--pairwise``."""
    from evalkit.errors import EvalkitError

    if not args.pairwise:
        if args.judge:
            raise EvalkitError("--judge is for --pairwise: add --pairwise, or leave --judge out")
        return None
    from evalkit.analysis.pairwise.result import pairwise

    result = pairwise(
        args.run_a,
        args.run_b,
        judge=args.judge,
        concurrency=max(1, args.concurrency),
        cache=not args.no_cache,
        price=getattr(args, "price", None),
    )
    print(result.table())
    return result
