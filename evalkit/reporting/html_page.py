"""report.html: one standalone, offline HTML file that shows a scored case table.

Layout: a header (title, source, row count), the row-status counts (clickable filters), the per-evaluator
summary table from :func:`evalkit.analysis.summaries.summary`, and the items table. This module assembles the
page; :mod:`evalkit.reporting.page_data` makes the embedded columns, :mod:`evalkit.reporting.inline` the safe
JSON and CSP hashes, and ``assets/run_page.css`` / ``assets/run_page.js`` are the page's style and script.

Why it is built this way:

* **Scale.** A run can have 100,000 rows, so the items are not rendered as HTML on the server. They are embedded
  once, column-wise, as JSON in ``<script type="application/json" id="evalkit-data">`` and a small inline script
  renders one page at a time (50 rows by default) with a status filter, an evaluator-result filter and a text
  search. Long texts are cut to ``text_limit`` characters (marked with "…") so the file size stays bounded;
  the full texts are in results.json / results.csv.
* **Untrusted content.** Prompts, responses, reasons, errors and metadata are agent or judge output. The
  embedded JSON escapes ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\u003c`` etc., so no value can close the
  script element or open a comment; the client inserts values with ``textContent`` only (never HTML parsing);
  everything rendered on the server (title, evaluator names, numbers) goes through :func:`html.escape`. As
  defence in depth a Content-Security-Policy allows only this file's own script and style (by hash) and no
  network access at all, so even an injection that slipped through could neither run nor phone home.
* **Offline.** CSS and JS are inline and written for this report; there is no external resource.
* **Atomic.** The file is streamed column by column into a temporary file that replaces ``path`` only when
  complete (:func:`evalkit.documents.atomic.atomic_write`).
"""

from __future__ import annotations

import html
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.analysis.formatting import count, percent, plural
from evalkit.analysis.summaries import STATUS_ROW, STATUSES, scored_evaluators, status_counts, summary
from evalkit.documents.atomic import atomic_write
from evalkit.documents.case_table import document_title
from evalkit.reporting.inline import asset, csp_hash, script_safe_json
from evalkit.reporting.page_data import TEXT_LIMIT, page_columns

#: The page's style and script (``assets/``), inlined into every report.html.
CSS = asset("run_page.css")
JS = asset("run_page.js")

CSP = (
    "default-src 'none'; "
    f"script-src {csp_hash(JS)}; style-src {csp_hash(CSS)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


def report_title(df: pd.DataFrame, title: str | None = None) -> str:
    """The report title: ``title``, else the document's ``metadata.name``, else the source file name."""
    return str(title) if title else document_title(df)


def _fmt_rate(value: float) -> str:
    if math.isnan(value):
        return "<td class='num'>\u2013</td>"
    return f"<td class='num'>{percent(value)}<meter min='0' max='1' value='{value:.4f}'></meter></td>"


def _fmt_mean(value: float) -> str:
    return "\u2013" if math.isnan(value) else f"{value:.3f}"


def _summary_html(df: pd.DataFrame) -> str:
    table = summary(df)
    if table.empty:
        return "<p class='none'>No evaluator results and no row status in this table.</p>"
    head = "".join(
        f"<th>{label}</th>"
        for label in (
            "evaluator",
            "asked",
            "passed",
            "failed",
            "errored",
            "partial",
            "pass rate",
            "mean score",
        )
    )
    lines = []
    for name, row in table.iterrows():
        css = " class='status-row'" if name == STATUS_ROW else ""
        label = "row status" if name == STATUS_ROW else html.escape(str(name))
        cells = "".join(
            f"<td class='num'>{int(row[c])}</td>" for c in ("asked", "passed", "failed", "errored", "partial")
        )
        lines.append(
            f"<tr{css}><th scope='row'>{label}</th>{cells}{_fmt_rate(float(row['pass_rate']))}"
            f"<td class='num'>{_fmt_mean(float(row['mean_score']))}</td></tr>"
        )
    note = (
        "<p class='meta'>Pass rate of an evaluator = passed / (passed + failed): errored rows are not in the "
        "rate, they are counted apart. Row status pass rate = passed / all rows.</p>"
    )
    return (
        f"<table class='summary'><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>{note}"
    )


def _counts_html(df: pd.DataFrame) -> str:
    counts = status_counts(df)
    buttons = [
        f"<button type='button' class='count' id='count-all' aria-pressed='true'>"
        f"<b>{counts['total']}</b>{plural(counts['total'], 'row')}</button>"
    ]
    for name in STATUSES:
        buttons.append(
            f"<button type='button' class='count {name}' id='count-{name}' aria-pressed='false'>"
            f"<b>{counts[name]}</b>{name}</button>"
        )
    return f"<div class='counts' role='group' aria-label='Row status counts'>{''.join(buttons)}</div>"


def _head_html(df: pd.DataFrame, title: str, evaluators: list[dict[str, Any]], limit: int) -> str:
    meta = df.attrs.get("evalkit") or {}
    source = meta.get("source") if isinstance(meta, dict) else None
    facts = [count(len(df), "row"), count(len(evaluators), "evaluator")]
    if source:
        # the file name only: a report gets shared, the local directory layout need not be
        facts.insert(0, f"source: {html.escape(Path(str(source)).name)}")
    facts_html = " \u00b7 ".join(facts)
    status_options = "".join(f"<option value='{s}'>{s}</option>" for s in STATUSES)
    cols = "<col class='c-item'><col class='c-status'><col><col><col>" + "<col class='c-eval'>" * len(
        evaluators
    )
    eval_heads = "".join(
        f"<th scope='col' title='key: {html.escape(str(ev['key']))}'>{html.escape(str(ev.get('name', ev['key'])))}"
        "</th>"
        for ev in evaluators
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="evalkit">
<title>{html.escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{html.escape(title)}</h1>
<p class="meta">{facts_html}</p>
</header>
<main>
<h2>Row status</h2>
{_counts_html(df)}
<h2>Evaluators</h2>
{_summary_html(df)}
<h2>Items</h2>
<div class="controls" id="controls" hidden>
<label>Status <select id="f-status"><option value="">all</option>{status_options}</select></label>
<label>Evaluator <select id="f-eval"><option value="">any result</option></select></label>
<label>Search <input type="search" id="f-query" placeholder="prompt, response, reason, error\u2026"></label>
<label>Per page <select id="f-size"><option>25</option><option selected>50</option><option>100</option>
<option>200</option></select></label>
<span id="f-count" class="meta" aria-live="polite"></span>
</div>
<noscript><p>The items table needs JavaScript; the summaries above do not.</p></noscript>
<div class="scroll">
<table class="items">
<colgroup>{cols}</colgroup>
<thead><tr><th scope="col">item / turn</th><th scope="col">status</th><th scope="col">prompt</th>
<th scope="col">response</th><th scope="col">expected</th>{eval_heads}</tr></thead>
<tbody id="items-body"></tbody>
</table>
</div>
<nav class="pager" id="pager" hidden aria-label="Pages">
<button type="button" id="p-first">\u00ab first</button><button type="button" id="p-prev">\u2039 previous</button>
<span id="p-label"></span>
<button type="button" id="p-next">next \u203a</button><button type="button" id="p-last">last \u00bb</button>
</nav>
</main>
<footer>Texts longer than {limit:,} characters are shortened here (\u2026); results.json and results.csv hold
them in full. Generated by evalkit; works offline.</footer>
"""


def write_html(
    df: pd.DataFrame, path: str | os.PathLike, title: str | None = None, *, text_limit: int = TEXT_LIMIT
) -> None:
    """Write the standalone report for the scored case table ``df`` to ``path``, atomically.

    ``title`` defaults to the document's ``metadata.name``, then the source file name (see
    :func:`report_title`). Texts are embedded cut to ``text_limit`` characters. Works on an unscored table too
    (no evaluator columns, and no status counts if there is no ``status`` column).
    """
    evaluators = scored_evaluators(df)
    head = _head_html(df, report_title(df, title), evaluators, text_limit)
    meta = {
        "rows": len(df),
        "statuses": ["", *STATUSES],
        "evaluators": [{"name": str(ev.get("name", ev["key"])), "key": str(ev["key"])} for ev in evaluators],
    }
    with atomic_write(path, "wb") as handle:

        def put(text: str) -> None:
            # backslashreplace: a lone surrogate (undecodable bytes read with surrogateescape) becomes the
            # JSON escape \udcXX instead of aborting the report.
            handle.write(text.encode("utf-8", "backslashreplace"))

        put(head)
        put('<script type="application/json" id="evalkit-data">')
        put(script_safe_json(meta)[:-1] + ',"columns":{')
        for position, (name, values) in enumerate(page_columns(df, evaluators, text_limit)):
            put(("," if position else "") + script_safe_json(name) + ":" + script_safe_json(values))
        put("}}</script>\n")
        put(f"<script>{JS}</script>\n</body>\n</html>\n")
