"""How a :class:`~evalkit.analysis.calibration.Calibration` and a :class:`~evalkit.analysis.noise.JudgeNoise` read
in a notebook: HTML tables from autoescaped Jinja2 templates (``templates/calibration.html.j2``,
``noise.html.j2``; no script), and the number format their reprs share.

- :func:`calibration_html`: metrics with intervals per judge, then the worst disagreements.
- :func:`noise_html`: spread, flips, pass^k and pass@k per evaluator, then the noisiest rows.

Only formatting lives here; the numbers come from :mod:`evalkit.analysis.calibration` and
:mod:`evalkit.analysis.noise`. Every text from a run or a label is escaped and cut to :data:`TEXT_LIMIT`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from evalkit.analysis.agreement import METRICS
from evalkit.analysis.formatting import count
from evalkit.analysis.templating import cut, render

__all__ = ["CSS", "calibration_html", "fmt", "noise_html"]

TEXT_LIMIT = 600
DASH = "\u2013"

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


def fmt(value: Any, digits: int = 2) -> str:
    """A number with ``digits`` decimals; a dash for anything missing or not a number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return DASH
    return DASH if not math.isfinite(number) else f"{number:.{digits}f}"


def _shown(value: Any) -> str:
    """A judge or human value for display: whole-number scores without ".0"."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return cut(value, TEXT_LIMIT)


def _where_label(item: Any, turn: Any) -> str:
    return f"#{item}" if turn is None or turn is pd.NA else f"#{item} · turn {turn}"


def calibration_html(c: Any, *, max_rows: int) -> str:
    """The notebook view of a calibration (``templates/calibration.html.j2``): one row per judge, then at most
    ``max_rows`` disagreements."""
    rows = [
        {
            "name": name,
            "on": r["on"],
            "pairs": f"{int(r['n'])} / {int(r['labels'])}",
            "metrics": [
                f"{fmt(r[metric])} [{fmt(r[f'{metric}_low'])}, {fmt(r[f'{metric}_high'])}]"
                for metric in METRICS
            ],
        }
        for name, r in c.table.iterrows()
    ]
    shown = c.disagreements.head(max_rows)
    worst = [
        {
            "judge": row.judge,
            "where": _where_label(row.item, row.turn),
            "versus": f"{_shown(row.judge_value)} vs {_shown(row.human_value)}",
            "prompt": row.prompt,
            "response": row.response,
            "judge_reason": row.judge_reason,
            "human_note": row.human_note,
        }
        for row in shown.itertuples(index=False)
    ]
    heads = (
        "judge",
        "on",
        "pairs / labels",
        "exact",
        "within one",
        "kappa",
        "Spearman",
        "bias (judge - human)",
    )
    return str(
        render(
            "calibration.html.j2",
            css=Markup(CSS),
            heads=heads,
            rows=rows,
            level=f"{c.confidence:.0%}",
            resamples=f"{c.resamples:,}",
            seed=int(c.seed),
            total=f"{len(c.disagreements):,}",
            worst=worst,
            more=len(c.disagreements) - len(shown),
        )
    )


def noise_html(noise: Any, *, max_rows: int) -> str:
    """The notebook view of judge noise (``templates/noise.html.j2``): one row per evaluator, then at most
    ``max_rows`` noisiest rows."""
    columns = ("mean_spread", "max_spread", "mean_std", "flip_rate", "pass_hat_k", "pass_rate", "pass_at_k")
    rows = [
        {"name": name, "cells": [f"{int(r['complete'])} / {int(r['rows'])}"] + [fmt(r[c]) for c in columns]}
        for name, r in noise.table.iterrows()
    ]
    k = noise.samples
    heads = ("judge", "complete / rows", "mean spread", "max spread", "mean std", "flip rate", f"pass^{k}",
             "pass rate", f"pass@{k}")  # fmt: skip
    noisy = noise.rows[(noise.rows["spread"].fillna(0) > 0) | noise.rows["flip"]]
    noisy = noisy.sort_values("spread", ascending=False, kind="stable", na_position="last").head(max_rows)
    worst = [
        {
            "judge": row.judge,
            "where": _where_label(row.item, row.turn),
            "scores": ", ".join(fmt(s, 1) for s in row.scores),
            "results": ", ".join(str(x) for x in row.results),
            "prompt": row.prompt,
        }
        for row in noisy.itertuples(index=False)
    ]
    unmatched = (
        f" {count(noise.unmatched, 'row')} missing from some sample {'was' if noise.unmatched == 1 else 'were'} "
        "left out."
        if noise.unmatched
        else ""
    )
    return str(
        render(
            "noise.html.j2", css=Markup(CSS), heads=heads, rows=rows, k=k, worst=worst, unmatched=unmatched
        )
    )
