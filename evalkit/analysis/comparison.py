"""Compare two scored runs of the same eval document: what changed, and is the change more than noise?

    from evalkit.analysis.comparison import compare
    c = compare("results/baseline", "results/candidate")   # run folders, results.json files or DataFrames
    c                                                        # renders in a notebook
    c.evaluators                                             # per-evaluator deltas, intervals, p-values
    c.regressed                                              # rows that got worse, with both responses
    from evalkit.reporting.comparison_page import write_html
    write_html(c, "compare.html")                            # standalone, offline page (evalkit compare --out)

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
* ``pass_rate_low`` / ``pass_rate_high``: the interval (95 % by default) of the pass-rate delta that agrees with
  McNemar's test (:func:`~evalkit.analysis.statistics.mcnemar_interval`: the exact interval of the discordant
  split, scaled to the judged rows), so it excludes 0 exactly when ``p_value`` < 1 - confidence. A bootstrap
  interval of one changed pair out of one would be [+100 %, +100 %] next to p = 1.
* ``significant``: the pass-rate change is called significant, and only then coloured in reports: McNemar's
  p < 1 - confidence *and* at least :data:`~evalkit.analysis.statistics.MIN_PAIRS` judged pairs.
* ``mean_low`` / ``mean_high``: paired bootstrap percentile interval of the mean-score delta. Each of
  ``resamples`` (2,000) resamples draws the paired rows with replacement (one draw shared by all evaluators: A
  and B always move together), recomputes the delta on the drawn rows that were scored in both runs, and the
  interval is the 2.5th and 97.5th percentiles of those deltas. Seeded (``seed=0``): the same inputs give the
  same interval. Vectorised as a count matrix times the per-row differences, in chunks of a few million cells,
  so 10,000 rows x 2,000 resamples take well under a second. ``mean_significant``: that interval excludes 0
  and at least ``MIN_PAIRS`` rows were scored in both runs (the interval is the test here).
* ``regressed``: paired rows with the evaluator pass in A and fail or error in B; ``improved``: fail or error in
  A and pass in B (errors count here, unlike in the rates: a pass that became an error is a regression to
  look at).

The last row, ``"(status)"``, does the same for the row ``status``: pass versus anything else (fail, partial,
error), every paired row judged (as :func:`evalkit.summary` counts the status row), no mean score.

:attr:`Comparison.regressed` lists the paired rows with at least one evaluator pass → fail/error, or whose
status went from pass to something else; :attr:`Comparison.improved` the reverse. A row can be in both lists
(better on one evaluator, worse on another).

The paired statistics themselves (:func:`~evalkit.analysis.statistics.mcnemar_p`,
:func:`~evalkit.analysis.statistics.paired_bootstrap`) live in :mod:`evalkit.analysis.statistics`, the pairing in
:mod:`evalkit.analysis.pairing`, the text table and notebook view in :mod:`evalkit.analysis.comparison_views`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.comparison_views import format_table, notebook_html
from evalkit.analysis.flaky import flip_notes
from evalkit.analysis.formatting import count
from evalkit.analysis.pairing import as_run, column_texts, pair_rows, run_label
from evalkit.analysis.run_identity import run_identity
from evalkit.analysis.statistics import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_PAIRS,
    mcnemar_interval,
    mcnemar_p,
    paired_bootstrap,
)
from evalkit.analysis.summaries import STATUS_ROW, numeric_scores, scored_evaluators
from evalkit.documents.columns import score_column

__all__ = ["CHANGE_COLUMNS", "EVALUATOR_COLUMNS", "Comparison", "compare"]

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
    "significant",
    "mean_significant",
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


@dataclass
class Comparison:
    """The comparison of run A (the baseline) with run B (the candidate). Build it with :func:`compare`.

    ``evaluators``: one row per evaluator present in both runs (index: its name, A's order) plus ``"(status)"``,
    columns :data:`EVALUATOR_COLUMNS` (definitions in the module docstring). ``regressed`` / ``improved``: one
    row per paired case row that got worse / better, columns :data:`CHANGE_COLUMNS` (``evaluators`` lists the
    names that changed; ``changes`` says how, one line each, with B's reason or error). ``unpaired``: rows that
    are not compared, columns :data:`~evalkit.analysis.pairing.UNPAIRED_COLUMNS` (``reason``: only in A, only
    in B, prompt changed).
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
    #: :func:`~evalkit.analysis.run_identity.run_identity` of each run (document, sha256, version, rows, ...).
    identity_a: dict[str, Any] = field(default_factory=dict)
    identity_b: dict[str, Any] = field(default_factory=dict)
    #: Run B's scored case table (the candidate), for pages that show its items; not part of the comparison.
    frame_b: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def notices(self) -> list[tuple[str, str, str]]:
        """What a reader must know before trusting the numbers, as ``(level, heading, text)``; see
        :func:`evalkit.analysis.comparison_checks.notices`."""
        from evalkit.analysis.comparison_checks import notices

        return notices(self)

    def __repr__(self) -> str:
        evaluators = int((self.evaluators.index != STATUS_ROW).sum())
        return (
            f"<Comparison {self.label_a!r} -> {self.label_b!r}: {count(self.paired, 'paired row')}, "
            f"{len(self.unpaired)} unpaired, {count(evaluators, 'evaluator')}, {len(self.regressed)} regressed, "
            f"{len(self.improved)} improved>"
        )

    def table(self) -> str:
        """The per-evaluator deltas as plain text (what ``evalkit compare`` prints)."""
        return format_table(self)

    def _repr_html_(self) -> str:
        """Notebook view: the header, the deltas table and the first rows of each list (all text escaped)."""
        return notebook_html(self, max_rows=20)


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
    a, b = as_run(run_a, "A"), as_run(run_b, "B")
    if labels is None:
        labels = (run_label(run_a, a), run_label(run_b, b))
    pos_a, pos_b, unpaired = pair_rows(a, b)

    specs_a = {ev["key"]: ev for ev in scored_evaluators(a) if f"{ev['key']}_result" in a.columns}
    specs_b = {ev["key"]: ev for ev in scored_evaluators(b) if f"{ev['key']}_result" in b.columns}
    keys = [k for k in specs_a if k in specs_b]
    names = {k: str(specs_a[k].get("name", k)) for k in keys}

    m = len(pos_a)
    rows: dict[str, dict[str, Any]] = {}
    diffs, masks = [], []
    transitions: list[tuple[str, np.ndarray, np.ndarray, dict]] = []
    for key in keys:
        ra = column_texts(a, f"{key}_result")[pos_a]
        rb = column_texts(b, f"{key}_result")[pos_b]
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

    status_a = column_texts(a, "status")[pos_a]
    status_b = column_texts(b, "status")[pos_b]
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
            rows[name]["mean_low"], rows[name]["mean_high"] = low[2 * position + 1], high[2 * position + 1]
    alpha = 1.0 - confidence
    for row in rows.values():
        row["pass_rate_low"], row["pass_rate_high"] = mcnemar_interval(
            row["pass_to_fail"], row["fail_to_pass"], row["judged"], confidence
        )
        row["significant"] = bool(row["judged"] >= MIN_PAIRS and row["p_value"] < alpha)
        mean_low, mean_high = row["mean_low"], row["mean_high"]
        excludes_zero = bool(
            (math.isfinite(mean_low) and mean_low > 0) or (math.isfinite(mean_high) and mean_high < 0)
        )
        row["mean_significant"] = bool(row["scored"] >= MIN_PAIRS and excludes_zero)

    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(EVALUATOR_COLUMNS))
    counts = ["paired", "judged", "pass_to_fail", "fail_to_pass", "scored", "errored_a", "errored_b"]
    table = table.astype({c: "int64" for c in counts + ["regressed", "improved"]})
    flags = ["significant", "mean_significant"]
    table = table.astype({c: bool for c in flags})
    floats = [c for c in EVALUATOR_COLUMNS if c not in counts + flags + ["key", "regressed", "improved"]]
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
        identity_a=run_identity(a),
        identity_b=run_identity(b),
        frame_b=b,
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
        "significant": False,
        "mean_significant": False,
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
        reason = column_texts(b, f"{key}_reason")[ib]
        error = column_texts(b, f"{key}_error")[ib]
        reasons_b[key] = (reason, error)
        flaky = flip_notes(a, key, ia), flip_notes(b, key, ib)  # --samples K: the judge's own noise
        name = context["names"][key]
        for j in np.flatnonzero(hit).tolist():
            row = picked[j]
            line = f"{name}: {data['ra'][row]} \u2192 {data['rb'][row]}"
            sa, sb = _fmt_score(data["sa"][row]), _fmt_score(data["sb"][row])
            if sa or sb:
                line += f" ({sa or DASH} \u2192 {sb or DASH})"
            noted = [f"{run} {note}" for run, note in zip("AB", (flaky[0][j], flaky[1][j])) if note]
            if noted:
                line += f" [{'; '.join(noted)}]"
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
            "thread": column_texts(a, "thread")[ia],
            "prompt": column_texts(a, "prompt", "")[ia],
            "status_a": context["status_a"][picked],
            "status_b": context["status_b"][picked],
            "evaluators": evaluators,
            "changes": ["\n".join(parts) for parts in lines],
            "response_a": column_texts(a, "response")[ia],
            "response_b": column_texts(b, "response")[ib],
        },
        columns=list(CHANGE_COLUMNS),
    )
