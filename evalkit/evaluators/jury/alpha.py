"""Krippendorff's alpha: agreement among jurors beyond chance, for any number of jurors and missing ratings.

Why evalkit's own: the well-kept ``krippendorff`` package (PyPI, 0.9.0) installs with the pinned numpy but is
GPL-3.0-or-later, and evalkit is MIT; it is used in the tests only, to check this implementation against it
(``tests/evaluators/test_jury_alpha.py``, besides Krippendorff's own worked example).

``data`` is raters x units (one row per juror, one column per judged row), ``nan`` where a juror gave no
score. Units with fewer than two scores are not pairable and are dropped. With ``n`` pairable values:

    alpha = 1 - D_o / D_e
    D_o = 1/n * sum over units u of 1/(m_u - 1) * sum over ordered pairs i != j in u of delta(v_i, v_j)
    D_e = 1/(n (n - 1)) * sum over ordered pairs i != j of all pairable values of delta(v_i, v_j)

with ``delta`` = (a - b)^2 (``interval``: 1-5 scores) or [a != b] (``nominal``: pass / fail). The pair sums
have closed forms (interval: 2 (m sum v^2 - (sum v)^2); nominal: m^2 - sum of squared counts), so the cost is
linear in the ratings. Undefined (None) when fewer than two values are pairable or every value is the same
(no variation to agree about: D_e = 0).

May import: numpy only.
"""

from __future__ import annotations

import numpy as np

LEVELS = ("interval", "nominal")


def krippendorff_alpha(data, level: str = "interval") -> float | None:
    """Krippendorff's alpha of ``data`` (raters x units, nan = missing) at ``level`` (interval or nominal)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    values = np.asarray(data, dtype=float)
    if values.ndim != 2:
        raise ValueError("data must be raters x units (a 2-D array)")
    present = ~np.isnan(values)
    m = present.sum(axis=0)
    pairable = m >= 2
    values, present, m = values[:, pairable], present[:, pairable], m[pairable]
    n = int(m.sum())
    if n < 2:
        return None
    observed = float((_pair_sums(values, present, level) / (m - 1)).sum()) / n
    everything = values[present][:, None]
    expected = float(_pair_sums(everything, np.ones_like(everything, dtype=bool), level)[0]) / (n * (n - 1))
    if expected == 0:
        return None
    return 1.0 - observed / expected


def _pair_sums(values: np.ndarray, present: np.ndarray, level: str) -> np.ndarray:
    """Per column, the sum of delta over ordered pairs of its present values."""
    count = present.sum(axis=0).astype(float)
    if level == "interval":
        filled = np.where(present, values, 0.0)
        return 2.0 * (count * (filled**2).sum(axis=0) - filled.sum(axis=0) ** 2)
    squares = np.zeros(values.shape[1])
    for value in np.unique(values[present]):
        squares += ((values == value) & present).sum(axis=0).astype(float) ** 2
    return count**2 - squares
