"""How a :class:`~evalkit.analysis.calibration.Calibration` and a :class:`~evalkit.analysis.noise.JudgeNoise` read
in a notebook: escaped HTML tables (no script), and the number format their reprs share.

- :func:`calibration_html`: metrics with intervals per judge, then the worst disagreements.
- :func:`noise_html`: spread, flips, pass^k and pass@k per evaluator, then the noisiest rows.

Only formatting lives here; the numbers come from :mod:`evalkit.analysis.calibration` and
:mod:`evalkit.analysis.noise`. Every text from a run or a label is escaped and cut to :data:`TEXT_LIMIT`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.agreement import METRICS

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


def calibration_html(c: Any, *, max_rows: int) -> str:
    """The notebook view of a calibration: one row per judge, then at most ``max_rows`` disagreements."""
    level = f"{c.confidence:.0%}"
    lines = []
    for name, r in c.table.iterrows():
        cells = [f"<th scope='row'>{_esc(name, 200)}</th>", f"<td>{_esc(r['on'])}</td>"]
        cells.append(f"<td class='num'>{int(r['n'])} / {int(r['labels'])}</td>")
        for metric in METRICS:
            value = f"{fmt(r[metric])} [{fmt(r[f'{metric}_low'])}, {fmt(r[f'{metric}_high'])}]"
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


def noise_html(noise: Any, *, max_rows: int) -> str:
    """The notebook view of judge noise: one row per evaluator, then at most ``max_rows`` noisiest rows."""
    lines = []
    for name, r in noise.table.iterrows():
        cells = [
            f"<th scope='row'>{_esc(name, 200)}</th>",
            f"<td class='num'>{int(r['complete'])} / {int(r['rows'])}</td>",
            f"<td class='num'>{fmt(r['mean_spread'])}</td>",
            f"<td class='num'>{fmt(r['max_spread'])}</td>",
            f"<td class='num'>{fmt(r['mean_std'])}</td>",
            f"<td class='num'>{fmt(r['flip_rate'])}</td>",
            f"<td class='num'>{fmt(r['pass_hat_k'])}</td>",
            f"<td class='num'>{fmt(r['pass_rate'])}</td>",
            f"<td class='num'>{fmt(r['pass_at_k'])}</td>",
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
        f"<td class='num'>{_esc(', '.join(fmt(s, 1) for s in row.scores))}</td>"
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
