"""Reading an online evaluation store: its results as a frame, its status, and a pass-rate chart.

These serve notebooks (``online_frame``, ``pass_rate_over_time``) and ``evalkit spans status`` (``status``).
They open the store read-only, so they can run while ``evalkit spans serve`` is writing to it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError
from evalkit.spans.online.store import Store

if TYPE_CHECKING:
    import pandas as pd

FRAME_COLUMNS = (
    "sequence",
    "timestamp",
    "session_id",
    "evaluator",
    "trace_id",
    "span_id",
    "label",
    "value",
    "explanation",
    "error_code",
    "passed",
    "service",
)


def online_frame(store: str | os.PathLike) -> pd.DataFrame:
    """The results of an online evaluation store folder, one row per result (``FRAME_COLUMNS``)."""
    import pandas as pd

    try:
        db = Store(store, readonly=True)
    except FileNotFoundError:
        raise EvalkitError(f"{store}: no online evaluation store here (store.sqlite3 is missing)") from None
    try:
        rows = db.results_rows()
    except sqlite3.DatabaseError as exc:  # damage past the header shows only when the pages are read
        raise db.unreadable(exc) from None
    finally:
        db.close()
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    frame["timestamp"] = pd.to_datetime(frame["timestamp"].astype("float64"), unit="s", utc=True)
    frame["passed"] = frame["passed"].astype(bool)
    frame["value"] = pd.to_numeric(frame["value"])
    return frame


def status(store: str | os.PathLike, now: float | None = None) -> dict:
    """Sessions per state, stored spans and event records, and per-evaluator ``(passed, total)`` over the last
    hour and day."""
    try:
        db = Store(store, readonly=True)
    except FileNotFoundError:
        raise EvalkitError(f"{store}: no online evaluation store here (store.sqlite3 is missing)") from None
    now = time.time() if now is None else now
    try:
        return {
            "counts": db.counts(),
            "hour": db.pass_rates(now - 3600),
            "day": db.pass_rates(now - 86400),
        }
    except sqlite3.DatabaseError as exc:  # damage past the header shows only when the pages are read
        raise db.unreadable(exc) from None
    finally:
        db.close()


def pass_rate_over_time(frame: pd.DataFrame, freq: str = "5min"):
    """A plotly figure: each evaluator's pass rate per ``freq`` interval, from ``online_frame``."""
    import plotly.graph_objects as go

    figure = go.Figure()
    if len(frame):
        bins = frame.set_index("timestamp").groupby("evaluator")["passed"].resample(freq).mean().dropna()
        for name in bins.index.get_level_values(0).unique():
            series = bins.loc[name]
            figure.add_trace(go.Scatter(x=series.index, y=series.values, mode="lines+markers", name=name))
    figure.update_layout(
        title="Online evaluation pass rate",
        xaxis_title="time",
        yaxis_title="pass rate",
        yaxis_range=[0, 1.05],
    )
    return figure
