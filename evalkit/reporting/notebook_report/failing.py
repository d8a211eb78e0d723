"""The report's Failing rows section: the rows whose status is not pass, and what failed in each.

:func:`failing_items` picks the first rows (in run order) that failed, partially passed or errored, and says for
each which evaluators failed or errored, with score, threshold and reason (or the error); :func:`failing_html`
shows them as a table. Only the listed rows are formatted, so a 100,000-row run costs no more than a small one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from markupsafe import Markup

from evalkit.analysis.summaries import scored_evaluators
from evalkit.documents.columns import score_column
from evalkit.reporting.fragments import render
from evalkit.reporting.inline import asset
from evalkit.reporting.notebook_report.formatting import FAILING_LIMIT, missing, num

FAILING_COLUMNS = ("item", "turn", "thread", "status", "error", "failed", "prompt", "response", "expected")


def failing_items(run: pd.DataFrame, limit: int = FAILING_LIMIT) -> tuple[pd.DataFrame, int]:
    """The first ``limit`` rows whose status is not pass (fail, partial, error), and how many there are.

    Columns :data:`FAILING_COLUMNS`; ``failed`` says which evaluators failed or errored, one line each, with the
    score, threshold and reason (or the error). Only the listed rows are formatted, so a 100,000-row run costs
    no more than a small one.
    """
    if "status" not in run.columns:
        return pd.DataFrame(columns=list(FAILING_COLUMNS)), 0
    status = run["status"].to_numpy(dtype=object)
    failing = np.flatnonzero(np.asarray(pd.notna(status) & (status != "pass"), dtype=bool))
    picked = failing[: max(0, limit)]
    rows = run.iloc[picked]
    lines: list[list[str]] = [[] for _ in range(len(picked))]
    for ev in scored_evaluators(run):
        key = ev["key"]
        if f"{key}_result" not in rows.columns:
            continue
        results = rows[f"{key}_result"].to_numpy(dtype=object)
        hit = np.flatnonzero(np.asarray((results == "fail") | (results == "error"), dtype=bool))
        if not len(hit):
            continue
        name = str(ev.get("name", key))
        column = score_column(key)
        scores = rows[column].to_numpy(dtype=object) if column in rows.columns else None
        thresholds = rows[f"{key}_threshold"].to_numpy() if f"{key}_threshold" in rows.columns else None
        for j in hit.tolist():
            if results[j] == "error":
                why = _first(rows, f"{key}_error", j)
                code = _first(rows, f"{key}_code", j)
                line = f"{name}: error" + (f" ({code})" if code else "") + (f": {why}" if why else "")
            else:
                parts = []
                if scores is not None and not missing(scores[j]):
                    parts.append(f"score {num(scores[j])}")
                if thresholds is not None and not missing(thresholds[j]):
                    parts.append(f"threshold {num(thresholds[j])}")
                reason = _first(rows, f"{key}_reason", j)
                line = (
                    f"{name}: fail"
                    + (f" ({', '.join(parts)})" if parts else "")
                    + (f": {reason}" if reason else "")
                )
            lines[j].append(line)
    codes = _column(rows, "error_code")
    messages = _column(rows, "error_message")
    frame = pd.DataFrame(
        {
            "item": _column(rows, "item") if "item" in rows.columns else picked,
            "turn": pd.array(rows["turn"], dtype="Int64") if "turn" in rows.columns else [pd.NA] * len(rows),
            "thread": _column(rows, "thread"),
            "status": status[picked],
            "error": [f"{c}: {m}" if c and m else (c or m or None) for c, m in zip(codes, messages)],
            "failed": ["\n".join(parts) for parts in lines],
            "prompt": _column(rows, "prompt"),
            "response": _column(rows, "response"),
            "expected": _column(rows, "expected_response"),
        },
        columns=list(FAILING_COLUMNS),
    )
    return frame.reset_index(drop=True), int(len(failing))


def _column(rows: pd.DataFrame, name: str) -> list:
    if name not in rows.columns:
        return [None] * len(rows)
    return [None if missing(v) else v for v in rows[name].tolist()]


def _first(rows: pd.DataFrame, column: str, position: int) -> str | None:
    if column not in rows.columns:
        return None
    value = rows[column].iat[position]
    return None if missing(value) else str(value)


def failing_html(run: pd.DataFrame, limit: int = FAILING_LIMIT) -> str:
    """:func:`failing_items` as an HTML table (``section_failing.html.j2``: every text escaped and cut), with
    the count of the rest. The table carries its style (``assets/failing_rows.css``), so it reads the same in
    JupyterLab as on the report page: left-aligned, one line per failed evaluator, reasons wrapped in full."""
    frame, total = failing_items(run, limit)
    rows = list(frame.itertuples(index=False))
    return str(
        render("section_failing.html.j2", rows=rows, total=total, css=Markup(asset("failing_rows.css")))
    )
