"""Per-evaluator and per-status counts of a scored case table.

The numbers here are the ones every report shows (the HTML report's summary table, notebook displays), so they
are computed in one place, column-wise, from the ``<key>_result`` and ``status`` columns of the case table.

Counting rules:

* ``asked`` counts the rows that asked for an evaluator (``<key>_result`` is not None); rows that did not ask
  are ignored entirely.
* ``pass_rate`` of an evaluator is ``passed / (passed + failed)``: errored rows are **excluded from the rate**
  and counted apart in ``errored``, because an error says nothing about the agent's answer (a judge timeout is
  not a failed answer). It is NaN when nothing passed or failed.
* ``partial`` counts, as in every line, the rows of ``asked`` whose row ``status`` is ``partial`` (the response
  was obtained but some evaluator failed to run, :mod:`evalkit.documents.statuses`): for an evaluator, the rows
  it was asked on whose verdict is incomplete, whether it or another evaluator failed to run there.
* The last row, ``"(status)"``, summarises the row ``status`` instead: ``asked`` is the number of rows,
  ``partial`` the rows with status ``partial`` and ``pass_rate`` is ``passed / rows`` (every row counts here,
  errored and partial ones included, since the row status is the verdict on the whole row).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.formatting import percent, score
from evalkit.documents.columns import score_column

#: Columns of the frame returned by :func:`summary`, in order.
SUMMARY_COLUMNS = ("asked", "passed", "failed", "errored", "partial", "pass_rate", "mean_score")

#: Index label of the row-status line of :func:`summary`.
STATUS_ROW = "(status)"

STATUSES = ("pass", "fail", "partial", "error")


def scored_evaluators(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The evaluators scored into ``df``, in run order, as ``{"name", "key", "score_field", "has_threshold"}``.

    Read from ``df.attrs["evalkit"]["scored"]``. Some pandas operations drop ``attrs``; when the list is
    missing altogether, evaluators are recovered from the columns (every ``K`` that has a ``K_result``
    column and a score column), named by their key, so that a filtered or concatenated table still summarises and reports.
    """
    meta = df.attrs.get("evalkit") or {}
    scored = meta.get("scored") if isinstance(meta, dict) else None
    if scored is not None:
        return [dict(entry) for entry in scored]
    found = []
    columns = set(map(str, df.columns))
    for col in map(str, df.columns):
        key = col[: -len("_result")]
        if col.endswith("_result") and score_column(key) in columns:
            found.append({"name": key, "key": key, "score_field": key, "has_threshold": False})
    return found


def numeric_scores(scores: pd.Series) -> np.ndarray:
    """The scores as a float array: booleans become 0/1, missing and non-numeric values NaN."""
    try:
        return scores.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        as_bool = scores.map(lambda v: float(v) if isinstance(v, (bool, np.bool_)) else v)
        return pd.to_numeric(as_bool, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def status_counts(df: pd.DataFrame) -> dict[str, int]:
    """``{"pass": n, "fail": n, "partial": n, "error": n, "total": rows}`` from the ``status`` column.

    Without a ``status`` column (an unscored table) the four counts are 0 and ``total`` is still the number of
    rows. Rows with any other status value count only in ``total``.
    """
    counts = {name: 0 for name in STATUSES}
    if "status" in df.columns:
        seen = df["status"].value_counts(dropna=True)
        for name in STATUSES:
            counts[name] = int(seen.get(name, 0))
    counts["total"] = int(len(df))
    return counts


def _rate(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


class SummaryTable(pd.DataFrame):
    """The frame :func:`summary` returns: the numbers as they are (``pass_rate`` a share, 0-1), shown the way
    the CLI and the pages print them (``pass_rate`` as a percentage with one decimal, mean scores to three
    significant digits, ``n/a`` when there is none), so a notebook reads ``81.8%`` where the CLI does."""

    @property
    def _constructor(self):
        return SummaryTable

    def shown(self) -> pd.DataFrame:
        """A plain copy with ``pass_rate`` and ``mean_score`` as the display texts."""
        out = pd.DataFrame(self, copy=True)
        if "pass_rate" in out.columns:
            out["pass_rate"] = out["pass_rate"].map(percent).astype(object)
        if "mean_score" in out.columns:
            out["mean_score"] = out["mean_score"].map(score).astype(object)
        return out

    def __repr__(self) -> str:
        return repr(self.shown())

    def _repr_html_(self) -> str | None:
        return self.shown()._repr_html_()


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per scored evaluator (index = its name, in run order) plus a final ``"(status)"`` row.

    Columns are :data:`SUMMARY_COLUMNS`: ``asked``, ``passed``, ``failed``, ``errored``, ``partial`` (of the rows
    asked, those with row status partial), ``pass_rate`` (errors excluded, see the module docstring) and ``mean_score`` (mean of the
    numeric scores of the rows that asked; exactMatch's booleans count as 0/1; NaN for the status row).

    The frame is a :class:`SummaryTable`: the values are numbers, displayed as percentages and rounded
    scores. A judged run adds ``prompt_tokens`` and ``completion_tokens`` per LLM evaluator (the status row: the run's
    totals). On an unscored table only the status row is returned, and an empty frame (same columns) when there is no
    ``status`` column either.
    """
    rows: dict[str, dict[str, Any]] = {}
    partial_rows = (
        df["status"].to_numpy(dtype=object) == "partial"
        if "status" in df.columns
        else np.zeros(len(df), dtype=bool)
    )
    for ev in scored_evaluators(df):
        key = ev["key"]
        result_col = f"{key}_result"
        if result_col in df.columns:
            result = df[result_col]
            asked_mask = result.notna().to_numpy()
            seen = result.value_counts(dropna=True)  # one hashing pass, not a comparison per verdict
            passed, failed, errored = (int(seen.get(v, 0)) for v in ("pass", "fail", "error"))
        else:
            asked_mask = np.zeros(len(df), dtype=bool)
            passed = failed = errored = 0
        mean = float("nan")
        column = score_column(key)
        if column in df.columns and asked_mask.any():
            values = numeric_scores(df[column])[asked_mask]
            if not np.isnan(values).all():
                mean = float(np.nanmean(values))
        rows[str(ev.get("name", key))] = {
            "asked": int(asked_mask.sum()),
            "passed": passed,
            "failed": failed,
            "errored": errored,
            "partial": int(np.count_nonzero(asked_mask & partial_rows)),
            "pass_rate": _rate(passed, passed + failed),
            "mean_score": mean,
        }
    if "status" in df.columns:
        counts = status_counts(df)
        rows[STATUS_ROW] = {
            "asked": counts["total"],
            "passed": counts["pass"],
            "failed": counts["fail"],
            "errored": counts["error"],
            "partial": counts["partial"],
            "pass_rate": _rate(counts["pass"], counts["total"]),
            "mean_score": float("nan"),
        }
    out = pd.DataFrame.from_dict(rows, orient="index", columns=list(SUMMARY_COLUMNS))
    out = out.astype({c: "int64" for c in SUMMARY_COLUMNS[:5]}).astype(
        {"pass_rate": float, "mean_score": float}
    )
    out.index.name = "evaluator"
    judge = df.attrs.get("evalkit", {}).get("judge") or {}
    if judge.get("tokens"):
        # Judged runs: what each LLM evaluator cost (cache hits cost nothing), and the run's total.
        tokens = judge["tokens"]
        out["prompt_tokens"] = [tokens.get(name, {}).get("prompt", 0) for name in out.index]
        out["completion_tokens"] = [tokens.get(name, {}).get("completion", 0) for name in out.index]
        if STATUS_ROW in out.index:
            out.loc[STATUS_ROW, "prompt_tokens"] = judge.get("prompt_tokens", 0)
            out.loc[STATUS_ROW, "completion_tokens"] = judge.get("completion_tokens", 0)
    return SummaryTable(out)
