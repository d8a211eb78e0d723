"""Waiting for batches: polling their state with a progress bar, until each one is final.

The bar counts the lines the service reports done (``request_counts.completed + failed``) over the lines of
the batches waited for, and its label is the batches' state (``batch_abc123: in_progress``, or
``3 batches: 2 in_progress, 1 completed``). Polls start every ``first`` seconds and slow down by half again
each time up to ``longest`` (30 s): a batch of minutes costs a few dozen polls, one of hours a few hundred.

May import: ``evalkit.judges.batch.api``.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from evalkit.judges.batch.api import FINAL


def wait_for(api, batch_ids: list[str], *, progress: bool | None, first: float = 0.2, longest: float = 30.0):
    """``{batch id: final batch object, or None when the service does not know it}``."""
    done: dict[str, object] = {}
    states: dict[str, object] = {}
    bar = _bar(progress)
    interval = first
    try:
        while True:
            for batch_id in batch_ids:
                if batch_id in done:
                    continue
                batch = api.retrieve(batch_id)
                states[batch_id] = batch
                if batch is None or batch.status in FINAL:
                    done[batch_id] = batch
            _show(bar, states)
            if len(done) == len(batch_ids):
                return done
            time.sleep(interval)
            interval = min(longest, interval * 1.5)
    finally:
        if bar is not None:
            bar.close()


def _bar(progress: bool | None):
    if progress is False:
        return None
    from tqdm.auto import tqdm

    return tqdm(
        total=0, desc="batch", unit="line", delay=0 if progress else 1.0, leave=False, file=sys.stderr
    )


def label(states: dict) -> str:
    """``batch_abc: in_progress`` for one batch, ``3 batches: 2 in_progress, 1 completed`` for more."""
    known = {k: v for k, v in states.items() if v is not None}
    if len(states) == 1 and known:
        ((batch_id, batch),) = known.items()
        return f"{batch_id}: {batch.status}"
    counts = Counter(b.status if b is not None else "unknown" for b in states.values())
    return f"{len(states)} batches: " + ", ".join(f"{n} {state}" for state, n in counts.most_common())


def _show(bar, states: dict) -> None:
    if bar is None:
        return
    total = done = 0
    for batch in states.values():
        counts = getattr(batch, "request_counts", None)
        if counts is not None:
            total += counts.total or 0
            done += (counts.completed or 0) + (counts.failed or 0)
    bar.total = total
    bar.n = min(done, total)
    bar.set_description(label(states), refresh=False)
    bar.refresh()
