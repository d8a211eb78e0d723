"""The report's Comparison with the baseline section: per-evaluator deltas, then the rows that changed.

Both read a :class:`~evalkit.analysis.comparison.Comparison` (B = this run, A = the baseline) computed by the
notebook with :func:`evalkit.compare`; the definitions (paired rows, intervals, McNemar) are those of
:mod:`evalkit.analysis.comparison`. Without a baseline the section says so instead.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from evalkit.analysis.summaries import STATUS_ROW
from evalkit.reporting.notebook_report.formatting import (
    DASH,
    FAILING_LIMIT,
    esc,
    item_cell,
    more_note,
    num,
    pct,
    status_badge,
)

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.analysis.comparison import Comparison


def comparison_html(comparison: Comparison | None) -> str:
    """The baseline comparison's per-evaluator deltas (B = this run minus A = the baseline), as an HTML table.

    A note instead when there is no baseline. Definitions are those of :mod:`evalkit.analysis.comparison`.
    """
    if comparison is None:
        return "<p class='none'>No baseline given (notebook parameter <code>baseline_dir</code>, or <code>--baseline</code>).</p>"
    c = comparison
    level = f"{c.confidence:.0%}"
    heads = (
        "evaluator",
        "judged",
        "pass A",
        "pass B",
        "Δ pass (pp)",
        f"{level} interval",
        "p (McNemar)",
        "mean A",
        "mean B",
        "Δ mean",
        "regressed",
        "improved",
    )
    lines = []
    for name, r in c.evaluators.iterrows():
        status = name == STATUS_ROW

        def pp(v: float) -> str:
            return DASH if not math.isfinite(v) else f"{v * 100:+.1f}"

        def signed(v: float) -> str:
            return DASH if not math.isfinite(v) else f"{v:+.3f}"

        low, high = r["pass_rate_low"], r["pass_rate_high"]
        css = (
            " up" if math.isfinite(low) and low > 0 else (" down" if math.isfinite(high) and high < 0 else "")
        )
        cells = [
            f"{int(r['judged']):,}",
            pct(r["pass_rate_a"]),
            pct(r["pass_rate_b"]),
            pp(r["pass_rate_delta"]),
            f"[{pp(low)}, {pp(high)}]",
            DASH if not math.isfinite(r["p_value"]) else f"{r['p_value']:.3g}",
            num(r["mean_a"]),
            num(r["mean_b"]),
            signed(r["mean_delta"]),
            f"{int(r['regressed']):,}",
            f"{int(r['improved']):,}",
        ]
        body = "".join(f"<td class='num{css if i == 3 else ''}'>{cell}</td>" for i, cell in enumerate(cells))
        label = "row status" if status else esc(name, 200)
        lines.append(f"<tr{' class=status-row' if status else ''}><th scope='row'>{label}</th>{body}</tr>")
    head = "".join(f"<th>{h}</th>" for h in heads)
    facts = (
        f"A (baseline) = {esc(c.label_a, 200)} · B (this run) = {esc(c.label_b, 200)} · {c.paired:,} paired "
        f"rows · {len(c.unpaired):,} unpaired (only in one run, or the prompt changed)"
    )
    table = (
        f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"
        "</div><p class='meta'>On paired rows only; errors are left out of pass rates. Intervals: paired "
        f"bootstrap, {c.resamples:,} resamples; a coloured Δ has an interval that excludes 0.</p>"
    )
    if c.evaluators.empty:
        table = "<p class='none'>No evaluator is scored in both runs.</p>"
    only = ""
    if c.only_a or c.only_b:
        names = [f"only in A: {', '.join(c.only_a)}"] if c.only_a else []
        names += [f"only in B: {', '.join(c.only_b)}"] if c.only_b else []
        only = f"<p class='meta'>Not compared ({esc('; '.join(names), 1000)}).</p>"
    return f"<p class='meta'>{facts}</p>{table}{only}"


def changes_html(comparison: Comparison | None, limit: int = FAILING_LIMIT) -> str:
    """The rows that regressed (pass → fail / error) and improved, ``limit`` each, with how they changed.

    Empty when there is no baseline (:func:`comparison_html` says so already).
    """
    if comparison is None:
        return ""
    c = comparison
    return (
        f"<h3>Regressed ({len(c.regressed):,})</h3>{_changes_html(c.regressed, limit, 'regressed')}"
        f"<h3>Improved ({len(c.improved):,})</h3>{_changes_html(c.improved, limit, 'improved')}"
    )


def _changes_html(frame: pd.DataFrame, limit: int, what: str) -> str:
    if frame.empty:
        return f"<p class='none'>No {what} rows.</p>"
    shown = frame.head(limit)
    head = "".join(
        f"<th>{h}</th>"
        for h in ("item", "status A → B", "what changed", "prompt", "response A", "response B")
    )
    lines = [
        f"<tr><td>{item_cell(row.item, row.turn, row.thread)}</td>"
        f"<td>{status_badge(row.status_a)} → {status_badge(row.status_b)}</td>"
        f"<td><div class='text'>{esc(row.changes)}</div></td>"
        f"<td><div class='text'>{esc(row.prompt)}</div></td>"
        f"<td><div class='text'>{esc(row.response_a)}</div></td>"
        f"<td><div class='text'>{esc(row.response_b)}</div></td></tr>"
        for row in shown.itertuples(index=False)
    ]
    return (
        f"<div class='scroll'><table class='rows'><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody>"
        f"</table></div>{more_note(len(frame), len(shown), what + ' rows')}"
    )
