"""How far can an LLM judge be trusted? Agreement with human labels, and the judge's own noise.

    from evalkit.analysis.calibration import calibrate, judge_noise
    cal = calibrate(scored, "Relevance", "data/demo.labels.json")     # or Labels, or a DataFrame of labels
    cal                                                               # renders in a notebook
    cal.table                                                         # one row per judge: metrics + intervals
    cal.disagreements                                                 # worst disagreements first
    cal.heatmap()                                                     # judge x human confusion matrix
    calibrate(scored, ["Relevance", "relevance_v2"], labels)          # two judges on the same labels
    judge_noise([run_0, run_1, run_2])                                # k samples of the same judge

**Pairing.** A judge's result on a row and a human label are paired by the row's position, (``item``, ``turn``).
The human labels used for judge ``J`` are those whose ``evaluator`` is ``J``'s name or key, or every label when
the labels name a single evaluator (so a new judge version is calibrated on the labels made for the old one), or
those of ``evaluator=`` when given. Labels without a usable judge result (row not asked, judge error, item not in
the table) are skipped: ``labels`` counts the human labels considered, ``n`` the pairs.

**What is compared** (``on``, per judge): ``"score"`` compares the judge's numeric score with the human 1-5
``score``; ``"verdict"`` compares the judge's ``pass`` / ``fail`` result with the human ``verdict``, coded pass = 1,
fail = 0. By default a judge is compared on scores when the labels have scores and the judge has numeric
(non-boolean) scores, and on verdicts otherwise.

**Metrics** over the ``n`` pairs ``(j_i, h_i)`` (judge, human), columns of :attr:`Calibration.table`:

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
  (``seed=0``) with the same draws as :func:`evalkit.analysis.comparison.paired_bootstrap`, so the same inputs give the
  same intervals. Vectorised: each resample is a vector of counts over the pairs, every metric a weighted
  statistic (the ranks of a resample are weighted mid-ranks), computed for a chunk of resamples at once.

**Judge noise** (:func:`judge_noise`): ``k`` scored tables of the same document (``k`` samples of the same judge),
aligned by (``item``, ``turn``). Per row and evaluator: the ``k`` scores and results, ``spread`` (max - min of the
scores), ``std`` (sample standard deviation, ``ddof=1``; both need two finite scores), ``flip`` (both ``pass``
and ``fail`` among the results), ``pass_all`` (every sample passed) and ``pass_any`` (some sample passed). Per
evaluator: ``mean_spread`` and ``mean_std`` over the rows where they are defined, and over the *complete* rows
(every sample ``pass`` or ``fail``; errored samples say nothing about the answer, as in :func:`evalkit.summary`)
``flip_rate``, ``pass_rate`` (mean single-sample pass rate), ``pass_hat_k`` (pass^k: share of rows that passed
in all ``k`` samples) and ``pass_at_k`` (pass@k: passed in at least one). ``pass_hat_k <= pass_rate <=
pass_at_k``; the gap between them is the judge's (or the agent's) inconsistency.
"""

from __future__ import annotations

import html
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalkit.analysis.comparison import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, _texts
from evalkit.analysis.labels import Labels, labels_frame
from evalkit.analysis.summaries import numeric_scores, scored_evaluators
from evalkit.documents.columns import score_column
from evalkit.errors import EvalkitError

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

__all__ = [
    "Calibration",
    "JudgeNoise",
    "agreement_metrics",
    "bootstrap_metrics",
    "calibrate",
    "judge_noise",
    "rank_average",
]

#: The agreement metrics, in the order of :attr:`Calibration.table` (each followed by ``_low`` / ``_high``).
METRICS = ("exact", "within_one", "kappa", "spearman", "bias")
#: Most cells of one (resamples x pairs) array in a bootstrap chunk; a chunk holds about ten such arrays.
CALIBRATION_CELLS = 500_000
PAIR_COLUMNS = (
    "judge",
    "key",
    "on",
    "item",
    "turn",
    "thread",
    "judge_value",
    "human_value",
    "difference",
    "judge_result",
    "judge_reason",
    "human_note",
    "labeller",
    "prompt",
    "response",
)
NOISE_ROW_COLUMNS = (
    "judge",
    "key",
    "item",
    "turn",
    "prompt",
    "scores",
    "results",
    "samples",
    "spread",
    "std",
    "passes",
    "fails",
    "errors",
    "flip",
    "complete",
    "pass_all",
    "pass_any",
)
NOISE_COLUMNS = (
    "key",
    "samples",
    "rows",
    "complete",
    "mean_spread",
    "max_spread",
    "mean_std",
    "flips",
    "flip_rate",
    "pass_rate",
    "pass_hat_k",
    "pass_at_k",
)
TEXT_LIMIT = 600
DASH = "\u2013"


# ------------------------------------------------------------------------------------------------ statistics


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
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, CALIBRATION_CELLS // n))
    out = np.empty((resamples, len(METRICS)))
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        draws = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * n)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=size * n).reshape(size, n)
        out[start : start + size] = _weighted_metrics(j, h, counts.astype(float), scale)
    tail = (1.0 - confidence) / 2.0 * 100.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a metric undefined in every resample
        low, high = np.nanpercentile(out, [tail, 100.0 - tail], axis=0)
    return {name: (float(lo), float(hi)) for name, lo, hi in zip(METRICS, low, high)}


# ------------------------------------------------------------------------------------------------ tables


def _row_keys(df: pd.DataFrame, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``item`` and ``turn`` (-1 for single-turn rows) as int arrays; each (item, turn) must appear once."""
    if "item" not in df.columns:
        raise EvalkitError(f"{what} has no 'item' column: give a scored case table (evalkit.evaluate)")
    item = pd.to_numeric(df["item"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if not np.isfinite(item).all():
        raise EvalkitError(f"{what} has rows without an item position")
    item = item.astype(np.int64)
    if "turn" in df.columns:
        turn = pd.to_numeric(df["turn"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        turn = np.where(np.isnan(turn), -1, turn).astype(np.int64)
    else:
        turn = np.full(len(df), -1, dtype=np.int64)
    seen = pd.MultiIndex.from_arrays([item, turn])
    if seen.has_duplicates:
        first = int(np.flatnonzero(seen.duplicated())[0])
        where = f"item {item[first]}" + ("" if turn[first] < 0 else f", turn {turn[first]}")
        raise EvalkitError(f"{what} has more than one row for {where}: rows are matched by (item, turn)")
    return item, turn


def _turns(turn: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.array([None if t < 0 else int(t) for t in turn.tolist()], dtype="Int64")


def _find(df: pd.DataFrame, judge: str, what: str) -> dict[str, Any]:
    scored = [ev for ev in scored_evaluators(df) if f"{ev['key']}_result" in df.columns]
    for ev in scored:
        if judge in (ev["key"], ev.get("name")):
            return ev
    names = ", ".join(str(ev.get("name", ev["key"])) for ev in scored) or "none"
    raise EvalkitError(f"no evaluator {judge!r} is scored in {what} (scored: {names})")


def _is_boolean(series: pd.Series) -> bool:
    if series.dtype == bool:
        return True
    present = series.dropna()
    return len(present) > 0 and all(isinstance(v, (bool, np.bool_)) for v in present.tolist())


# ------------------------------------------------------------------------------------------------ calibration


@dataclass
class Calibration:
    """Agreement of one or more judges with human labels. Build it with :func:`calibrate`.

    ``table``: one row per judge (index: its name, or ``"run: name"`` for several runs), columns ``key``,
    ``on``, ``kappa_kind``, ``labels``, ``n`` and each of :data:`METRICS` with ``_low`` / ``_high``.
    ``pairs``: every judged pair, columns :data:`PAIR_COLUMNS` (``difference`` = judge - human; verdicts coded
    pass = 1). ``disagreements``: the pairs that differ, largest ``|difference|`` first.
    """

    table: pd.DataFrame
    pairs: pd.DataFrame
    disagreements: pd.DataFrame
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE

    def __repr__(self) -> str:
        parts = [
            f"{name}: n={int(r['n'])}, exact={_fmt(r['exact'])}, kappa={_fmt(r['kappa'])}"
            for name, r in self.table.iterrows()
        ]
        return f"<Calibration {'; '.join(parts) or 'no judge'}; {len(self.disagreements)} disagreements>"

    def _judge_row(self, judge: str | None) -> str:
        if not len(self.table):
            raise EvalkitError("this calibration has no judge")
        if judge is None:
            return str(self.table.index[0])
        for name, row in self.table.iterrows():
            if judge in (name, row["key"], name.split(": ", 1)[-1]):
                return str(name)
        raise EvalkitError(f"no judge {judge!r} in this calibration (judges: {', '.join(self.table.index)})")

    def heatmap(self, judge: str | None = None) -> go.Figure:
        """Confusion matrix of the judge (columns) against the humans (rows), via :func:`charts.agreement_heatmap`.

        ``judge`` picks a row of :attr:`table` (its name or key; default: the first). Needs judge scores on the
        1-5 scale (or verdicts): another scale has no square matrix.
        """
        from evalkit.reporting.charts import agreement_heatmap, plain

        name = self._judge_row(judge)
        rows = self.pairs[self.pairs["judge"] == name]
        try:
            figure = agreement_heatmap(rows["judge_value"].tolist(), rows["human_value"].tolist())
        except ValueError as exc:
            raise EvalkitError(f"cannot draw the agreement heatmap of {name!r}: {exc}") from None
        figure.update_layout(title={"text": f"{plain(name)}: {figure.layout.title.text}"})
        return figure

    def _repr_html_(self) -> str:
        """Notebook view: the metrics with their intervals and the worst disagreements (all text escaped)."""
        return _calibration_html(self, max_rows=10)


def _labels_for(frame: pd.DataFrame, ev: dict[str, Any], evaluator: str | None) -> pd.DataFrame:
    names = list(dict.fromkeys(frame["evaluator"].tolist()))
    if evaluator is not None:
        chosen = frame[frame["evaluator"] == evaluator]
        if chosen.empty:
            raise EvalkitError(
                f"no human labels for evaluator {evaluator!r} (labels exist for: {', '.join(names)})"
            )
        return chosen
    if len(names) == 1:
        return frame
    chosen = frame[frame["evaluator"].isin([ev["key"], ev.get("name", ev["key"])])]
    if chosen.empty:
        raise EvalkitError(
            f"no human labels for judge {ev.get('name', ev['key'])!r}; labels exist for {', '.join(names)}: "
            "pass evaluator='<name>' to calibrate it on those"
        )
    return chosen


def _choose_on(df: pd.DataFrame, ev: dict[str, Any], human: pd.DataFrame, on: str | None, name: str) -> str:
    has_scores = bool(human["score"].notna().any())
    has_verdicts = bool(human["verdict"].notna().any())
    column = score_column(ev["key"])
    numeric = column in df.columns and not _is_boolean(df[column])
    numeric = numeric and bool(np.isfinite(numeric_scores(df[column])).any())
    if on is None:
        if has_scores and numeric:
            return "score"
        if has_verdicts:
            return "verdict"
        raise EvalkitError(
            f"judge {name!r} has no numeric scores to compare with the human 1-5 scores; "
            "label verdicts ('pass' / 'fail') to calibrate its results"
        )
    if on == "score":
        if not has_scores:
            raise EvalkitError(f"on='score' but the human labels for {name!r} have no scores")
        if not numeric:
            raise EvalkitError(f"on='score' but judge {name!r} has no numeric scores (boolean or missing)")
    elif not has_verdicts:
        raise EvalkitError(f"on='verdict' but the human labels for {name!r} have no verdicts")
    return on


def _pairs(df: pd.DataFrame, ev: dict[str, Any], human: pd.DataFrame, on: str, name: str) -> pd.DataFrame:
    """The judged rows of ``df`` matched with the labels in ``human`` by (item, turn), as :data:`PAIR_COLUMNS`."""
    key = ev["key"]
    item, turn = _row_keys(df, "the scored table")
    result = _texts(df, f"{key}_result")
    if on == "score":
        column = score_column(key)
        values = numeric_scores(df[column])
        values[result == "error"] = np.nan
        human = human[human["score"].notna()]
        human_values = human["score"].to_numpy(dtype=float, na_value=np.nan)
        human_shown = human["score"].astype(object).to_numpy()
    else:
        values = np.where(result == "pass", 1.0, np.where(result == "fail", 0.0, np.nan))
        human = human[human["verdict"].notna()]
        human_values = np.where(human["verdict"].to_numpy(dtype=object) == "pass", 1.0, 0.0)
        human_shown = human["verdict"].to_numpy(dtype=object)
    usable = np.flatnonzero(np.isfinite(values))
    left = pd.DataFrame({"item": item[usable], "turn": turn[usable], "row": usable})
    human_turn = human["turn"].to_numpy(dtype=float, na_value=np.nan)
    right = pd.DataFrame(
        {
            "item": human["item"].to_numpy(dtype=np.int64),
            "turn": np.where(np.isnan(human_turn), -1, human_turn).astype(np.int64),
            "label": np.arange(len(human)),
        }
    )
    matched = right.merge(left, on=["item", "turn"], how="inner", sort=False)
    matched = matched.sort_values(["item", "turn"], kind="stable")
    rows = matched["row"].to_numpy(dtype=np.int64)
    labels = matched["label"].to_numpy(dtype=np.int64)
    judge_values = values[rows]
    if on == "score":
        judge_shown = judge_values.astype(object)
    else:
        judge_shown = np.where(judge_values == 1.0, "pass", "fail").astype(object)
    return pd.DataFrame(
        {
            "judge": name,
            "key": key,
            "on": on,
            "item": item[rows],
            "turn": _turns(turn[rows]),
            "thread": _texts(df, "thread")[rows],
            "judge_value": judge_shown,
            "human_value": human_shown[labels],
            "difference": judge_values - human_values[labels],
            "judge_result": result[rows],
            "judge_reason": _texts(df, f"{key}_reason", "")[rows],
            "human_note": human["note"].to_numpy(dtype=object)[labels],
            "labeller": human["labeller"].to_numpy(dtype=object)[labels],
            "prompt": _texts(df, "prompt", "")[rows],
            "response": _texts(df, "response", "")[rows],
        },
        columns=list(PAIR_COLUMNS),
    )


def calibrate(
    df: pd.DataFrame | Mapping[str, pd.DataFrame],
    judge: str | Sequence[str],
    labels: Labels | str | os.PathLike | pd.DataFrame,
    *,
    evaluator: str | None = None,
    on: str | None = None,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Calibration:
    """Agreement of LLM judge(s) with human labels; every definition is in the module docstring.

    ``df``: a scored case table, or ``{run label: table}`` to compare judge versions scored in separate runs
    (rows of :attr:`Calibration.table` are then named ``"run: judge"``). ``judge``: an evaluator name or key, or
    a list of them (one table row each, all on the same labels). ``labels``: a :class:`~evalkit.analysis.labels.Labels`,
    a labels file, or a DataFrame with ``item``, ``turn`` and ``score`` and / or ``verdict``. ``evaluator``: use
    the labels of this evaluator name for every judge. ``on``: ``"score"`` or ``"verdict"`` (default: scores
    when both sides have them). ``seed``, ``resamples``, ``confidence``: the bootstrap.
    """
    if on not in (None, "score", "verdict"):
        raise ValueError(f"on must be 'score', 'verdict' or None, not {on!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    runs: list[tuple[str | None, pd.DataFrame]]
    if isinstance(df, pd.DataFrame):
        runs = [(None, df)]
    elif isinstance(df, Mapping) and df and all(isinstance(v, pd.DataFrame) for v in df.values()):
        runs = [(str(label), table) for label, table in df.items()]
    else:
        raise TypeError("df must be a scored case table or a non-empty mapping {run label: scored table}")
    judges = [judge] if isinstance(judge, str) else list(dict.fromkeys(judge))
    if not judges:
        raise EvalkitError("give at least one judge (an evaluator name or key)")
    frame = labels_frame(labels)
    if frame.empty:
        raise EvalkitError("there are no human labels yet: label some rows first (Labels.set, then save)")

    rows: dict[str, dict[str, Any]] = {}
    pieces = []
    for run, table in runs:
        what = "the scored table" if run is None else f"run {run!r}"
        for wanted in judges:
            ev = _find(table, wanted, what)
            base = str(ev.get("name", ev["key"]))
            name = base if run is None else f"{run}: {base}"
            if name in rows:
                continue
            human = _labels_for(frame, ev, evaluator)
            mode = _choose_on(table, ev, human, on, name)
            pairs = _pairs(table, ev, human, mode, name)
            scale = mode == "score"
            judge_values = _numeric(pairs["judge_value"], mode)
            human_values = _numeric(pairs["human_value"], mode)
            point = agreement_metrics(judge_values, human_values, scale=scale)
            interval = bootstrap_metrics(
                judge_values, human_values, scale=scale, resamples=resamples, seed=seed, confidence=confidence
            )
            row: dict[str, Any] = {
                "key": ev["key"],
                "on": mode,
                "kappa_kind": "quadratic" if scale else "unweighted",
                "labels": int(human["score" if scale else "verdict"].notna().sum()),
                "n": len(pairs),
            }
            for metric in METRICS:
                row[metric] = point[metric]
                row[f"{metric}_low"], row[f"{metric}_high"] = interval[metric]
            rows[name] = row
            pieces.append(pairs)

    columns = ["key", "on", "kappa_kind", "labels", "n"]
    for metric in METRICS:
        columns += [metric, f"{metric}_low", f"{metric}_high"]
    out = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    out = out.astype({"labels": "int64", "n": "int64"})
    out.index.name = "judge"
    pairs = pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame(columns=list(PAIR_COLUMNS))
    gap = pairs["difference"].abs().to_numpy(dtype=float)
    order = np.argsort(-gap[gap > 0], kind="stable")
    disagreements = pairs[gap > 0].iloc[order].reset_index(drop=True)
    return Calibration(
        table=out,
        pairs=pairs,
        disagreements=disagreements,
        seed=seed,
        resamples=resamples,
        confidence=confidence,
    )


def _numeric(values: pd.Series, on: str) -> np.ndarray:
    """Shown pair values as numbers: scores as they are, verdicts pass = 1, fail = 0."""
    if on == "score":
        return values.to_numpy(dtype=float)
    return np.where(values.to_numpy(dtype=object) == "pass", 1.0, 0.0)


# ------------------------------------------------------------------------------------------------ judge noise


@dataclass
class JudgeNoise:
    """How much ``samples`` runs of the same judge on the same document disagree. Build with :func:`judge_noise`.

    ``rows``: one row per (evaluator, case row) asked in some sample, columns :data:`NOISE_ROW_COLUMNS`.
    ``table``: one row per evaluator (index: its name), columns :data:`NOISE_COLUMNS`. ``unmatched``: rows of
    the first table missing from some other sample (left out).
    """

    rows: pd.DataFrame
    table: pd.DataFrame
    samples: int
    unmatched: int = 0

    def __repr__(self) -> str:
        parts = [
            f"{name}: mean spread {_fmt(r['mean_spread'])}, flip rate {_fmt(r['flip_rate'])}"
            for name, r in self.table.iterrows()
        ]
        return f"<JudgeNoise k={self.samples}; {'; '.join(parts) or 'no evaluator'}>"

    def _repr_html_(self) -> str:
        """Notebook view: the per-evaluator table and the noisiest rows (all text escaped)."""
        return _noise_html(self, max_rows=10)


def _sample_frames(samples: Any) -> list[pd.DataFrame]:
    if isinstance(samples, pd.DataFrame):
        if "sample" not in samples.columns:
            raise EvalkitError(
                "one table was given: it needs a 'sample' column (the judge sample index) to hold k samples; "
                "or pass a list of k scored tables"
            )
        frames = []
        for _, group in samples.groupby("sample", sort=True):
            group = group.copy()
            group.attrs = dict(samples.attrs)
            frames.append(group)
    elif isinstance(samples, Mapping):
        frames = list(samples.values())
    else:
        frames = list(samples)
    if not all(isinstance(f, pd.DataFrame) for f in frames):
        raise TypeError("samples must be scored case tables (DataFrames)")
    if len(frames) < 2:
        raise EvalkitError(f"judge noise needs at least two samples of the same run, got {len(frames)}")
    return frames


def judge_noise(
    samples: Sequence[pd.DataFrame] | Mapping[str, pd.DataFrame] | pd.DataFrame,
    key: str | Sequence[str] | None = None,
) -> JudgeNoise:
    """Spread, flips, pass^k and pass@k of ``k`` scored tables of the same document (see the module docstring).

    ``samples``: a list (or mapping) of ``k >= 2`` scored tables, or one table with a ``sample`` column.
    ``key``: an evaluator name or key, a list of them, or None for every evaluator scored in all samples. Rows
    are matched by (item, turn); their prompts must agree (the samples must be runs of the same document).
    """
    frames = _sample_frames(samples)
    k = len(frames)
    specs = [
        {ev["key"]: ev for ev in scored_evaluators(f) if f"{ev['key']}_result" in f.columns} for f in frames
    ]
    if key is None:
        chosen = [ev for name, ev in specs[0].items() if all(name in s for s in specs[1:])]
    else:
        wanted = [key] if isinstance(key, str) else list(dict.fromkeys(key))
        chosen = [_find(frames[0], name, "sample 0") for name in wanted]
        for ev in chosen:
            for number, spec in enumerate(specs[1:], 1):
                if ev["key"] not in spec:
                    raise EvalkitError(
                        f"evaluator {ev.get('name', ev['key'])!r} is not scored in sample {number}"
                    )
    if not chosen:
        raise EvalkitError("no evaluator is scored in every sample")

    item, turn = _row_keys(frames[0], "sample 0")
    base = pd.MultiIndex.from_arrays([item, turn])
    positions = [np.arange(len(frames[0]))]
    for number, frame in enumerate(frames[1:], 1):
        other = pd.MultiIndex.from_arrays(_row_keys(frame, f"sample {number}"))
        positions.append(other.get_indexer(base))
    where = np.column_stack(positions)
    present = (where >= 0).all(axis=1)
    where, item, turn = where[present], item[present], turn[present]
    prompts = [_texts(f, "prompt", "")[where[:, s]] for s, f in enumerate(frames)]
    for number in range(1, k):
        changed = np.flatnonzero(prompts[number] != prompts[0])
        if len(changed):
            first = changed[0]
            at = f"item {item[first]}" + ("" if turn[first] < 0 else f", turn {turn[first]}")
            raise EvalkitError(
                f"sample {number} has another prompt than sample 0 at {at}: the samples must be runs of the "
                "same document"
            )

    row_pieces, table = [], {}
    for ev in chosen:
        name, column = str(ev.get("name", ev["key"])), score_column(ev["key"])
        results = np.column_stack(
            [_texts(f, f"{ev['key']}_result")[where[:, s]] for s, f in enumerate(frames)]
        )
        scores = np.column_stack(
            [
                numeric_scores(f[column])[where[:, s]] if column in f.columns else np.full(len(where), np.nan)
                for s, f in enumerate(frames)
            ]
        )
        judged = (results == "pass") | (results == "fail")
        scores = np.where(judged, scores, np.nan)
        asked = np.flatnonzero((results != None).any(axis=1))  # noqa: E711 (elementwise)
        results, scores, judged = results[asked], scores[asked], judged[asked]
        finite = np.isfinite(scores).sum(axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # rows with fewer than two scores
            spread = np.where(finite >= 2, np.nanmax(scores, axis=1) - np.nanmin(scores, axis=1), np.nan)
            std = np.where(finite >= 2, np.nanstd(scores, axis=1, ddof=1), np.nan)
        passes = (results == "pass").sum(axis=1)
        fails = (results == "fail").sum(axis=1)
        errors = (results == "error").sum(axis=1)
        flip = (passes > 0) & (fails > 0)
        complete = judged.all(axis=1)
        pass_all, pass_any = passes == k, passes > 0
        row_pieces.append(
            pd.DataFrame(
                {
                    "judge": name,
                    "key": ev["key"],
                    "item": item[asked],
                    "turn": _turns(turn[asked]),
                    "prompt": prompts[0][asked],
                    "scores": [[float(v) for v in line] for line in scores.tolist()],
                    "results": [list(line) for line in results.tolist()],
                    "samples": finite,
                    "spread": spread,
                    "std": std,
                    "passes": passes,
                    "fails": fails,
                    "errors": errors,
                    "flip": flip,
                    "complete": complete,
                    "pass_all": pass_all,
                    "pass_any": pass_any,
                },
                columns=list(NOISE_ROW_COLUMNS),
            )
        )
        done = int(complete.sum())

        def share(mask: np.ndarray, done: int = done, complete: np.ndarray = complete) -> float:
            return float(mask[complete].sum() / done) if done else math.nan

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no row with two scores
            table[name] = {
                "key": ev["key"],
                "samples": k,
                "rows": len(asked),
                "complete": done,
                "mean_spread": float(np.nanmean(spread)) if np.isfinite(spread).any() else math.nan,
                "max_spread": float(np.nanmax(spread)) if np.isfinite(spread).any() else math.nan,
                "mean_std": float(np.nanmean(std)) if np.isfinite(std).any() else math.nan,
                "flips": int(flip[complete].sum()),
                "flip_rate": share(flip),
                "pass_rate": float(passes[complete].sum() / (done * k)) if done else math.nan,
                "pass_hat_k": share(pass_all),
                "pass_at_k": share(pass_any),
            }
    out = pd.DataFrame.from_dict(table, orient="index", columns=list(NOISE_COLUMNS))
    out.index.name = "judge"
    return JudgeNoise(
        rows=pd.concat(row_pieces, ignore_index=True),
        table=out,
        samples=k,
        unmatched=int((~present).sum()),
    )


# ------------------------------------------------------------------------------------------------ HTML


CSS = """
.evalkit-calibration { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; }
.evalkit-calibration h3 { font-size: 1.05rem; margin: 1rem 0 .4rem; }
.evalkit-calibration .meta { color: #656d76; }
.evalkit-calibration table { border-collapse: collapse; }
.evalkit-calibration th, .evalkit-calibration td { border-bottom: 1px solid #d0d7de; padding: .3rem .5rem;
  text-align: left; vertical-align: top; }
.evalkit-calibration th { background: #f6f8fa; }
.evalkit-calibration td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.evalkit-calibration .text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 8em; overflow: auto;
  max-width: 28rem; }
"""


def _fmt(value: Any, digits: int = 2) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return DASH
    return DASH if not math.isfinite(number) else f"{number:.{digits}f}"


def _esc(value: Any, limit: int = TEXT_LIMIT) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[:limit] + "\u2026"
    return html.escape(text, quote=True)


def _shown(value: Any) -> str:
    """A judge or human value for display: whole-number scores without ".0"."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return _esc(value)


def _where_label(item: Any, turn: Any) -> str:
    return f"#{item}" if turn is None or turn is pd.NA else f"#{item} · turn {turn}"


def _table_html(head: Sequence[str], lines: list[str]) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


def _calibration_html(c: Calibration, *, max_rows: int) -> str:
    level = f"{c.confidence:.0%}"
    lines = []
    for name, r in c.table.iterrows():
        cells = [f"<th scope='row'>{_esc(name, 200)}</th>", f"<td>{_esc(r['on'])}</td>"]
        cells.append(f"<td class='num'>{int(r['n'])} / {int(r['labels'])}</td>")
        for metric in METRICS:
            value = f"{_fmt(r[metric])} [{_fmt(r[f'{metric}_low'])}, {_fmt(r[f'{metric}_high'])}]"
            cells.append(f"<td class='num'>{html.escape(value)}</td>")
        lines.append(f"<tr>{''.join(cells)}</tr>")
    head = (
        "judge",
        "on",
        "pairs / labels",
        "exact",
        "within one",
        "kappa",
        "Spearman",
        "bias (judge - human)",
    )
    shown = c.disagreements.head(max_rows)
    worst = [
        f"<tr><td>{_esc(row.judge, 200)}</td><td>{html.escape(_where_label(row.item, row.turn))}</td>"
        f"<td class='num'>{_shown(row.judge_value)} vs {_shown(row.human_value)}</td>"
        f"<td><div class='text'>{_esc(row.prompt)}</div></td><td><div class='text'>{_esc(row.response)}</div></td>"
        f"<td><div class='text'>{_esc(row.judge_reason)}</div></td>"
        f"<td><div class='text'>{_esc(row.human_note)}</div></td></tr>"
        for row in shown.itertuples(index=False)
    ]
    note = (
        f"<p class='meta'>Intervals: {level} percentile bootstrap ({c.resamples:,} resamples, seed {int(c.seed)}). "
        "Kappa: quadratic-weighted on 1-5 scores, unweighted on pass/fail verdicts.</p>"
    )
    if worst:
        more = len(c.disagreements) - len(shown)
        rest = f"<p class='meta'>{more:,} more in .disagreements</p>" if more > 0 else ""
        heads = ("judge", "row", "judge vs human", "prompt", "response", "judge reason", "human note")
        listing = _table_html(heads, worst) + rest
    else:
        listing = "<p class='meta'>No disagreement.</p>"
    return (
        f"<div class='evalkit-calibration'><style>{CSS}</style><h3>Judge vs human labels</h3>"
        f"{_table_html(head, lines)}{note}<h3>Disagreements ({len(c.disagreements):,})</h3>{listing}</div>"
    )


def _noise_html(noise: JudgeNoise, *, max_rows: int) -> str:
    lines = []
    for name, r in noise.table.iterrows():
        cells = [
            f"<th scope='row'>{_esc(name, 200)}</th>",
            f"<td class='num'>{int(r['complete'])} / {int(r['rows'])}</td>",
            f"<td class='num'>{_fmt(r['mean_spread'])}</td>",
            f"<td class='num'>{_fmt(r['max_spread'])}</td>",
            f"<td class='num'>{_fmt(r['mean_std'])}</td>",
            f"<td class='num'>{_fmt(r['flip_rate'])}</td>",
            f"<td class='num'>{_fmt(r['pass_hat_k'])}</td>",
            f"<td class='num'>{_fmt(r['pass_rate'])}</td>",
            f"<td class='num'>{_fmt(r['pass_at_k'])}</td>",
        ]
        lines.append(f"<tr>{''.join(cells)}</tr>")
    k = noise.samples
    head = (
        "judge",
        "complete / rows",
        "mean spread",
        "max spread",
        "mean std",
        "flip rate",
        f"pass^{k}",
        "pass rate",
        f"pass@{k}",
    )
    noisy = noise.rows[(noise.rows["spread"].fillna(0) > 0) | noise.rows["flip"]]
    noisy = noisy.sort_values("spread", ascending=False, kind="stable", na_position="last").head(max_rows)
    worst = [
        f"<tr><td>{_esc(row.judge, 200)}</td><td>{html.escape(_where_label(row.item, row.turn))}</td>"
        f"<td class='num'>{_esc(', '.join(_fmt(s, 1) for s in row.scores))}</td>"
        f"<td>{_esc(', '.join(str(x) for x in row.results))}</td>"
        f"<td><div class='text'>{_esc(row.prompt)}</div></td></tr>"
        for row in noisy.itertuples(index=False)
    ]
    listing = (
        _table_html(("judge", "row", "scores", "results", "prompt"), worst)
        if worst
        else "<p class='meta'>Every sample agreed.</p>"
    )
    unmatched = (
        f" {noise.unmatched:,} rows missing from some sample were left out." if noise.unmatched else ""
    )
    return (
        f"<div class='evalkit-calibration'><style>{CSS}</style><h3>Judge noise over {k} samples</h3>"
        f"{_table_html(head, lines)}<p class='meta'>Rates over complete rows (every sample pass or fail)."
        f"{html.escape(unmatched)}</p><h3>Noisiest rows</h3>{listing}</div>"
    )
