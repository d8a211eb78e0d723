"""The comparison of two runs on the one report page: what ``evalkit compare A B --out FILE.html`` writes.

    from evalkit.analysis.comparison import compare
    from evalkit.reporting.comparison_page import write_html
    write_html(compare("results/baseline", "results/candidate"), "compare.html")

The page is :mod:`evalkit.reporting.page` with a comparison section (``templates/comparison.html.j2``):

* **banners** first, when the runs come from different documents, share few rows, or are too few for a test
  (:func:`evalkit.analysis.comparison_checks.notices`);
* the **deltas** table, a delta coloured only when it is significant: McNemar's exact test decides pass rates
  (its interval agrees with it by construction), the paired bootstrap interval decides mean scores, and either
  needs at least :data:`~evalkit.analysis.statistics.MIN_PAIRS` pairs; the page says so under the table;
* the two delta charts, then the **regressed** and **improved** rows with a word-level diff of response A and
  response B (:func:`evalkit.analysis.word_diff.word_diff`), and the unpaired rows;
* then run B's summary, charts-free items table and item view, as on a run's report.html.

Everything goes through the template's autoescaping; the file is written atomically and works offline.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalkit.analysis.statistics import MIN_PAIRS
from evalkit.analysis.summaries import STATUS_ROW
from evalkit.analysis.word_diff import word_diff
from evalkit.reporting.charts import comparison_deltas
from evalkit.reporting.page import Banner, write_page

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.analysis.comparison import Comparison

__all__ = ["comparison_context", "write_html"]

#: Longest text (characters) of a prompt or a list of changes in the comparison section.
TEXT_LIMIT = 2000


def _cut(value: Any, limit: int = TEXT_LIMIT) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "\u2026"


def _fmt(value: float, kind: str) -> str:
    """The comparison's numbers: ``pct`` rate, ``pp`` signed percentage points, ``num`` / ``signed`` scores,
    ``p`` a p-value; ``n/a`` when undefined."""
    if not math.isfinite(value):
        return "n/a"
    if kind == "pct":
        return f"{value:.1%}"
    if kind == "pp":
        return f"{value * 100:+.1f}"
    if kind == "signed":
        return f"{value:+.3f}"
    if kind == "p":
        return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"
    return f"{value:.3f}"


def _direction(row: pd.Series, flag: str, low: str, high: str) -> str:
    """``up`` / ``down`` for a significant change (by the side of 0 its interval is on), else no class."""
    if not bool(row.get(flag)):
        return ""
    return "up" if row[low] > 0 else "down" if row[high] < 0 else ""


def _label(item: Any, turn: Any) -> str:
    missing = turn is None or turn is pd.NA or (isinstance(turn, float) and math.isnan(turn))
    return f"#{item}" if missing else f"#{item} \u00b7 turn {turn}"


def _rows(c: Comparison) -> list[dict[str, Any]]:
    rows = []
    for name, r in c.evaluators.iterrows():
        pass_cls = _direction(r, "significant", "pass_rate_low", "pass_rate_high")
        mean_cls = _direction(r, "mean_significant", "mean_low", "mean_high")
        cells = [
            (str(int(r["judged"])), ""),
            (_fmt(r["pass_rate_a"], "pct"), ""),
            (_fmt(r["pass_rate_b"], "pct"), ""),
            (_fmt(r["pass_rate_delta"], "pp"), pass_cls),
            (f"[{_fmt(r['pass_rate_low'], 'pp')}, {_fmt(r['pass_rate_high'], 'pp')}]", ""),
            (str(int(r["pass_to_fail"])), ""),
            (str(int(r["fail_to_pass"])), ""),
            (_fmt(r["p_value"], "p"), ""),
            (str(int(r["scored"])), ""),
            (_fmt(r["mean_a"], "num"), ""),
            (_fmt(r["mean_b"], "num"), ""),
            (_fmt(r["mean_delta"], "signed"), mean_cls),
            (f"[{_fmt(r['mean_low'], 'signed')}, {_fmt(r['mean_high'], 'signed')}]", ""),
            (str(int(r["regressed"])), ""),
            (str(int(r["improved"])), ""),
        ]
        rows.append(
            {
                "name": "row status" if name == STATUS_ROW else _cut(name, 200),
                "is_status": name == STATUS_ROW,
                "cells": [{"text": t, "cls": cls} for t, cls in cells],
            }
        )
    return rows


def _group(frame: pd.DataFrame, ident: str, title: str, what: str, max_rows: int) -> dict[str, Any]:
    shown = frame.head(max_rows)
    rows = [
        {
            "item": int(row.item),
            "label": _label(row.item, row.turn),
            "thread": _cut(row.thread, 200),
            "status_a": _cut(row.status_a, 40) or "\u2013",
            "status_b": _cut(row.status_b, 40) or "\u2013",
            "changes": _cut(row.changes),
            "prompt": _cut(row.prompt),
            "diff": word_diff(_cut(row.response_a), _cut(row.response_b)),
        }
        for row in shown.itertuples(index=False)
    ]
    return {
        "id": ident,
        "title": title,
        "what": what,
        "total": len(frame),
        "rows": rows,
        "more": len(frame) - len(shown),
    }


def comparison_context(
    c: Comparison,
    max_rows: int = 500,
    *,
    roles: tuple[str, str] = ("A", "B"),
    notices: bool = False,
) -> dict[str, Any]:
    """What ``comparison*.html.j2`` show of ``c``: plain values (the templates escape them).

    ``roles`` name the runs in the facts line ("A (baseline)"...); ``notices`` puts the comparison's notices
    (:attr:`Comparison.notices`) inside the section, for pages that do not show them as banners."""
    not_compared = []
    if c.only_a:
        not_compared.append("only in A: " + ", ".join(_cut(n, 200) for n in c.only_a))
    if c.only_b:
        not_compared.append("only in B: " + ", ".join(_cut(n, 200) for n in c.only_b))
    method = (
        "On paired rows only; errors are left out of the rates and counted apart. McNemar's exact test on the "
        "discordant pairs decides the pass-rate change: its interval is the exact interval of those pairs, so it "
        f"excludes 0 exactly when p < {1 - c.confidence:g}. The paired bootstrap interval ({c.resamples:,} "
        f"resamples, seed {int(c.seed)}) decides the mean-score change by excluding 0. A delta is coloured only "
        f"when its test says so and at least {MIN_PAIRS} rows are paired. Row status: pass versus anything else."
    )
    unpaired = [
        {
            "label": _label(r.item, r.turn),
            "reason": _cut(r.reason, 100),
            "prompt_a": _cut(r.prompt_a),
            "prompt_b": _cut(r.prompt_b),
        }
        for r in c.unpaired.head(max_rows).itertuples(index=False)
    ]
    return {
        "label_a": c.label_a,
        "label_b": c.label_b,
        "role_a": roles[0],
        "role_b": roles[1],
        "notices": c.notices if notices else [],
        "paired": f"{c.paired:,}",
        "unpaired_count": f"{len(c.unpaired):,}",
        "level": f"{c.confidence:.0%}",
        "rows": _rows(c),
        "method": method,
        "not_compared": "; ".join(not_compared),
        "groups": [
            _group(c.regressed, "regressed", "Regressed", "regressed", max_rows),
            _group(c.improved, "improved", "Improved", "improved", max_rows),
        ],
        "unpaired": unpaired,
    }


def write_html(
    c: Comparison, path: str | os.PathLike, title: str | None = None, *, max_rows: int = 500
) -> Path:
    """Write the comparison page of ``c`` to ``path`` (atomically) and return the path.

    ``title`` defaults to "A vs B" (the runs' labels); lists show at most ``max_rows`` rows each. The items
    table below is run B's (the candidate's), when ``c`` carries it.
    """
    title = title or f"{c.label_a} vs {c.label_b}"
    items = c.frame_b if c.frame_b is not None else pd.DataFrame({"item": pd.Series([], dtype="int64")})
    target = Path(path)
    write_page(
        items,
        target,
        title=title,
        figures=[comparison_deltas(c, metric="pass_rate"), comparison_deltas(c, metric="mean")],
        banners=[Banner(level, heading, text) for level, heading, text in c.notices],
        comparison=comparison_context(c, max_rows),
        facts=[
            f"A = {c.label_a}",
            f"B = {c.label_b}",
            f"{c.paired:,} paired rows",
            f"{len(c.unpaired):,} unpaired",
        ],
    )
    return target
