"""How a :class:`~evalkit.analysis.comparison.Comparison` reads: the plain-text table and the notebook HTML view.

- :func:`format_table`: the per-evaluator deltas as aligned text (``Comparison.table()``, ``evalkit compare``).
- :func:`body_html`: the deltas table and the regressed / improved / unpaired lists as an HTML fragment (every
  text from the runs escaped, no script), with its :data:`CSS`; ``Comparison._repr_html_`` shows it in notebooks
  and :mod:`evalkit.reporting.comparison_page` wraps it, with the delta charts, into the standalone page.

Only formatting lives here: no numbers are computed, no file is written, plotly is not needed.
"""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd

from evalkit.analysis.pairing import ONLY_A, ONLY_B, PROMPT_CHANGED
from evalkit.analysis.statistics import MIN_PAIRS
from evalkit.analysis.summaries import STATUS_ROW

__all__ = ["CSS", "TEXT_LIMIT", "body_html", "esc", "format_table"]

#: Longest text shown per cell in the HTML views; :attr:`Comparison.regressed` etc. keep the full texts.
TEXT_LIMIT = 2000
ELLIPSIS = "\u2026"


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


def format_table(comparison: Any) -> str:
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


def esc(value: Any, limit: int = TEXT_LIMIT) -> str:
    """A cell as escaped HTML text: missing → "", cut to ``limit`` characters (marked with …)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[:limit] + ELLIPSIS
    return html.escape(text, quote=True)


def _delta_class(low: float, high: float) -> str:
    """``up`` / ``down`` by the side of 0 the interval is on (called only for a significant change)."""
    if math.isfinite(low) and low > 0:
        return " up"
    if math.isfinite(high) and high < 0:
        return " down"
    return ""


def _evaluators_html(c: Any) -> str:
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
        label = "row status" if status else esc(name, 200)
        pass_cls = _delta_class(r["pass_rate_low"], r["pass_rate_high"]) if r.get("significant") else ""
        mean_cls = _delta_class(r["mean_low"], r["mean_high"]) if r.get("mean_significant") else ""
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
        "both runs (errors left out, counted apart). <b>McNemar's exact test decides the pass-rate change</b>: "
        "its interval is the exact interval of the discordant pairs, so it excludes 0 exactly when p &lt; "
        f"{1 - c.confidence:g}. Mean scores: paired bootstrap interval ({c.resamples:,} resamples, seed "
        f"{int(c.seed)}), which decides by excluding 0. A delta is coloured only when its test says so and at "
        f"least {MIN_PAIRS} rows are paired. Row status: pass versus anything else, every paired row.</p>"
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
            where += f"<div class='meta'>{esc(row.thread, 200)}</div>"
        lines.append(
            f"<tr><td>{where}</td><td>{esc(row.status_a, 40)} → {esc(row.status_b, 40)}</td>"
            f"<td><div class='text'>{esc(row.changes)}</div></td>"
            f"<td><div class='text'>{esc(row.prompt)}</div></td>"
            f"<td><div class='text'>{esc(row.response_a)}</div></td>"
            f"<td><div class='text'>{esc(row.response_b)}</div></td></tr>"
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
        f"<tr><td>{html.escape(_turn_label(row.item, row.turn))}</td><td>{esc(row.reason)}</td>"
        f"<td><div class='text'>{esc(row.prompt_a)}</div></td><td><div class='text'>{esc(row.prompt_b)}</div></td>"
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


def body_html(c: Any, *, max_rows: int, figures: str = "") -> str:
    """The comparison as an HTML fragment: the runs, the deltas table, ``figures`` (markup placed after the
    table), then the regressed, improved and unpaired rows, at most ``max_rows`` each."""
    facts = (
        f"A = {esc(c.label_a, 200)} · B = {esc(c.label_b, 200)} · {c.paired:,} paired rows · "
        f"{len(c.unpaired):,} unpaired"
    )
    only = ""
    if c.only_a or c.only_b:
        parts = []
        if c.only_a:
            parts.append("only in A: " + ", ".join(esc(n, 200) for n in c.only_a))
        if c.only_b:
            parts.append("only in B: " + ", ".join(esc(n, 200) for n in c.only_b))
        only = f"<p class='meta'>Not compared ({'; '.join(parts)}).</p>"
    return (
        f"<p class='meta'>{facts}</p><h2>Evaluators</h2>{_evaluators_html(c)}{only}{figures}"
        f"<h2>Regressed ({len(c.regressed):,})</h2>{_changes_html(c.regressed, max_rows, 'regressed')}"
        f"<h2>Improved ({len(c.improved):,})</h2>{_changes_html(c.improved, max_rows, 'improved')}"
        f"<h2>Unpaired ({len(c.unpaired):,})</h2>{_unpaired_html(c.unpaired, max_rows)}"
    )
