"""Paired statistics of two runs, and the resampling defaults every bootstrap in evalkit shares.

- :func:`mcnemar_p`: the exact McNemar test on the discordant pass/fail pairs (pass → fail *b*, fail → pass *c*).
- :func:`paired_bootstrap`: percentile intervals of several per-row differences, resampled jointly (A and B
  always move together), vectorised as a count matrix times the differences.
- :data:`DEFAULT_SEED`, :data:`DEFAULT_RESAMPLES`, :data:`DEFAULT_CONFIDENCE`: the seed, resample count and
  interval level of :func:`evalkit.compare` and :func:`evalkit.calibrate` (the same seed gives the same draws).

Plain numpy, no scipy: the binomial tail is summed in log space.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["DEFAULT_CONFIDENCE", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "mcnemar_p", "paired_bootstrap"]

DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
#: Most cells of one resampling count matrix (resamples x rows) held in memory at once (8 bytes each).
BOOTSTRAP_CELLS = 4_000_000


def mcnemar_p(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value for ``b`` pass→fail and ``c`` fail→pass discordant pairs.

    ``min(1, 2 * P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``; 1.0 when there is no discordant pair.
    The binomial tail is summed in log space (``log C(n, k)`` by the recurrence ``log C(n, k-1) + log(n-k+1) -
    log k``), so it neither overflows nor needs scipy for any ``n``.
    """
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    k = np.arange(1, min(b, c) + 1, dtype=float)
    log_comb = np.concatenate(([0.0], np.cumsum(np.log(n - k + 1) - np.log(k))))
    log_terms = log_comb - n * math.log(2.0)
    top = float(log_terms.max())
    tail = math.exp(top) * float(np.exp(log_terms - top).sum())
    return min(1.0, 2.0 * tail)


def paired_bootstrap(
    values: np.ndarray,
    masks: np.ndarray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of the masked means of several per-row differences, resampled jointly.

    ``values`` and ``masks`` are ``(rows, statistics)``: column ``s`` is a per-row difference (B - A) and where it
    applies. Every resample draws ``rows`` row indices with replacement (the same draw for all statistics) and
    each statistic becomes ``sum(count * value * mask) / sum(count * mask)`` over the draw, i.e. the mean
    difference over the drawn rows that qualify. Returns ``(low, high)`` arrays of length ``statistics``: the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (NaN for a statistic no row qualifies for).

    The draws come from ``numpy.random.default_rng(seed)`` in chunks of resamples; numpy's generator yields the
    same stream however it is chunked, so the result depends on the seed and the data only (up to the last-bit
    rounding of the matrix products, which BLAS may sum in another order for another chunk shape).
    """
    values = np.asarray(values, dtype=float)
    masks = np.asarray(masks, dtype=bool)
    if values.ndim == 1:
        values, masks = values[:, None], masks[:, None]
    rows, stats = values.shape
    low = np.full(stats, np.nan)
    high = np.full(stats, np.nan)
    if rows == 0 or stats == 0 or resamples <= 0:
        return low, high
    weights = masks.astype(float)
    numerators = np.where(masks, values, 0.0)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, BOOTSTRAP_CELLS // rows))
    out = np.empty((resamples, stats))
    offsets = None
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        draws = rng.integers(0, rows, size=(size, rows))
        if offsets is None or len(offsets) != size:
            offsets = (np.arange(size) * rows)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=size * rows).reshape(size, rows)
        counts = counts.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + size] = (counts @ numerators) / (counts @ weights)
    tail = (1.0 - confidence) / 2.0 * 100.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: no qualifying row
        low, high = np.nanpercentile(out, [tail, 100.0 - tail], axis=0)
    return low, high
