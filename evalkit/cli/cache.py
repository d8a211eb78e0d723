"""``evalkit cache info|clear``: look into the judge cache, or empty it (all of it or one evaluator's part).

Both act on the cache a run would use (``$EVALKIT_CACHE_DIR`` or the user cache folder). Neither creates a
database that does not exist yet, and an unreadable database is reported, never deleted: the user decides.
"""

from __future__ import annotations

import argparse

from evalkit.errors import EvalkitError


def register(subparsers) -> None:
    parser = subparsers.add_parser("cache", help="show or clear the cache of LLM-judge results")
    actions = parser.add_subparsers(dest="cache_action", metavar="ACTION", required=True)
    actions.add_parser("info", help="show where the judge cache is, its size and entries per evaluator")
    clear = actions.add_parser("clear", help="remove cached judge results")
    clear.add_argument(
        "--evaluator",
        metavar="PREFIX",
        help="remove only entries whose evaluator identity starts with PREFIX "
        "(e.g. builtin:Relevance or custom:tone)",
    )
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from evalkit.judges.cache import DEFAULT_FILENAME, cache_dir

    path = cache_dir() / DEFAULT_FILENAME
    if args.cache_action == "info":
        return _info(path)
    if args.cache_action == "clear":
        return _clear(path, args.evaluator)
    raise EvalkitError(f"unknown cache action {args.cache_action!r}: use info or clear")


def _info(path) -> int:
    from evalkit.judges.cache import JudgeCache

    if not path.exists():
        print(f"Path:     {path}")
        print("Entries:  0 (no cache yet)")
        return 0
    with JudgeCache(path) as cache:
        info = cache.info()
    print(f"Path:     {info['path']}")
    if not info["enabled"]:
        print(f"Status:   unusable, runs go on without it ({info['reason']})")
        print(f"          delete {path} to start a new cache")
    print(f"Entries:  {info['entries']:,}")
    print(f"Size:     {human_size(info['size_bytes'])}")
    print(f"Hits:     {info['hits']:,}")
    if info["evaluators"]:
        print("Evaluators:")
        width = max(len(name) for name in info["evaluators"])
        for name, count in info["evaluators"].items():
            print(f"  {name:<{width}}  {count:>9,}")
    return 0


def _clear(path, prefix: str | None) -> int:
    from evalkit.judges.cache import JudgeCache

    scope = f" for evaluators starting with {prefix!r}" if prefix else ""
    if not path.exists():
        print(f"Removed 0 entries{scope} from {path} (no cache yet)")
        return 0
    with JudgeCache(path) as cache:
        removed = cache.clear(prefix)
        if not cache.enabled:
            raise EvalkitError(
                f"cannot clear the judge cache: {cache.reason}; delete {path} to start a new one"
            )
    print(f"Removed {removed:,} {'entry' if removed == 1 else 'entries'}{scope} from {path}")
    return 0


def human_size(size: int) -> str:
    """``1536`` -> ``1.5 KiB``: binary units, one decimal above bytes."""
    if size < 1024:
        return f"{size} B"
    value, unit = size / 1024, "KiB"
    for bigger in ("MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}"
