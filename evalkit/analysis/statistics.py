"""Paired statistics of two runs, and the resampling defaults every bootstrap in evalkit shares.

- :func:`mcnemar_p`: the exact McNemar test on the discordant pass/fail pairs (pass → fail *b*, fail → pass *c*).
- :func:`mcnemar_interval`: the interval of the paired pass-rate delta that agrees with :func:`mcnemar_p` (it
  excludes 0 exactly when p < 1 - confidence), from the exact (Clopper-Pearson) interval of the discordant split.
- :data:`MIN_PAIRS`: fewer judged pairs than this and no change is called significant, whatever the numbers.
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

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "MIN_PAIRS",
    "binomial_interval",
    "mcnemar_interval",
    "mcnemar_p",
    "paired_bootstrap",
]

DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
#: Fewest paired rows (judged, resp. scored in both runs) for a change to be called significant (and coloured).
#: With fewer, even an exact test has next to no power and a delta of +100 % can be one row.
MIN_PAIRS = 10
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


def _upper_tails(n: int):
    """``tail(k, p) = P(X >= k)`` for X ~ Binomial(n, p), summed in log space over precomputed log C(n, j)."""
    j = np.arange(n + 1, dtype=float)
    steps = np.log(n - j[1:] + 1) - np.log(j[1:])
    log_comb = np.concatenate(([0.0], np.cumsum(steps)))

    def tail(k: int, p: float) -> float:
        if k <= 0 or p >= 1.0:
            return 1.0
        if k > n or p <= 0.0:
            return 0.0
        terms = log_comb[k:] + j[k:] * math.log(p) + (n - j[k:]) * math.log1p(-p)
        top = float(terms.max())
        return min(1.0, math.exp(top) * float(np.exp(terms - top).sum()))

    return tail


def binomial_interval(k: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of a binomial proportion: ``k`` successes out of ``n``.

    The lower end solves ``P(X >= k | p) = alpha / 2`` and the upper ``P(X <= k | p) = alpha / 2`` (bisection on
    tails summed in log space, no scipy); ``(nan, nan)`` for ``n == 0``. The interval inverts the two one-sided
    exact tests, so it excludes ``p0`` exactly when the doubled-tail exact test of ``p0`` rejects at
    ``1 - confidence``.
    """
    k, n = int(k), int(n)
    if n <= 0:
        return math.nan, math.nan
    half = (1.0 - confidence) / 2.0
    tail = _upper_tails(n)

    def solve(at_least: int, target: float) -> float:
        # P(X >= at_least | p) increases with p: bisect for the p where it equals target
        lo, hi = 0.0, 1.0
        for _ in range(55):
            mid = (lo + hi) / 2
            if tail(at_least, mid) < target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(k, half)
    # P(X <= k | p) = half  <=>  P(X >= k + 1 | p) = 1 - half
    high = 1.0 if k == n else solve(k + 1, 1.0 - half)
    return low, high


def mcnemar_interval(
    b: int, c: int, judged: int, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """Interval of the paired pass-rate delta ``(c - b) / judged`` that agrees with :func:`mcnemar_p`.

    Given ``d = b + c`` discordant pairs, ``c`` (fail → pass) is Binomial(d, pi) and McNemar tests pi = 1/2.
    With ``[pi_low, pi_high]`` the exact interval of pi (:func:`binomial_interval`), the delta's interval is
    ``d * (2 * pi - 1) / judged`` at both ends: it excludes 0 exactly when McNemar's p < ``1 - confidence``, so
    the interval and the test never disagree (a bootstrap interval can: with one changed pair out of one it is
    [+100 %, +100 %] while p = 1). ``(0, 0)`` without discordant pairs, ``(nan, nan)`` without judged pairs.
    """
    b, c, judged = int(b), int(c), int(judged)
    if judged <= 0:
        return math.nan, math.nan
    d = b + c
    if d == 0:
        return 0.0, 0.0
    low, high = binomial_interval(c, d, confidence)
    return d * (2 * low - 1) / judged, d * (2 * high - 1) / judged


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
