"""How the report's sections write values into HTML: every run string escaped and cut, numbers and rates.

The sections (:mod:`.run_facts`, :mod:`.summary`, :mod:`.failing`, :mod:`.comparison`) return HTML strings
that the notebook displays as they are, so whatever comes from a run (prompts, responses, reasons, names) goes
through :func:`esc` here: missing values become "", long texts are cut at :data:`TEXT_LIMIT` (marked with
:data:`ELLIPSIS`), and :func:`html.escape` does the rest. The limits on how much the report lists live here too.
"""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.formatting import percent
from evalkit.analysis.summaries import STATUSES

#: Most failing rows (and regressed / improved rows) listed; the rest are counted.
FAILING_LIMIT = 200
#: Longest prompt / response / reason shown per cell (marked with "…" when cut).
TEXT_LIMIT = 1000
ELLIPSIS = "\u2026"
DASH = "\u2013"


def missing(value: Any) -> bool:
    """True for None, ``<NA>``, ``NaT`` and float NaN: the cell has no value."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def esc(value: Any, limit: int = TEXT_LIMIT) -> str:
    """A value as escaped HTML text: missing → "", cut to ``limit`` characters (marked with …)."""
    if missing(value):
        return ""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[:limit] + ELLIPSIS
    return html.escape(text, quote=True)


def pct(value: float) -> str:
    """A rate as a percentage with one decimal; a dash when it is not a number."""
    return percent(value, missing=DASH)


def num(value: Any) -> str:
    """A score or threshold as display text: booleans as words, integers as they are, floats to 3 digits."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return DASH if not math.isfinite(value) else f"{float(value):.3g}"
    return "" if missing(value) else str(value)


def item_cell(item: Any, turn: Any, thread: Any) -> str:
    """Which row this is: ``#item`` (``· turn n`` in a thread), the thread's name underneath."""
    label = f"#{item}" if missing(turn) else f"#{item} · turn {turn}"
    out = html.escape(label)
    if isinstance(thread, str) and thread:
        out += f"<div class='meta'>{esc(thread, 200)}</div>"
    return out


def status_badge(word: Any) -> str:
    """A row or evaluator status as a coloured badge (an unknown word gets the neutral colour)."""
    text = esc(word, 40)
    css = word if word in STATUSES else "other"
    return f"<span class='badge {css}'>{text}</span>"


def more_note(total: int, shown: int, what: str) -> str:
    """The note under a cut list: how many ``what`` are not shown, and where they all are."""
    if total <= shown:
        return ""
    return f"<p class='meta'>{total - shown:,} more {what} not shown (results.json and results.csv have all).</p>"
