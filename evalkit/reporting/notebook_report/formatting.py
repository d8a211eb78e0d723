"""Values for the report's sections: missing cells, numbers as text, and the limits on how much is listed.

The sections (:mod:`.run_facts`, :mod:`.summary`, :mod:`.failing`, :mod:`.comparison`) render Jinja2 templates
with autoescaping (:mod:`evalkit.reporting.fragments`), which escape and cut every run string; what is left here
is plain data formatting.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

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


def num(value: Any) -> str:
    """A score or threshold as display text: booleans as words, integers as they are, floats to 3 digits."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return DASH if not math.isfinite(value) else f"{float(value):.3g}"
    return "" if missing(value) else str(value)
