"""How a :class:`~evalkit.analysis.comparison.Comparison` reads: the plain-text table and the HTML views.

- :func:`format_table`: the per-evaluator deltas as aligned text (``Comparison.table()``, ``evalkit compare``).
- :func:`comparison_context`: what the comparison templates (``templates/comparison_deltas.html.j2`` and
  ``comparison_changes.html.j2``, autoescaped) show: notices, the deltas (a delta coloured only when it is
  significant), which test decides, the regressed / improved rows with a word diff of the two responses, the
  unpaired rows. The same templates make ``Comparison._repr_html_`` (:func:`notebook_html`), the comparison on
  ``evalkit compare``'s page (:mod:`evalkit.reporting.comparison_page`) and the report notebook's comparison.

Only formatting lives here: no numbers are computed, no file is written, plotly is not needed.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from markupsafe import Markup

from evalkit.analysis.formatting import count, item_label, percent
from evalkit.analysis.pairing import ONLY_A, ONLY_B, PROMPT_CHANGED
from evalkit.analysis.statistics import MIN_PAIRS
from evalkit.analysis.summaries import STATUS_ROW
from evalkit.analysis.templating import cut, render
from evalkit.analysis.word_diff import word_diff

__all__ = ["CSS", "TEXT_LIMIT", "comparison_context", "format_table", "notebook_html"]

#: Longest text shown per cell in the HTML views; :attr:`Comparison.regressed` etc. keep the full texts.
TEXT_LIMIT = 2000
ELLIPSIS = "\u2026"


def _pct(value: float) -> str:
    return percent(value)


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


def format_table(comparison: Any) -> str:
    """The per-evaluator deltas as an aligned plain-text table, with a header line about the pairing."""
    c = comparison
    level = f"{c.confidence:.0%}"
    reasons = c.unpaired["reason"].value_counts() if len(c.unpaired) else {}
    lines = [
        f"A: {c.label_a}",
        f"B: {c.label_b}",
        f"{count(c.paired, 'paired row')}; {len(c.unpaired):,} unpaired ("
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
    lines.append(f"{count(len(c.regressed), 'row')} regressed, {len(c.improved):,} improved.")
    return "\n".join(lines)


CSS = """
.evalkit-compare { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; }
.evalkit-compare h3 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
.evalkit-compare .meta, .evalkit-compare .none, .evalkit-compare .thread { color: #656d76; }
.evalkit-compare .order-note { color: #656d76; font-size: .8em; font-style: italic; }
.evalkit-compare table { border-collapse: collapse; }
.evalkit-compare th, .evalkit-compare td { border-bottom: 1px solid #d0d7de; padding: .3rem .5rem;
  text-align: left; vertical-align: top; }
.evalkit-compare th { background: #f6f8fa; }
.evalkit-compare td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.evalkit-compare td.up { color: #1a7f37; font-weight: 600; }
.evalkit-compare td.down { color: #cf222e; font-weight: 600; }
.evalkit-compare tr.status-row th, .evalkit-compare tr.status-row td { border-top: 2px solid #d0d7de; }
.evalkit-compare .text, .evalkit-compare .diff { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 10em;
  overflow: auto; max-width: 40rem; }
.evalkit-compare .diff del { background: #ffebe9; color: #82071e; }
.evalkit-compare .diff ins { background: #dafbe1; color: #044f1e; text-decoration: none; }
.evalkit-compare .banner { border-left: 6px solid #d4a000; background: #fff8e1; padding: .5rem .8rem; margin: .5rem 0; }
"""


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


def _rows(c: Any) -> list[dict[str, Any]]:
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
                "name": "row status" if name == STATUS_ROW else cut(name, 200),
                "is_status": name == STATUS_ROW,
                "cells": [{"text": t, "cls": css} for t, css in cells],
            }
        )
    return rows


def _group(frame: pd.DataFrame, ident: str, title: str, what: str, max_rows: int) -> dict[str, Any]:
    shown = frame.head(max_rows)
    rows = [
        {
            "item": int(row.item),
            "label": item_label(row.item, row.turn),
            "thread": cut(row.thread, 200),
            "status_a": cut(row.status_a, 40) or "\u2013",
            "status_b": cut(row.status_b, 40) or "\u2013",
            "changes": cut(row.changes, TEXT_LIMIT),
            "prompt": cut(row.prompt, TEXT_LIMIT),
            "diff": word_diff(cut(row.response_a, TEXT_LIMIT), cut(row.response_b, TEXT_LIMIT)),
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
    c: Any,
    max_rows: int = 500,
    *,
    roles: tuple[str, str] = ("A", "B"),
    notices: bool = False,
) -> dict[str, Any]:
    """What the comparison templates show of the :class:`~evalkit.analysis.comparison.Comparison` ``c``: plain
    values (the templates escape them); at most ``max_rows`` rows per list.

    ``roles`` name the runs in the facts line ("A (baseline)"...); ``notices`` puts the comparison's notices
    (:attr:`Comparison.notices`) inside the section, for views that do not show them as banners."""
    not_compared = []
    if c.only_a:
        not_compared.append("only in A: " + ", ".join(cut(n, 200) for n in c.only_a))
    if c.only_b:
        not_compared.append("only in B: " + ", ".join(cut(n, 200) for n in c.only_b))
    method = (
        "On paired rows only; errors are left out of the rates and counted apart. McNemar's exact test on the "
        "discordant pairs decides the pass-rate change: its interval is the exact interval of those pairs, so it "
        f"excludes 0 exactly when p < {1 - c.confidence:g}. The paired bootstrap interval ({c.resamples:,} "
        f"resamples, seed {int(c.seed)}) decides the mean-score change by excluding 0. A delta is coloured only "
        f"when its test says so and at least {MIN_PAIRS} rows are paired. Row status: pass versus anything else."
    )
    unpaired = [
        {
            "label": item_label(r.item, r.turn),
            "reason": cut(r.reason, 100),
            "prompt_a": cut(r.prompt_a, TEXT_LIMIT),
            "prompt_b": cut(r.prompt_b, TEXT_LIMIT),
        }
        for r in c.unpaired.head(max_rows).itertuples(index=False)
    ]
    return {
        "label_a": c.label_a,
        "label_b": c.label_b,
        "role_a": roles[0],
        "role_b": roles[1],
        "named_above": False,  # True where the page above already names A and B and the paired rows
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


def notebook_html(c: Any, max_rows: int = 20) -> str:
    """The comparison in a notebook (``Comparison._repr_html_``): notices, deltas, changed and unpaired rows,
    with :data:`CSS`; no script."""
    context = comparison_context(c, max_rows, notices=True)
    parts = [
        render("comparison_deltas.html.j2", comparison=context),
        render("comparison_changes.html.j2", comparison=context),
    ]
    return str(Markup("<div class='evalkit-compare'><style>{}</style>{}{}</div>").format(Markup(CSS), *parts))
