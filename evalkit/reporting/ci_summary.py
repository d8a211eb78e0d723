"""The Markdown summary of a run for a pull-request comment or a CI job summary (``--summary-md FILE``).

    text = summary_markdown(scored, title="Contoso HR", comparison=c, judge=..., report="out/report.html")

Sections, each short enough for a PR comment:

1. the headline: rows and their statuses, the overall pass rate, and the gate's verdict when there is a
   baseline (``no significant regression`` / ``regression in X`` / ``not tested`` when no evaluator could be
   tested, which is never shown as a pass);
2. **Pass rates** per evaluator (pass, fail, error; errors are left out of the rate as in ``evalkit.summary``);
3. **Against the baseline** (with ``--baseline`` / ``--fail-on-regression``): each evaluator's pass rate in
   both runs, the paired change with its interval, the paired test and its verdict
   (:mod:`evalkit.analysis.regression_gate`: McNemar's exact test, Holm-adjusted), and the comparison's
   notices (different documents, few shared rows);
4. **Worst items**: the ten rows that did worst (errors, then partial, then most failed evaluators, then the
   lowest mean score), each failing evaluator with its reason or error;
5. **Judge**: model, calls, cache hits and tokens as the run counted them;
6. where the full report is: a link when ``report_url`` is given, else the path.

Everything that comes from the agent, the judge or the document goes through
:func:`evalkit.reporting.markdown_text.inline` (no HTML, links, mentions or table breaks get through).

May import: ``evalkit.analysis`` (summaries, regression_gate, formatting), ``reporting.markdown_text``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.formatting import count, percent
from evalkit.analysis.pairing import column_texts
from evalkit.analysis.regression_gate import nothing_tested, verdicts
from evalkit.analysis.span_runs import SPAN_SOURCE
from evalkit.analysis.summaries import STATUS_ROW, numeric_scores, scored_evaluators, status_counts, summary
from evalkit.reporting.markdown_text import inline

__all__ = ["LIMIT", "WORST", "is_span_run", "summary_markdown", "worst_rows"]

#: How many of the worst rows the summary lists, and how many failing evaluators of each.
WORST = 10
PROBLEMS_PER_ROW = 5
#: Most characters of the summary: GitHub refuses comments over 65,536.
LIMIT = 60_000
_STATUS_RANK = {"error": 0, "partial": 1, "fail": 2, "pass": 3}


def summary_markdown(
    frame: pd.DataFrame,
    *,
    title: str,
    comparison: Any = None,
    baseline: str | None = None,
    judge: dict | None = None,
    report: str | None = None,
    report_url: str | None = None,
    notices: list | None = None,
) -> str:
    """The Markdown text (see the module docstring); ``baseline`` names the baseline run in the text;
    ``notices`` replace the comparison's own (a span run has no document whose sha256 could be checked)."""
    found = verdicts(comparison) if comparison is not None else None
    parts = [f"## evalkit: {inline(title, 120)}", "", _headline(frame, found, baseline), ""]
    parts += _pass_rates(frame)
    if comparison is not None:
        notes = comparison.notices if notices is None else notices
        parts += _against_baseline(comparison, found, baseline, notes)
    parts += _worst(frame)
    parts += _judge(judge)
    if report_url:
        parts += [f"Full report: [report.html]({_url(report_url)})", ""]
    elif report:
        parts += [
            f"Full report: {inline(report, 300)} (in the run's results folder or the job's artifacts)",
            "",
        ]
    text = "\n".join(parts).rstrip() + "\n"
    if len(text) > LIMIT:  # cut at a line, never inside an escape
        cut = text.rfind("\n", 0, LIMIT - 200)
        text = (
            text[:cut]
            + "\n\n(Summary cut short here to fit a pull-request comment: the rest is in report.html.)\n"
        )
    return text


def _url(url: str) -> str:
    """A link target we can vouch for: http(s) only, with the characters that end a link percent-encoded."""
    from urllib.parse import quote

    if not url.lower().startswith(("https://", "http://")):
        return "#"
    return quote(url, safe=":/?&=%#~+,;@!*'-._")  # $ too: no math delimiter


def _headline(frame: pd.DataFrame, found, baseline: str | None) -> str:
    counts = status_counts(frame)
    total = counts["total"]
    rate = counts["pass"] / total if total else math.nan
    line = (
        f"**{count(total, 'row')}**: {counts['pass']} pass, {counts['fail']} fail, {counts['partial']} partial, "
        f"{counts['error']} error (pass rate **{percent(rate)}**)."
    )
    if found is None:
        return line
    drops = [v for v in found if v.regression]
    against = inline(baseline or "the baseline", 120)
    why = nothing_tested(found)
    if why:  # never a pass mark for a gate that tested nothing
        return f"{line} :grey_question: **Not tested** against {against}: {inline(why, 300)}."
    if drops:
        names = ", ".join(inline(v.evaluator, 80) for v in drops)
        return f"{line} :x: **Significant regression** against {against} in {names}."
    return f"{line} :white_check_mark: No significant regression against {against}."


def _pass_rates(frame: pd.DataFrame) -> list[str]:
    table = summary(frame)
    rows = [n for n in table.index if n != STATUS_ROW]
    if not rows:
        return []
    out = [
        "### Pass rates",
        "",
        "| Evaluator | Pass rate | Pass | Fail | Error |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in rows:
        r = table.loc[name]
        out.append(
            f"| {inline(name, 80)} | {percent(r['pass_rate'])} | {int(r['passed'])} | {int(r['failed'])} "
            f"| {int(r['errored'])} |"
        )
    return [*out, ""]


def _points(value: float) -> str:
    return f"{value * 100:+.1f}" if math.isfinite(value) else "n/a"


def _against_baseline(comparison: Any, found, baseline: str | None, notices: list) -> list[str]:
    level = f"{comparison.confidence:.0%}"
    out = [
        f"### Against the baseline {inline(baseline or comparison.label_a, 120)}",
        "",
        f"{count(comparison.paired, 'paired row')}. Change in pass-rate points with its {level} interval; "
        "the test is McNemar's exact test on the pairs that changed, Holm-adjusted over the evaluators.",
        "",
        "| Evaluator | Baseline | This run | Change | Interval | Pass → fail | Fail → pass | Test | Verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    marks = {"significant drop": ":x: ", "significant rise": ":arrow_up: "}
    for v in found:
        interval = f"{_points(v.low)} to {_points(v.high)}" if math.isfinite(v.low) else "n/a"
        out.append(
            f"| {inline(v.evaluator, 80)} | {percent(v.rate_a)} | {percent(v.rate_b)} | {_points(v.delta)} "
            f"| {interval} | {v.pass_to_fail} | {v.fail_to_pass} | {v.test_text()} "
            f"| {marks.get(v.kind, '')}{v.kind} |"
        )
    for _level, heading, text in notices:
        out += ["", f"> **{inline(heading, 80)}** {inline(text, 400)}"]
    if comparison.only_a or comparison.only_b:
        only = [f"only in the baseline: {', '.join(inline(n, 60) for n in comparison.only_a)}"] * bool(
            comparison.only_a
        )
        only += [f"only in this run: {', '.join(inline(n, 60) for n in comparison.only_b)}"] * bool(
            comparison.only_b
        )
        out += ["", f"Evaluators not compared ({'; '.join(only)})."]
    return [*out, ""]


def _row_label(frame: pd.DataFrame, position: int) -> str:
    item = frame["item"].iloc[position] if "item" in frame.columns else position
    turn = frame["turn"].iloc[position] if "turn" in frame.columns else None
    prompt = column_texts(frame, "prompt", "")[position]
    if is_span_run(frame):  # the target (session / trace / span) is the label
        return inline(prompt, 160)
    where = f"item {int(item)}" + ("" if turn is None or pd.isna(turn) else f", turn {int(turn)}")
    return f"{where}: {inline(prompt, 100)}" if prompt else where


def is_span_run(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is a ``spans eval`` run (:mod:`evalkit.analysis.span_runs`), not a document's run."""
    meta = frame.attrs.get("evalkit") or {}
    return isinstance(meta, dict) and meta.get("source") == SPAN_SOURCE


def worst_rows(frame: pd.DataFrame, limit: int = WORST) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """``[(position, [(evaluator, result, reason or error), ...]), ...]``: the ``limit`` rows that did worst
    and did not pass (order in the module docstring), each with its failing or errored evaluators."""
    status = column_texts(frame, "status", "pass")
    specs = scored_evaluators(frame)
    failed = np.zeros(len(frame), dtype=int)
    scores, columns = [], []
    for ev in specs:
        result = column_texts(frame, f"{ev['key']}_result")
        failed += (result == "fail") | (result == "error")
        columns.append((str(ev.get("name", ev["key"])), result, ev["key"]))
        if ev["key"] in frame.columns:
            scores.append(numeric_scores(frame[ev["key"]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows without any score: mean of nothing
        mean = np.nanmean(np.vstack(scores), axis=0) if scores else np.zeros(len(frame))
    mean = np.where(np.isnan(mean), np.inf, mean)
    rank = pd.Series(status).map(_STATUS_RANK).fillna(2).to_numpy()
    candidates = np.flatnonzero(rank < _STATUS_RANK["pass"])
    order = sorted(candidates.tolist(), key=lambda i: (rank[i], -failed[i], mean[i], i))[:limit]
    out = []
    for position in order:
        problems = []
        for name, result, key in columns:
            if result[position] in ("fail", "error"):
                column = f"{key}_error" if result[position] == "error" else f"{key}_reason"
                why = frame[column].iloc[position] if column in frame.columns else None
                problems.append((name, result[position], "" if why is None or why != why else str(why)))
        if not problems and status[position] == "error":
            why = frame["error_message"].iloc[position] if "error_message" in frame.columns else None
            problems.append(("(row)", "error", "" if why is None or why != why else str(why)))
        out.append((position, problems))
    return out


def _worst(frame: pd.DataFrame) -> list[str]:
    rows = worst_rows(frame)
    if not rows:
        return ["### Worst items", "", "Every row passed.", ""]
    out = [
        f"### Worst items ({len(rows)} of {count(len(frame), 'row')})",
        "",
        "| Item | Status | Evaluator | Reason |",
        "|---|---|---|---|",
    ]
    status = column_texts(frame, "status", "")
    for position, problems in rows:
        label = _row_label(frame, position)
        more = len(problems) - PROBLEMS_PER_ROW
        if more > 0:
            problems = [*problems[:PROBLEMS_PER_ROW], (f"and {more} more", "", "see report.html")]
        for index, (name, result, reason) in enumerate(problems or [("", "", "")]):
            first = index == 0
            out.append(
                f"| {label if first else ''} | {inline(status[position], 20) if first else ''} "
                f"| {inline(name, 80)} {'(' + result + ')' if result else ''} | {inline(reason, 300)} |"
            )
    return [*out, ""]


def _judge(judge: dict | None) -> list[str]:
    if not judge:
        return []
    parts = []
    if judge.get("model"):
        parts.append(inline(judge["model"], 120))
    if judge.get("calls") is not None:
        parts.append(count(int(judge["calls"]), "call"))
    if judge.get("cache_hits") is not None:
        parts.append(f"{int(judge['cache_hits'])} from cache")
    if judge.get("prompt_tokens") is not None or judge.get("completion_tokens") is not None:
        parts.append(
            f"{int(judge.get('prompt_tokens') or 0):,} prompt + {int(judge.get('completion_tokens') or 0):,} "
            "completion tokens"
        )
    if "cost" in judge:
        from evalkit.judges.prices import cost_text

        parts.append(cost_text(judge["cost"]))
    return ["### Judge", "", ", ".join(parts) + ".", ""] if parts else []
