"""Compare two scored runs of the same eval document: what changed, and is the change more than noise?

    from evalkit.analysis.comparison import compare
    c = compare("results/baseline", "results/candidate")   # run folders, results.json files or DataFrames
    c                                                        # renders in a notebook
    c.evaluators                                             # per-evaluator deltas, intervals, p-values
    c.regressed                                              # rows that got worse, with both responses
    c.to_html("compare.html")                                # standalone, offline report

**Pairing.** A row of run A and a row of run B are the same case when they sit at the same position, (``item``,
``turn``), *and* have the same ``prompt``. A row whose prompt changed is not the same test any more: it is listed
in :attr:`Comparison.unpaired` (with rows present in one run only) and left out of every statistic. All numbers
below are computed on the paired rows only, so A and B are always measured on the same cases.

**Statistics, per evaluator key present in both runs** (columns of :attr:`Comparison.evaluators`):

* ``paired``: paired rows where both runs asked for the evaluator (``K_result`` set in both).
* ``judged``: of those, rows whose result is ``pass`` or ``fail`` in *both* runs. Errored results are left out of
  rates and tests (as in :func:`evalkit.summary`: an error says nothing about the answer); they are counted in
  ``errored_a`` / ``errored_b``.
* ``pass_rate_a`` / ``pass_rate_b``: passes / ``judged`` in each run; ``pass_rate_delta`` = B - A, which equals
  ``(fail_to_pass - pass_to_fail) / judged``.
* ``pass_to_fail`` (McNemar's *b*) and ``fail_to_pass`` (*c*): the discordant judged pairs. ``p_value`` is the
  exact McNemar test: two-sided binomial test of *b* against Binomial(b + c, 1/2),
  ``p = min(1, 2 * sum_{k <= min(b, c)} C(b + c, k) / 2**(b + c))``, and 1.0 when b + c = 0.
* ``scored``: paired rows with a finite numeric score in both runs (exactMatch's booleans count as 0 / 1);
  ``mean_a``, ``mean_b`` are the mean scores over those rows, ``mean_delta`` = mean of (score B - score A).
* ``pass_rate_low`` / ``pass_rate_high`` and ``mean_low`` / ``mean_high``: paired bootstrap percentile interval
  (95 % by default) of the two deltas. Each of ``resamples`` (2,000) resamples draws the paired rows with
  replacement (one draw shared by all evaluators: A and B always move together), recomputes the delta on the
  drawn rows that qualify (judged, resp. scored), and the interval is the 2.5th and 97.5th percentiles of those
  deltas (resamples with no qualifying row are skipped). Seeded (``seed=0``): the same inputs give the same
  interval. Vectorised as a count matrix times the per-row differences, in chunks of a
  few million cells, so 10,000 rows x 2,000 resamples take well under a second.
* ``regressed``: paired rows with the evaluator pass in A and fail or error in B; ``improved``: fail or error in
  A and pass in B (errors count here, unlike in the rates: a pass that became an error is a regression to
  look at).

The last row, ``"(status)"``, does the same for the row ``status``: pass versus anything else (fail, partial,
error), every paired row judged (as :func:`evalkit.summary` counts the status row), no mean score.

:attr:`Comparison.regressed` lists the paired rows with at least one evaluator pass → fail/error, or whose
status went from pass to something else; :attr:`Comparison.improved` the reverse. A row can be in both lists
(better on one evaluator, worse on another).
"""

from __future__ import annotations

import html
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.summaries import STATUS_ROW, numeric_scores, scored_evaluators
from evalkit.documents.columns import score_column
from evalkit.errors import EvalkitError

__all__ = ["Comparison", "compare", "mcnemar_p", "paired_bootstrap"]

DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
#: Most cells of one resampling count matrix (resamples x rows) held in memory at once (8 bytes each).
BOOTSTRAP_CELLS = 4_000_000
#: Longest text shown per cell in the HTML views; :attr:`Comparison.regressed` etc. keep the full texts.
TEXT_LIMIT = 2000
ELLIPSIS = "\u2026"
DASH = "\u2013"

EVALUATOR_COLUMNS = (
    "key",
    "paired",
    "judged",
    "pass_rate_a",
    "pass_rate_b",
    "pass_rate_delta",
    "pass_rate_low",
    "pass_rate_high",
    "pass_to_fail",
    "fail_to_pass",
    "p_value",
    "scored",
    "mean_a",
    "mean_b",
    "mean_delta",
    "mean_low",
    "mean_high",
    "errored_a",
    "errored_b",
    "regressed",
    "improved",
)
CHANGE_COLUMNS = (
    "item",
    "turn",
    "thread",
    "prompt",
    "status_a",
    "status_b",
    "evaluators",
    "changes",
    "response_a",
    "response_b",
)
UNPAIRED_COLUMNS = ("item", "turn", "reason", "prompt_a", "prompt_b")
ONLY_A, ONLY_B, PROMPT_CHANGED = "only in A", "only in B", "prompt changed"


# ------------------------------------------------------------------------------------------------ statistics


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


# ------------------------------------------------------------------------------------------------ pairing


def _as_run(run: Any, which: str) -> pd.DataFrame:
    if isinstance(run, pd.DataFrame):
        return run
    if isinstance(run, (str, os.PathLike)):
        from evalkit.documents.run_reader import read_run

        return read_run(run)
    raise TypeError(f"run {which} must be a DataFrame, a run folder or a results.json path, not {type(run)}")


def _label(run: Any, df: pd.DataFrame) -> str:
    """A short name for a run: its folder name (never the full local path: reports get shared)."""
    source = run if isinstance(run, (str, os.PathLike)) else (df.attrs.get("evalkit") or {}).get("source")
    if source and not str(source).startswith("<"):
        path = Path(source)
        return (path.parent.name or path.name) if path.name == "results.json" else path.name
    from evalkit.reporting.html_page import report_title

    return report_title(df)


def _keys(df: pd.DataFrame, which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(df)
    item = df["item"].to_numpy(dtype=np.int64) if "item" in df.columns else np.arange(n, dtype=np.int64)
    if "turn" in df.columns:
        turn = pd.array(df["turn"], dtype="Int64").fillna(-1).to_numpy(dtype=np.int64)
    else:
        turn = np.full(n, -1, dtype=np.int64)
    prompt = _texts(df, "prompt", "")
    duplicated = pd.MultiIndex.from_arrays([item, turn]).duplicated()
    if duplicated.any():
        first = int(np.flatnonzero(duplicated)[0])
        raise EvalkitError(
            f"run {which} has more than one row for item {item[first]}"
            + ("" if turn[first] < 0 else f", turn {turn[first]}")
            + ": rows are paired by (item, turn), so each may appear once."
        )
    return item, turn, prompt


def _texts(df: pd.DataFrame, column: str, missing: Any = None) -> np.ndarray:
    """A column as an object array with missing values (None, NaN, NA) replaced by ``missing``."""
    if column not in df.columns:
        return np.full(len(df), missing, dtype=object)
    values = df[column].to_numpy(dtype=object)
    out = values.copy()
    out[pd.isna(values)] = missing
    return out


def _pair(a: pd.DataFrame, b: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Positions of the paired rows in A and B (in A's order) and the unpaired rows."""
    item_a, turn_a, prompt_a = _keys(a, "A")
    item_b, turn_b, prompt_b = _keys(b, "B")
    left = pd.DataFrame({"item": item_a, "turn": turn_a, "pos_a": np.arange(len(a))})
    right = pd.DataFrame({"item": item_b, "turn": turn_b, "pos_b": np.arange(len(b))})
    merged = left.merge(right, on=["item", "turn"], how="outer", indicator=True, sort=False)
    both = merged[merged["_merge"] == "both"].sort_values("pos_a")
    pos_a = both["pos_a"].to_numpy(dtype=np.int64)
    pos_b = both["pos_b"].to_numpy(dtype=np.int64)
    same = prompt_a[pos_a] == prompt_b[pos_b]
    same = np.asarray(same, dtype=bool)

    pieces = []
    changed = both[~same]
    if len(changed):
        pieces.append(
            pd.DataFrame(
                {
                    "item": changed["item"].to_numpy(),
                    "turn": changed["turn"].to_numpy(),
                    "reason": PROMPT_CHANGED,
                    "prompt_a": prompt_a[pos_a[~same]],
                    "prompt_b": prompt_b[pos_b[~same]],
                }
            )
        )
    for side, reason in (("left_only", ONLY_A), ("right_only", ONLY_B)):
        rows = merged[merged["_merge"] == side]
        if len(rows):
            column = "pos_a" if side == "left_only" else "pos_b"
            positions = rows[column].to_numpy(dtype=np.int64)
            texts = (prompt_a if side == "left_only" else prompt_b)[positions]
            pieces.append(
                pd.DataFrame(
                    {
                        "item": rows["item"].to_numpy(),
                        "turn": rows["turn"].to_numpy(),
                        "reason": reason,
                        "prompt_a": texts if side == "left_only" else None,
                        "prompt_b": texts if side == "right_only" else None,
                    }
                )
            )
    if pieces:
        unpaired = pd.concat(pieces, ignore_index=True).sort_values(["item", "turn"], kind="stable")
        unpaired = unpaired.reset_index(drop=True)
    else:
        unpaired = pd.DataFrame({c: [] for c in UNPAIRED_COLUMNS})
    unpaired["item"] = unpaired["item"].astype(np.int64)
    turns = unpaired["turn"].to_numpy(dtype=np.int64)
    unpaired["turn"] = pd.array(np.where(turns < 0, None, turns).tolist(), dtype="Int64")
    return pos_a[same], pos_b[same], unpaired[list(UNPAIRED_COLUMNS)]


# ------------------------------------------------------------------------------------------------ comparison


@dataclass
class Comparison:
    """The comparison of run A (the baseline) with run B (the candidate). Build it with :func:`compare`.

    ``evaluators``: one row per evaluator present in both runs (index: its name, A's order) plus ``"(status)"``,
    columns :data:`EVALUATOR_COLUMNS` (definitions in the module docstring). ``regressed`` / ``improved``: one
    row per paired case row that got worse / better, columns :data:`CHANGE_COLUMNS` (``evaluators`` lists the
    names that changed; ``changes`` says how, one line each, with B's reason or error). ``unpaired``: rows that
    are not compared, columns :data:`UNPAIRED_COLUMNS` (``reason``: only in A, only in B, prompt changed).
    """

    evaluators: pd.DataFrame
    regressed: pd.DataFrame
    improved: pd.DataFrame
    unpaired: pd.DataFrame
    paired: int
    label_a: str = "A"
    label_b: str = "B"
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE

    def __repr__(self) -> str:
        evaluators = int((self.evaluators.index != STATUS_ROW).sum())
        return (
            f"<Comparison {self.label_a!r} -> {self.label_b!r}: {self.paired} paired rows, "
            f"{len(self.unpaired)} unpaired, {evaluators} evaluators, {len(self.regressed)} regressed, "
            f"{len(self.improved)} improved>"
        )

    def table(self) -> str:
        """The per-evaluator deltas as plain text (what ``evalkit compare`` prints)."""
        return format_table(self)

    def _repr_html_(self) -> str:
        """Notebook view: the header, the deltas table and the first rows of each list (all text escaped)."""
        return f"<div class='evalkit-compare'><style>{CSS}</style>{_body_html(self, max_rows=20)}</div>"

    def to_html(self, path: str | os.PathLike, title: str | None = None, *, max_rows: int = 500) -> Path:
        """Write a standalone, offline HTML report to ``path`` (atomically) and return the path.

        Everything from the runs is escaped. The report embeds two plotly figures (pass-rate and mean-score
        deltas with their intervals) with plotly.js inline once, before the first figure; nothing is loaded
        from the network, and a Content-Security-Policy allows only the report's own scripts (by hash) and no
        connections. Lists show at most ``max_rows`` rows each; texts are cut to :data:`TEXT_LIMIT` characters.
        """
        return write_html(self, path, title=title, max_rows=max_rows)


def compare(
    run_a: pd.DataFrame | str | os.PathLike,
    run_b: pd.DataFrame | str | os.PathLike,
    *,
    labels: tuple[str, str] | None = None,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Comparison:
    """Compare run A (baseline) with run B (candidate): scored case tables, run folders or results.json files.

    Rows are paired by (item, turn) and prompt; see the module docstring for every definition. ``labels`` name
    the runs in reports (default: their folder names). ``seed``, ``resamples`` and ``confidence`` set the paired
    bootstrap. Raises :class:`~evalkit.errors.EvalkitError` for a missing or unreadable run, or a run with two
    rows for the same (item, turn).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    a, b = _as_run(run_a, "A"), _as_run(run_b, "B")
    if labels is None:
        labels = (_label(run_a, a), _label(run_b, b))
    pos_a, pos_b, unpaired = _pair(a, b)

    specs_a = {ev["key"]: ev for ev in scored_evaluators(a) if f"{ev['key']}_result" in a.columns}
    specs_b = {ev["key"]: ev for ev in scored_evaluators(b) if f"{ev['key']}_result" in b.columns}
    keys = [k for k in specs_a if k in specs_b]
    names = {k: str(specs_a[k].get("name", k)) for k in keys}

    m = len(pos_a)
    rows: dict[str, dict[str, Any]] = {}
    diffs, masks = [], []
    transitions: list[tuple[str, np.ndarray, np.ndarray, dict]] = []
    for key in keys:
        ra = _texts(a, f"{key}_result")[pos_a]
        rb = _texts(b, f"{key}_result")[pos_b]
        column = score_column(key)
        sa = numeric_scores(a[column])[pos_a] if column in a.columns else np.full(m, np.nan)
        sb = numeric_scores(b[column])[pos_b] if column in b.columns else np.full(m, np.nan)
        row, pass_diff, judged, score_diff, scored = _evaluator_stats(ra, rb, sa, sb)
        rows[names[key]] = {"key": key, **row}
        diffs += [pass_diff, score_diff]
        masks += [judged, scored]
        worse = (ra == "pass") & ((rb == "fail") | (rb == "error"))
        better = ((ra == "fail") | (ra == "error")) & (rb == "pass")
        transitions.append((key, worse, better, {"ra": ra, "rb": rb, "sa": sa, "sb": sb}))

    status_a = _texts(a, "status")[pos_a]
    status_b = _texts(b, "status")[pos_b]
    has_status = "status" in a.columns and "status" in b.columns
    if has_status:
        pa, pb = status_a == "pass", status_b == "pass"
        known = np.asarray((status_a != None) & (status_b != None), dtype=bool)  # noqa: E711 (elementwise)
        row, pass_diff, judged, _, _ = _evaluator_stats(
            np.where(known, np.where(pa, "pass", "fail"), None),
            np.where(known, np.where(pb, "pass", "fail"), None),
            np.full(m, np.nan),
            np.full(m, np.nan),
        )
        row["errored_a"] = int((status_a == "error").sum())
        row["errored_b"] = int((status_b == "error").sum())
        rows[STATUS_ROW] = {"key": STATUS_ROW, **row}
        diffs += [pass_diff, np.zeros(m)]
        masks += [judged, np.zeros(m, dtype=bool)]

    if diffs:
        low, high = paired_bootstrap(
            np.column_stack(diffs),
            np.column_stack(masks),
            resamples=resamples,
            seed=seed,
            confidence=confidence,
        )
        for position, name in enumerate(rows):
            rows[name]["pass_rate_low"], rows[name]["pass_rate_high"] = low[2 * position], high[2 * position]
            rows[name]["mean_low"], rows[name]["mean_high"] = low[2 * position + 1], high[2 * position + 1]

    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(EVALUATOR_COLUMNS))
    counts = ["paired", "judged", "pass_to_fail", "fail_to_pass", "scored", "errored_a", "errored_b"]
    table = table.astype({c: "int64" for c in counts + ["regressed", "improved"]})
    floats = [c for c in EVALUATOR_COLUMNS if c not in counts + ["key", "regressed", "improved"]]
    table = table.astype({c: float for c in floats})
    table.index.name = "evaluator"

    context = {
        "a": a,
        "b": b,
        "pos_a": pos_a,
        "pos_b": pos_b,
        "status_a": status_a,
        "status_b": status_b,
        "names": names,
    }
    worse_status = has_status & np.asarray((status_a == "pass") & (status_b != "pass"), dtype=bool)
    better_status = has_status & np.asarray((status_a != "pass") & (status_b == "pass"), dtype=bool)
    regressed = _changes(context, transitions, 1, worse_status)
    improved = _changes(context, transitions, 2, better_status)
    return Comparison(
        evaluators=table,
        regressed=regressed,
        improved=improved,
        unpaired=unpaired,
        paired=m,
        label_a=str(labels[0]),
        label_b=str(labels[1]),
        only_a=[str(specs_a[k].get("name", k)) for k in specs_a if k not in specs_b],
        only_b=[str(specs_b[k].get("name", k)) for k in specs_b if k not in specs_a],
        seed=seed,
        resamples=resamples,
        confidence=confidence,
    )


def _evaluator_stats(ra, rb, sa, sb):
    """One evaluator's row of the table (without intervals), its per-row differences and their masks."""
    asked = np.asarray((ra != None) & (rb != None), dtype=bool)  # noqa: E711 (elementwise on object arrays)
    pass_a, pass_b = np.asarray(ra == "pass", dtype=bool), np.asarray(rb == "pass", dtype=bool)
    judged_a = pass_a | np.asarray(ra == "fail", dtype=bool)
    judged_b = pass_b | np.asarray(rb == "fail", dtype=bool)
    judged = asked & judged_a & judged_b
    n = int(judged.sum())
    b = int((judged & pass_a & ~pass_b).sum())
    c = int((judged & ~pass_a & pass_b).sum())
    rate_a = float(pass_a[judged].sum() / n) if n else math.nan
    rate_b = float(pass_b[judged].sum() / n) if n else math.nan
    scored = asked & np.isfinite(sa) & np.isfinite(sb)
    k = int(scored.sum())
    mean_a = float(sa[scored].mean()) if k else math.nan
    mean_b = float(sb[scored].mean()) if k else math.nan
    score_diff = np.where(scored, sb - sa, 0.0)
    row = {
        "paired": int(asked.sum()),
        "judged": n,
        "pass_rate_a": rate_a,
        "pass_rate_b": rate_b,
        "pass_rate_delta": rate_b - rate_a,
        "pass_rate_low": math.nan,
        "pass_rate_high": math.nan,
        "pass_to_fail": b,
        "fail_to_pass": c,
        "p_value": mcnemar_p(b, c),
        "scored": k,
        "mean_a": mean_a,
        "mean_b": mean_b,
        "mean_delta": float(score_diff[scored].mean()) if k else math.nan,
        "mean_low": math.nan,
        "mean_high": math.nan,
        "errored_a": int((asked & np.asarray(ra == "error", dtype=bool)).sum()),
        "errored_b": int((asked & np.asarray(rb == "error", dtype=bool)).sum()),
        "regressed": int((asked & pass_a & np.asarray((rb == "fail") | (rb == "error"), dtype=bool)).sum()),
        "improved": int((asked & pass_b & np.asarray((ra == "fail") | (ra == "error"), dtype=bool)).sum()),
    }
    pass_diff = pass_b.astype(float) - pass_a.astype(float)
    return row, pass_diff, judged, score_diff, scored


def _fmt_score(value: float) -> str:
    if not math.isfinite(value):
        return ""
    return f"{value:g}" if float(value).is_integer() else f"{value:.3g}"


def _changes(context: dict, transitions: list, which: int, by_status: np.ndarray) -> pd.DataFrame:
    """The regressed (``which`` = 1) or improved (2) rows, one per case row, in A's order."""
    a, b = context["a"], context["b"]
    pos_a, pos_b = context["pos_a"], context["pos_b"]
    selected = by_status.copy()
    for transition in transitions:
        selected |= transition[which]
    picked = np.flatnonzero(selected)
    if not len(picked):
        return pd.DataFrame({c: [] for c in CHANGE_COLUMNS}).astype({"item": np.int64})
    ia, ib = pos_a[picked], pos_b[picked]
    evaluators: list[list[str]] = [[] for _ in picked]
    lines: list[list[str]] = [[] for _ in picked]
    reasons_b = {}
    for key, worse, better, data in transitions:
        hit = (worse if which == 1 else better)[picked]
        if not hit.any():
            continue
        reason = _texts(b, f"{key}_reason")[ib]
        error = _texts(b, f"{key}_error")[ib]
        reasons_b[key] = (reason, error)
        name = context["names"][key]
        for j in np.flatnonzero(hit).tolist():
            row = picked[j]
            line = f"{name}: {data['ra'][row]} \u2192 {data['rb'][row]}"
            sa, sb = _fmt_score(data["sa"][row]), _fmt_score(data["sb"][row])
            if sa or sb:
                line += f" ({sa or DASH} \u2192 {sb or DASH})"
            why = error[j] if data["rb"][row] == "error" else reason[j]
            if why:
                line += f": {why}"
            evaluators[j].append(name)
            lines[j].append(line)
    turn = (
        pd.array(a["turn"], dtype="Int64")[ia] if "turn" in a.columns else pd.array([None] * len(ia), "Int64")
    )
    return pd.DataFrame(
        {
            "item": a["item"].to_numpy(dtype=np.int64)[ia] if "item" in a.columns else ia.astype(np.int64),
            "turn": turn,
            "thread": _texts(a, "thread")[ia],
            "prompt": _texts(a, "prompt", "")[ia],
            "status_a": context["status_a"][picked],
            "status_b": context["status_b"][picked],
            "evaluators": evaluators,
            "changes": ["\n".join(parts) for parts in lines],
            "response_a": _texts(a, "response")[ia],
            "response_b": _texts(b, "response")[ib],
        },
        columns=list(CHANGE_COLUMNS),
    )


# ------------------------------------------------------------------------------------------------ text output


def _pct(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.1%}"


def _pp(value: float) -> str:
    """A pass-rate difference in percentage points, signed."""
    return "n/a" if not math.isfinite(value) else f"{value * 100:+.1f}"


def _num(value: float, signed: bool = False) -> str:
    if not math.isfinite(value):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def format_table(comparison: Comparison) -> str:
    """The per-evaluator deltas as an aligned plain-text table, with a header line about the pairing."""
    c = comparison
    level = f"{c.confidence:.0%}"
    reasons = c.unpaired["reason"].value_counts() if len(c.unpaired) else {}
    lines = [
        f"A: {c.label_a}",
        f"B: {c.label_b}",
        f"{c.paired} paired rows; {len(c.unpaired)} unpaired ("
        + ", ".join(f"{int(reasons.get(r, 0))} {r}" for r in (ONLY_A, ONLY_B, PROMPT_CHANGED))
        + ")",
    ]
    header = (
        "evaluator",
        "judged",
        "pass A",
        "pass B",
        "delta pp",
        f"{level} interval",
        "p",
        "mean A",
        "mean B",
        "delta",
        f"{level} interval",
        "worse",
        "better",
    )
    body = []
    for name, r in c.evaluators.iterrows():
        body.append(
            (
                "row status" if name == STATUS_ROW else str(name),
                str(int(r["judged"])),
                _pct(r["pass_rate_a"]),
                _pct(r["pass_rate_b"]),
                _pp(r["pass_rate_delta"]),
                f"[{_pp(r['pass_rate_low'])}, {_pp(r['pass_rate_high'])}]",
                _p(r["p_value"]),
                _num(r["mean_a"]),
                _num(r["mean_b"]),
                _num(r["mean_delta"], signed=True),
                f"[{_num(r['mean_low'], True)}, {_num(r['mean_high'], True)}]",
                str(int(r["regressed"])),
                str(int(r["improved"])),
            )
        )
    if body:
        widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
        for row in [header, *body]:
            cells = [row[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(row[1:], widths[1:])]
            lines.append("  ".join(cells).rstrip())
    else:
        lines.append("No evaluator is scored in both runs, and neither has row statuses.")
    if c.only_a:
        lines.append("Only in A (not compared): " + ", ".join(c.only_a))
    if c.only_b:
        lines.append("Only in B (not compared): " + ", ".join(c.only_b))
    lines.append(f"{len(c.regressed)} rows regressed, {len(c.improved)} improved.")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ HTML output

CSS = """
.evalkit-compare, body.evalkit-compare { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1f2328; }
body.evalkit-compare { margin: 1.5rem; }
.evalkit-compare h1 { font-size: 1.5rem; margin: 0 0 .2rem; overflow-wrap: anywhere; }
.evalkit-compare h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
.evalkit-compare .meta, .evalkit-compare .none { color: #656d76; }
.evalkit-compare table { border-collapse: collapse; }
.evalkit-compare th, .evalkit-compare td { border-bottom: 1px solid #d0d7de; padding: .3rem .5rem;
  text-align: left; vertical-align: top; }
.evalkit-compare th { background: #f6f8fa; }
.evalkit-compare td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.evalkit-compare .up { color: #1a7f37; font-weight: 600; }
.evalkit-compare .down { color: #cf222e; font-weight: 600; }
.evalkit-compare tr.status-row th, .evalkit-compare tr.status-row td { border-top: 2px solid #d0d7de; }
.evalkit-compare .text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 10em; overflow: auto;
  max-width: 32rem; }
.evalkit-compare .scroll { overflow-x: auto; }
"""


def _esc(value: Any, limit: int = TEXT_LIMIT) -> str:
    """A cell as escaped HTML text: missing → "", cut to ``limit`` characters (marked with …)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[:limit] + ELLIPSIS
    return html.escape(text, quote=True)


def _delta_class(low: float, high: float) -> str:
    """``up`` / ``down`` when the interval excludes 0, so a colour marks only a change beyond noise."""
    if math.isfinite(low) and low > 0:
        return " up"
    if math.isfinite(high) and high < 0:
        return " down"
    return ""


def _evaluators_html(c: Comparison) -> str:
    if c.evaluators.empty:
        return "<p class='none'>No evaluator is scored in both runs, and neither has row statuses.</p>"
    level = html.escape(f"{c.confidence:.0%}")
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "evaluator",
            "judged",
            "pass A",
            "pass B",
            "Δ pass (pp)",
            f"{level} interval",
            "pass→fail",
            "fail→pass",
            "p (McNemar)",
            "scored",
            "mean A",
            "mean B",
            "Δ mean",
            f"{level} interval",
            "regressed",
            "improved",
        )
    )
    lines = []
    for name, r in c.evaluators.iterrows():
        status = name == STATUS_ROW
        label = "row status" if status else _esc(name, 200)
        pass_cls = _delta_class(r["pass_rate_low"], r["pass_rate_high"])
        mean_cls = _delta_class(r["mean_low"], r["mean_high"])
        cells = [
            f"<td class='num'>{int(r['judged'])}</td>",
            f"<td class='num'>{_pct(r['pass_rate_a'])}</td>",
            f"<td class='num'>{_pct(r['pass_rate_b'])}</td>",
            f"<td class='num{pass_cls}'>{_pp(r['pass_rate_delta'])}</td>",
            f"<td class='num'>[{_pp(r['pass_rate_low'])}, {_pp(r['pass_rate_high'])}]</td>",
            f"<td class='num'>{int(r['pass_to_fail'])}</td>",
            f"<td class='num'>{int(r['fail_to_pass'])}</td>",
            f"<td class='num'>{_p(r['p_value'])}</td>",
            f"<td class='num'>{int(r['scored'])}</td>",
            f"<td class='num'>{_num(r['mean_a'])}</td>",
            f"<td class='num'>{_num(r['mean_b'])}</td>",
            f"<td class='num{mean_cls}'>{_num(r['mean_delta'], True)}</td>",
            f"<td class='num'>[{_num(r['mean_low'], True)}, {_num(r['mean_high'], True)}]</td>",
            f"<td class='num'>{int(r['regressed'])}</td>",
            f"<td class='num'>{int(r['improved'])}</td>",
        ]
        css = " class='status-row'" if status else ""
        lines.append(f"<tr{css}><th scope='row'>{label}</th>{''.join(cells)}</tr>")
    note = (
        "<p class='meta'>On paired rows only. Pass rates: pass / (pass + fail) over the rows judged pass or fail in "
        "both runs (errors left out, counted apart). p: exact McNemar test on the discordant pairs. Intervals: "
        f"paired bootstrap ({c.resamples:,} resamples, seed {int(c.seed)}), percentile method; a coloured delta "
        "has an interval that excludes 0. Row status: pass versus anything else, every paired row.</p>"
    )
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table></div>{note}"


def _turn_label(item: Any, turn: Any) -> str:
    missing = turn is None or turn is pd.NA or (isinstance(turn, float) and math.isnan(turn))
    return f"#{item}" if missing else f"#{item} · turn {turn}"


def _changes_html(frame: pd.DataFrame, max_rows: int, what: str) -> str:
    if frame.empty:
        return f"<p class='none'>No {what} rows.</p>"
    shown = frame.head(max_rows)
    head = "".join(
        f"<th>{h}</th>"
        for h in ("item", "status A → B", "what changed", "prompt", "response A", "response B")
    )
    lines = []
    for row in shown.itertuples(index=False):
        where = html.escape(_turn_label(row.item, row.turn))
        if isinstance(row.thread, str) and row.thread:
            where += f"<div class='meta'>{_esc(row.thread, 200)}</div>"
        lines.append(
            f"<tr><td>{where}</td><td>{_esc(row.status_a, 40)} → {_esc(row.status_b, 40)}</td>"
            f"<td><div class='text'>{_esc(row.changes)}</div></td>"
            f"<td><div class='text'>{_esc(row.prompt)}</div></td>"
            f"<td><div class='text'>{_esc(row.response_a)}</div></td>"
            f"<td><div class='text'>{_esc(row.response_b)}</div></td></tr>"
        )
    more = ""
    if len(frame) > len(shown):
        more = f"<p class='meta'>{len(frame) - len(shown):,} more not shown here (all are in the Comparison).</p>"
    return (
        f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table></div>"
        f"{more}"
    )


def _unpaired_html(frame: pd.DataFrame, max_rows: int) -> str:
    if frame.empty:
        return "<p class='none'>Every row is paired.</p>"
    shown = frame.head(max_rows)
    lines = [
        f"<tr><td>{html.escape(_turn_label(row.item, row.turn))}</td><td>{_esc(row.reason)}</td>"
        f"<td><div class='text'>{_esc(row.prompt_a)}</div></td><td><div class='text'>{_esc(row.prompt_b)}</div></td>"
        "</tr>"
        for row in shown.itertuples(index=False)
    ]
    more = (
        f"<p class='meta'>{len(frame) - len(shown):,} more not shown.</p>" if len(frame) > len(shown) else ""
    )
    return (
        "<div class='scroll'><table><thead><tr><th>item</th><th>why</th><th>prompt A</th><th>prompt B</th></tr>"
        f"</thead><tbody>{''.join(lines)}</tbody></table></div>{more}"
    )


def _body_html(c: Comparison, *, max_rows: int, figures: str = "") -> str:
    facts = (
        f"A = {_esc(c.label_a, 200)} · B = {_esc(c.label_b, 200)} · {c.paired:,} paired rows · "
        f"{len(c.unpaired):,} unpaired"
    )
    only = ""
    if c.only_a or c.only_b:
        parts = []
        if c.only_a:
            parts.append("only in A: " + ", ".join(_esc(n, 200) for n in c.only_a))
        if c.only_b:
            parts.append("only in B: " + ", ".join(_esc(n, 200) for n in c.only_b))
        only = f"<p class='meta'>Not compared ({'; '.join(parts)}).</p>"
    return (
        f"<p class='meta'>{facts}</p><h2>Evaluators</h2>{_evaluators_html(c)}{only}{figures}"
        f"<h2>Regressed ({len(c.regressed):,})</h2>{_changes_html(c.regressed, max_rows, 'regressed')}"
        f"<h2>Improved ({len(c.improved):,})</h2>{_changes_html(c.improved, max_rows, 'improved')}"
        f"<h2>Unpaired ({len(c.unpaired):,})</h2>{_unpaired_html(c.unpaired, max_rows)}"
    )


def _figures_html(c: Comparison) -> tuple[str, list[str]]:
    """The two delta figures as HTML (plotly.js inline once, in the first) and the sources of their scripts."""
    import re

    from evalkit.reporting.charts import comparison_deltas

    # showSendToCloud: plotly.js 3 shows a "Share chart" (upload to Plotly Cloud) button unless told not to.
    config = {"displaylogo": False, "responsive": True, "showSendToCloud": False}
    parts = []
    for number, metric in enumerate(("pass_rate", "mean")):
        figure = comparison_deltas(c, metric=metric)
        parts.append(
            figure.to_html(
                full_html=False,
                include_plotlyjs=number == 0,
                config=config,
                div_id=f"evalkit-delta-{metric.replace('_', '-')}",
            )
        )
    markup = "".join(parts)
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", markup, flags=re.DOTALL)
    return f"<h2>Deltas</h2>{markup}", scripts


def write_html(
    c: Comparison, path: str | os.PathLike, title: str | None = None, *, max_rows: int = 500
) -> Path:
    """Write the standalone comparison report (see :meth:`Comparison.to_html`)."""
    import base64
    import hashlib

    from evalkit.documents.atomic import atomic_write

    title = title or f"{c.label_a} vs {c.label_b}"
    figures, scripts = _figures_html(c)

    def digest(source: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode() + "'"

    # Plotly sets inline styles, so style-src allows them; scripts run only when they are this file's own.
    csp = (
        "default-src 'none'; script-src "
        + " ".join(sorted({digest(s) for s in scripts}))
        + "; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; base-uri 'none'; form-action 'none'"
    )
    document = (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        "<meta name='generator' content='evalkit'>\n"
        f"<title>{_esc(title, 300)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body class='evalkit-compare'>\n<header><h1>{_esc(title, 300)}</h1></header>\n<main>\n"
        f"{_body_html(c, max_rows=max_rows, figures=figures)}\n</main>\n"
        f"<footer class='meta'>Generated by evalkit; works offline. Texts longer than {TEXT_LIMIT:,} characters "
        "are shortened (…).</footer>\n</body>\n</html>\n"
    )
    target = Path(path)
    with atomic_write(target, "wb") as handle:
        handle.write(document.encode("utf-8", "backslashreplace"))
    return target
