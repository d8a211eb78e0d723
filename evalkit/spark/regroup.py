"""Batches re-cut at item boundaries, so that the turns of a thread always reach one call together, in order.

Spark hands a partition to Python in Arrow batches of a fixed row count, which can end in the middle of a
thread. Both the executors (scoring) and the driver (writing results.json, where a thread's turns are gathered
under it with a summary) read sorted rows through :func:`whole_items`, which holds back the trailing rows of an
item until the next batch shows that the item is complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd


def whole_items(frames: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """The rows of ``frames`` (sorted so that the rows of one item are adjacent) in frames that never split an
    item: the rows of the last item of a frame wait for the next frame when that item is a thread.

    Single-turn items are one row each, so a frame ending in one is passed on whole. Frames keep their order
    and rows; only the cuts move. Indexes are reset.
    """
    held: pd.DataFrame | None = None
    for frame in frames:
        if held is not None and len(held):
            frame = pd.concat([held, frame], ignore_index=True)
        else:
            frame = frame.reset_index(drop=True)
        held = None
        if not len(frame):
            continue
        turn = frame["turn"].iat[-1] if "turn" in frame.columns else None
        if turn is None or turn is pd.NA or (isinstance(turn, float) and np.isnan(turn)):
            yield frame
            continue
        items = frame["item"].to_numpy()
        others = np.flatnonzero(items != items[-1])
        cut = int(others[-1]) + 1 if len(others) else 0
        held = frame.iloc[cut:]
        if cut:
            yield frame.iloc[:cut]
    if held is not None and len(held):
        yield held.reset_index(drop=True)
