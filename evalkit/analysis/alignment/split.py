"""The seeded split of labelled rows into an optimisation set and a held-out set.

The unit is the item: every turn of a multi-turn item lands on the same side, so no conversation is half seen.
Items are shuffled by ``numpy.random.default_rng(seed)`` and the first ``round(holdout * items)`` are held out
(at least one item on each side). The same labels, seed and share give the same split on every machine.

May import: numpy and ``evalkit.errors``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.errors import EvalkitError

__all__ = ["MIN_ITEMS", "Split", "split_items"]

#: Fewest labelled items an alignment accepts (two on each side).
MIN_ITEMS = 4


@dataclass(frozen=True)
class Split:
    """Which items optimise the prompt (``optimise``) and which only measure it (``held_out``), sorted."""

    optimise: tuple[int, ...]
    held_out: tuple[int, ...]
    seed: int
    holdout: float


def split_items(items, *, holdout: float = 0.5, seed: int = 0) -> Split:
    """Split the labelled ``items`` (module docs); fewer than :data:`MIN_ITEMS` is an :class:`EvalkitError`."""
    if not 0 < holdout < 1:
        raise EvalkitError(f"holdout must be a share between 0 and 1 (e.g. 0.5), not {holdout!r}")
    unique = sorted({int(i) for i in items})
    if len(unique) < MIN_ITEMS:
        raise EvalkitError(
            f"{len(unique)} labelled item(s) for this judge: alignment needs at least {MIN_ITEMS} (some to optimise "
            "on, some held out to measure it); label more rows (30 or more give intervals worth reading)"
        )
    order = np.random.default_rng(seed).permutation(len(unique))
    n_held = min(max(int(round(holdout * len(unique))), 1), len(unique) - 1)
    held = sorted(unique[i] for i in order[:n_held])
    optimise = sorted(unique[i] for i in order[n_held:])
    return Split(tuple(optimise), tuple(held), seed, holdout)
