"""Agreement statistics of paired judge and human values, and their bootstrap intervals.

    from evalkit.analysis.agreement import agreement_metrics, bootstrap_metrics
    agreement_metrics([5, 4, 2], [5, 3, 2])              # {"n": 3, "exact": ..., "kappa": ..., ...}
    bootstrap_metrics([5, 4, 2], [5, 3, 2], seed=0)      # {"kappa": (low, high), ...}

:func:`evalkit.calibrate` computes these per judge; here they take plain numbers (1-5 scores, or verdicts coded
pass = 1, fail = 0), so they can be checked against a hand computation.

**Metrics** over the ``n`` pairs ``(j_i, h_i)`` (judge, human), the columns of :attr:`Calibration.table`:

* ``exact``: share of pairs with ``j == h``.
* ``within_one``: share with ``|j - h| <= 1`` (scores only; NaN for verdicts).
* ``kappa``: Cohen's kappa, ``1 - D_o / D_e``. For scores it is quadratic-weighted: ``D_o = mean((j - h)^2)``
  is the observed squared disagreement and ``D_e = var(j) + var(h) + (mean(j) - mean(h))^2`` (population
  variances) the squared disagreement expected if judge and human were independent with the same marginals.
  This is algebraically the textbook ``1 - sum(w * O) / sum(w * E)`` with weights ``(a - b)^2 / (k - 1)^2``
  over the fixed 1-5 scale (the ``(k - 1)^2`` cancels), i.e. :func:`evalkit.reporting.charts.agreement`. For verdicts
  coded 0/1 the same formula is exactly the unweighted kappa ``(p_o - p_e) / (1 - p_e)`` (squared 0/1
  differences are the unweighted disagreement weights); ``kappa_kind`` says which. NaN when both raters give
  one and the same value throughout (``D_e = 0``).
* ``spearman``: Pearson correlation of the ranks, ties given the average of the ranks they span (what
  ``scipy.stats.spearmanr`` computes). NaN when either side is constant.
* ``bias``: ``mean(j - h)``: positive when the judge is more lenient than the humans (for verdicts: judge pass
  rate minus human pass rate).
* ``<metric>_low`` / ``<metric>_high``: percentile bootstrap interval (95 % by default). Each of ``resamples``
  (2,000) resamples draws the ``n`` pairs with replacement and recomputes every metric on the draw; the
  interval is the 2.5th and 97.5th percentiles over the resamples where the metric is defined. Seeded
  (``seed=0``) with the same draws as :func:`evalkit.analysis.statistics.paired_bootstrap`, so the same inputs give the
  same intervals. Vectorised: each resample is a vector of counts over the pairs, every metric a weighted
  statistic (the ranks of a resample are weighted mid-ranks), computed for a chunk of resamples at once.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from evalkit.analysis.statistics import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED

__all__ = ["METRICS", "agreement_metrics", "bootstrap_metrics", "paired_difference", "rank_average"]

#: The agreement metrics, in the order of :attr:`Calibration.table` (each followed by ``_low`` / ``_high``).
METRICS = ("exact", "within_one", "kappa", "spearman", "bias")
#: Most cells of one (resamples x pairs) array in a bootstrap chunk; a chunk holds about ten such arrays.
CALIBRATION_CELLS = 500_000


def rank_average(values: Any) -> np.ndarray:
    """Ranks 1..n of ``values``; tied values share the average of the ranks they span (1, 2.5, 2.5, 4)."""
    x = np.asarray(values, dtype=float)
    if not np.isfinite(x).all():
        raise ValueError("rank_average needs finite values")
    _, codes, counts = np.unique(x, return_inverse=True, return_counts=True)
    below = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return (below + (counts + 1) / 2.0)[codes.reshape(-1)]


def _mid_ranks(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mid-ranks of ``values`` under each row of ``weights`` (resamples x pairs), and constancy flags.

    A pair drawn ``c`` times counts ``c`` times: its rank is the weight of the smaller values plus half the
    weight of its own value, i.e. the average rank minus 1/2 (a shift that no correlation sees). ``constant``
    is True for the resamples where one value holds all the weight.
    """
    uniques, codes = np.unique(values, return_inverse=True)
    codes = codes.reshape(-1)
    m = len(uniques)
    size = weights.shape[0]
    offsets = (np.arange(size) * m)[:, None]
    grouped = np.bincount(
        (codes[None, :] + offsets).ravel(), weights=weights.ravel(), minlength=size * m
    ).reshape(size, m)
    mid = np.cumsum(grouped, axis=1) - grouped / 2.0
    return mid[:, codes], grouped.max(axis=1) >= weights.sum(axis=1)


def _weighted_metrics(judge: np.ndarray, human: np.ndarray, weights: np.ndarray, scale: bool) -> np.ndarray:
    """The :data:`METRICS` of the pairs under each row of ``weights`` (counts per pair): ``(rows, 5)``."""
    total = weights.sum(axis=1)
    out = np.full((weights.shape[0], len(METRICS)), np.nan)
    ok = total > 0
    if not ok.any():
        return out
    w, total = weights[ok], total[ok]
    diff = judge - human
    with np.errstate(invalid="ignore", divide="ignore"):
        exact = w @ (diff == 0).astype(float) / total
        within = w @ (np.abs(diff) <= 1).astype(float) / total if scale else np.full(len(total), np.nan)
        bias = w @ diff / total
        mean_j, mean_h = w @ judge / total, w @ human / total
        var_j = (w * (judge[None, :] - mean_j[:, None]) ** 2).sum(axis=1) / total
        var_h = (w * (human[None, :] - mean_h[:, None]) ** 2).sum(axis=1) / total
        observed = w @ diff**2 / total
        expected = var_j + var_h + (mean_j - mean_h) ** 2
        rank_j, flat_j = _mid_ranks(judge, w)
        rank_h, flat_h = _mid_ranks(human, w)
        # Both raters constant and equal: no disagreement is possible, kappa is undefined.
        kappa = np.where(flat_j & flat_h & (mean_j == mean_h), np.nan, 1.0 - observed / expected)
        rj = rank_j - ((w * rank_j).sum(axis=1) / total)[:, None]
        rh = rank_h - ((w * rank_h).sum(axis=1) / total)[:, None]
        cov = (w * rj * rh).sum(axis=1)
        spread = np.sqrt((w * rj * rj).sum(axis=1) * (w * rh * rh).sum(axis=1))
        spearman = np.where(flat_j | flat_h, np.nan, cov / spread)
    out[ok] = np.column_stack([exact, within, np.clip(kappa, -1.0, 1.0), np.clip(spearman, -1.0, 1.0), bias])
    return out


def _as_pairs(judge: Any, human: Any) -> tuple[np.ndarray, np.ndarray]:
    j = np.asarray(judge, dtype=float).reshape(-1)
    h = np.asarray(human, dtype=float).reshape(-1)
    if len(j) != len(h):
        raise ValueError(f"{len(j)} judge values but {len(h)} human values: give one of each per pair")
    if not (np.isfinite(j).all() and np.isfinite(h).all()):
        raise ValueError("judge and human values must be finite numbers (drop unpaired rows first)")
    return j, h


def agreement_metrics(judge: Any, human: Any, *, scale: bool = True) -> dict[str, float]:
    """Exact, within-one, kappa, Spearman and bias of paired numeric values (see the module docstring).

    ``scale=True``: 1-5 scores, quadratic-weighted kappa and ``within_one``. ``scale=False``: verdicts coded
    pass = 1, fail = 0, unweighted kappa and no ``within_one``. Also returns ``n``.
    """
    j, h = _as_pairs(judge, human)
    values = _weighted_metrics(j, h, np.ones((1, len(j))), scale)[0]
    return {"n": len(j), **{name: float(v) for name, v in zip(METRICS, values)}}


def bootstrap_metrics(
    judge: Any,
    human: Any,
    *,
    scale: bool = True,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals of :func:`agreement_metrics`: ``{metric: (low, high)}``.

    Resamples draw the pairs with replacement from ``numpy.random.default_rng(seed)``, ``pairs`` indices per
    resample, in chunks (the generator yields the same stream however it is chunked). Resamples where a
    metric is undefined (e.g. kappa when both sides are constant) are left out of that metric's interval.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    j, h = _as_pairs(judge, human)
    n = len(j)
    nan = (math.nan, math.nan)
    if n == 0 or resamples <= 0:
        return {name: nan for name in METRICS}
    out = _resampled(n, resamples, seed, lambda counts: _weighted_metrics(j, h, counts, scale))
    low, high = _percentile_interval(out, confidence)
    return {name: (float(lo), float(hi)) for name, lo, hi in zip(METRICS, low, high)}


def _resampled(n: int, resamples: int, seed: int, metrics) -> np.ndarray:
    """``metrics(counts)`` over ``resamples`` bootstrap draws of ``n`` pairs: one row of metrics per resample.

    ``counts`` holds how often each pair was drawn, one row per resample of a chunk; the draws come from
    ``numpy.random.default_rng(seed)`` in chunks (the generator yields the same stream however it is chunked).
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, CALIBRATION_CELLS // n))
    out = np.empty((resamples, len(METRICS)))
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        draws = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * n)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=size * n).reshape(size, n)
        out[start : start + size] = metrics(counts.astype(float))
    return out


def _percentile_interval(out: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the percentile interval of the resamples where the metric is defined."""
    tail = (1.0 - confidence) / 2.0 * 100.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a metric undefined in every resample
        low, high = np.nanpercentile(out, [tail, 100.0 - tail], axis=0)
    return low, high


def paired_difference(
    before: Any,
    after: Any,
    human: Any,
    *,
    scale: bool = True,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, tuple[float, float, float]]:
    """``{metric: (after - before, low, high)}``: how two judges' agreement with the same human values differs.

    ``before`` and ``after`` are two judges' values on the same pairs (in the same order as ``human``). Each
    resample draws the pairs once (``default_rng(seed)``, as :func:`bootstrap_metrics`) and recomputes both
    judges' metrics on that one draw, so the interval is of the paired difference: an improvement is shown only
    when it holds on the same rows. Resamples where a metric is undefined for either judge are left out.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    b, h = _as_pairs(before, human)
    a, _ = _as_pairs(after, human)
    n = len(h)
    point = (
        _weighted_metrics(a, h, np.ones((1, n)), scale)[0]
        - _weighted_metrics(b, h, np.ones((1, n)), scale)[0]
    )
    if n == 0 or resamples <= 0:
        return {name: (float(p), math.nan, math.nan) for name, p in zip(METRICS, point)}
    out = _resampled(
        n,
        resamples,
        seed,
        lambda counts: _weighted_metrics(a, h, counts, scale) - _weighted_metrics(b, h, counts, scale),
    )
    low, high = _percentile_interval(out, confidence)
    return {name: (float(p), float(lo), float(hi)) for name, p, lo, hi in zip(METRICS, point, low, high)}
