"""report.html: one standalone, offline HTML file that shows a scored case table.

Layout: a header (title, source, row count), the row-status counts (clickable filters), the per-evaluator
summary table from :func:`evalkit.analysis.summaries.summary`, and the items table.

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

import base64
import hashlib
import html
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.summaries import (
    STATUS_ROW,
    STATUSES,
    numeric_scores,
    scored_evaluators,
    status_counts,
    summary,
)
from evalkit.documents.atomic import atomic_write
from evalkit.documents.columns import score_column

#: Longest text (in characters) embedded per cell; longer ones are cut and end with :data:`ELLIPSIS`.
TEXT_LIMIT = 2000
ELLIPSIS = "\u2026"
#: Embedded float scores are rounded to this many decimals (display shows at most 3).
SCORE_DECIMALS = 4
#: Longest result / status value embedded (they are short words; anything longer is junk).
WORD_LIMIT = 40

_SCRIPT_ESCAPES = (
    ("&", "\\u0026"),
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)

CSS = """
:root { --pass: #1a7f37; --fail: #cf222e; --error: #d4a000; --error-text: #7d5a00; --partial: #bc4c00;
  --muted: #656d76; --line: #d0d7de; --alt: #f6f8fa; --focus: #0969da; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
  margin: 1.5rem; }
h1 { font-size: 1.5rem; margin: 0 0 .2rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
.meta, .none, .na, .thread, .thr { color: var(--muted); }
.thread, .thr { font-size: .85em; overflow-wrap: anywhere; }
.counts { display: flex; gap: .5rem; flex-wrap: wrap; }
.count { font: inherit; text-align: left; background: #fff; border: 1px solid var(--line); border-radius: 6px;
  padding: .35rem .9rem; cursor: pointer; }
.count b { display: block; font-size: 1.35rem; }
.count.pass b { color: var(--pass); } .count.fail b { color: var(--fail); }
.count.error b { color: var(--error-text); } .count.partial b { color: var(--partial); }
.count[aria-pressed="true"] { outline: 2px solid var(--focus); }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid var(--line); padding: .35rem .55rem; text-align: left; vertical-align: top; }
th { background: var(--alt); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.status-row td, tr.status-row th { border-top: 2px solid var(--line); font-weight: 600; }
meter { width: 5rem; margin-left: .4rem; vertical-align: middle; }
.scroll { overflow-x: auto; }
.items { width: 100%; min-width: 60rem; table-layout: fixed; }
.items thead th { position: sticky; top: 0; }
.items tbody tr:nth-child(even) { background: #fbfcfd; }
.c-item { width: 7rem; } .c-status { width: 7rem; } .c-eval { width: 10rem; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 10em; overflow: auto; }
.badge { display: inline-block; border-radius: 4px; padding: 0 .4rem; font-size: .8rem; font-weight: 600;
  color: #fff; background: var(--muted); margin-right: .35rem; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); }
.badge.error { background: var(--error); color: #1f2328; } .badge.partial { background: var(--partial); }
.err { color: var(--error-text); white-space: pre-wrap; overflow-wrap: anywhere; max-height: 8em;
  overflow: auto; font-size: .9em; }
details summary { cursor: pointer; color: var(--muted); font-size: .85em; }
.controls, .pager { display: flex; gap: .6rem 1.2rem; flex-wrap: wrap; align-items: center; margin: .5rem 0; }
.pager button, .controls select, .controls input { font: inherit; }
footer { margin-top: 2rem; color: var(--muted); font-size: .85em; }
"""

JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("evalkit-data").textContent);
  var cols = data.columns;
  var total = data.rows;
  var evals = data.evaluators;
  var KNOWN = { pass: "pass", fail: "fail", error: "error", partial: "partial" };
  var state = { status: "", evalFilter: "", query: "", page: 0, size: 50 };
  var order = [];
  var haystack = null;
  var byId = function (id) { return document.getElementById(id); };
  var body = byId("items-body");
  var statusSelect = byId("f-status");
  var evalSelect = byId("f-eval");
  var queryInput = byId("f-query");
  var sizeSelect = byId("f-size");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function badge(word) {
    return el("span", "badge " + (KNOWN[word] || "other"), word);
  }

  function formatNumber(v) {
    if (typeof v === "boolean") { return v ? "true" : "false"; }
    if (typeof v === "number") {
      return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
    }
    return v === null || v === undefined ? "" : String(v);
  }

  function textCell(value, emptyLabel) {
    var td = el("td");
    if (value === null || value === undefined || value === "") {
      td.appendChild(el("span", "none", emptyLabel));
    } else {
      td.appendChild(el("div", "text", value));
    }
    return td;
  }

  function itemCell(i) {
    var td = el("td");
    var turn = cols.turn[i];
    td.appendChild(el("div", null, "#" + cols.item[i] + (turn === null ? "" : " \u00b7 turn " + turn)));
    if (cols.thread[i]) { td.appendChild(el("div", "thread", cols.thread[i])); }
    return td;
  }

  function statusCell(i) {
    var td = el("td");
    var status = cols.status[i];
    if (status) { td.appendChild(badge(status)); }
    if (cols.error[i]) { td.appendChild(el("div", "err", cols.error[i])); }
    return td;
  }

  function evalCell(k, i) {
    var pre = "e" + k + ".";
    var result = cols[pre + "result"][i];
    var td = el("td");
    if (result === null) {
      td.appendChild(el("span", "na", "\u2014"));
      td.title = "not asked";
      return td;
    }
    td.appendChild(badge(result));
    var score = formatNumber(cols[pre + "score"][i]);
    if (score) { td.appendChild(el("span", "score", score)); }
    var thresholds = cols[pre + "threshold"];
    if (thresholds && thresholds[i] !== null) {
      td.appendChild(el("div", "thr", "threshold " + formatNumber(thresholds[i])));
    }
    var error = cols[pre + "error"][i];
    if (error) { td.appendChild(el("div", "err", error)); }
    var reason = cols[pre + "reason"][i];
    if (reason) {
      td.title = reason;
      var details = el("details");
      details.appendChild(el("summary", null, "reason"));
      details.appendChild(el("div", "text", reason));
      td.appendChild(details);
    }
    return td;
  }

  function buildHaystack() {
    var fields = [cols.thread, cols.prompt, cols.response, cols.expected, cols.error];
    for (var k = 0; k < evals.length; k++) {
      fields.push(cols["e" + k + ".reason"], cols["e" + k + ".error"]);
    }
    haystack = new Array(total);
    for (var i = 0; i < total; i++) {
      var parts = [];
      for (var f = 0; f < fields.length; f++) {
        if (fields[f][i]) { parts.push(fields[f][i]); }
      }
      haystack[i] = parts.join("\n").toLowerCase();
    }
  }

  function applyFilters() {
    var query = state.query.trim().toLowerCase();
    if (query && haystack === null) { buildHaystack(); }
    var evalResults = null;
    var evalWanted = "";
    if (state.evalFilter) {
      var sep = state.evalFilter.indexOf(":");
      evalResults = cols["e" + state.evalFilter.slice(0, sep) + ".result"];
      evalWanted = state.evalFilter.slice(sep + 1);
    }
    order = [];
    for (var i = 0; i < total; i++) {
      if (state.status && cols.status[i] !== state.status) { continue; }
      if (evalResults && evalResults[i] !== evalWanted) { continue; }
      if (query && haystack[i].indexOf(query) < 0) { continue; }
      order.push(i);
    }
    state.page = 0;
    render();
  }

  function pageCount() { return Math.max(1, Math.ceil(order.length / state.size)); }

  function render() {
    var start = state.page * state.size;
    var end = Math.min(order.length, start + state.size);
    var fragment = document.createDocumentFragment();
    for (var p = start; p < end; p++) {
      var i = order[p];
      var tr = el("tr");
      tr.appendChild(itemCell(i));
      tr.appendChild(statusCell(i));
      tr.appendChild(textCell(cols.prompt[i], "\u2014"));
      tr.appendChild(textCell(cols.response[i], cols.response[i] === null ? "(no response)" : "(empty)"));
      tr.appendChild(textCell(cols.expected[i], "\u2014"));
      for (var k = 0; k < evals.length; k++) { tr.appendChild(evalCell(k, i)); }
      fragment.appendChild(tr);
    }
    if (order.length === 0) {
      var empty = el("td", "none", total === 0 ? "No rows." : "No rows match the filters.");
      empty.colSpan = 5 + evals.length;
      var row = el("tr");
      row.appendChild(empty);
      fragment.appendChild(row);
    }
    body.replaceChildren(fragment);
    byId("f-count").textContent = (order.length ? (start + 1) + "\u2013" + end : "0") + " of " +
      order.length + (order.length === total ? " rows" : " matching rows (" + total + " in total)");
    byId("p-label").textContent = "page " + (state.page + 1) + " of " + pageCount();
    byId("p-first").disabled = byId("p-prev").disabled = state.page === 0;
    byId("p-next").disabled = byId("p-last").disabled = state.page >= pageCount() - 1;
    for (var s = 0; s < data.statuses.length; s++) {
      var button = byId("count-" + (data.statuses[s] || "all"));
      if (button) { button.setAttribute("aria-pressed", String(data.statuses[s] === state.status)); }
    }
  }

  function goTo(page) {
    state.page = Math.min(Math.max(0, page), pageCount() - 1);
    render();
  }

  function setStatus(value) {
    state.status = value;
    statusSelect.value = value;
    applyFilters();
  }

  for (var k = 0; k < evals.length; k++) {
    for (var w = 0; w < 2; w++) {
      var wanted = w === 0 ? "fail" : "error";
      var option = el("option", null, evals[k].name + ": " + wanted);
      option.value = k + ":" + wanted;
      evalSelect.appendChild(option);
    }
  }
  data.statuses.forEach(function (value) {
    var button = byId("count-" + (value || "all"));
    if (button) { button.addEventListener("click", function () { setStatus(value); }); }
  });
  statusSelect.addEventListener("change", function () { setStatus(statusSelect.value); });
  evalSelect.addEventListener("change", function () { state.evalFilter = evalSelect.value; applyFilters(); });
  sizeSelect.addEventListener("change", function () {
    var first = state.page * state.size;
    state.size = parseInt(sizeSelect.value, 10) || 50;
    goTo(Math.floor(first / state.size));
  });
  var timer = null;
  queryInput.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.query = queryInput.value; applyFilters(); }, 200);
  });
  byId("p-first").addEventListener("click", function () { goTo(0); });
  byId("p-prev").addEventListener("click", function () { goTo(state.page - 1); });
  byId("p-next").addEventListener("click", function () { goTo(state.page + 1); });
  byId("p-last").addEventListener("click", function () { goTo(pageCount() - 1); });
  byId("controls").hidden = false;
  byId("pager").hidden = false;
  applyFilters();
})();
"""


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


CSP = (
    "default-src 'none'; "
    f"script-src {_csp_hash(JS)}; style-src {_csp_hash(CSS)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


def script_safe_json(value: Any) -> str:
    """``value`` as compact JSON that can sit inside a ``<script>`` element verbatim.

    ``<``, ``>`` and ``&`` (which could close the element or start ``<!--``) and U+2028 / U+2029 (line
    terminators in older JavaScript) are written as ``\\uXXXX`` escapes; they only ever occur inside strings,
    where the escape means the same character, so ``json.loads`` gives back exactly the original value. NaN and
    infinities are refused (they are not JSON); callers turn them into ``null`` first.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for raw, escaped in _SCRIPT_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def report_title(df: pd.DataFrame, title: str | None = None) -> str:
    """The report title: ``title``, else the document's ``metadata.name``, else the source file name."""
    if title:
        return str(title)
    meta = df.attrs.get("evalkit") or {}
    document = meta.get("document") if isinstance(meta, dict) else None
    metadata = document.get("metadata") if isinstance(document, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if name not in (None, ""):
        return str(name)
    source = meta.get("source") if isinstance(meta, dict) else None
    if source:
        return Path(str(source)).name
    return "evalkit report"


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _text(value: Any, limit: int) -> str | None:
    """One cell as embedded text: missing → None, anything else → str, cut to ``limit`` characters."""
    if _is_missing(value):
        return None
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def _texts(df: pd.DataFrame, column: str, limit: int) -> list[str | None]:
    """A text column as a list for JSON (fast path for the common case: short ``str`` values)."""
    if column not in df.columns:
        return [None] * len(df)
    return [
        v if type(v) is str and len(v) <= limit else _text(v, limit)  # noqa: E721 (exact type is the fast path)
        for v in df[column].tolist()
    ]


def _score(value: Any) -> Any:
    if _is_missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return round(float(value), SCORE_DECIMALS) if math.isfinite(value) else None
    return _text(value, WORD_LIMIT)


def _scores(df: pd.DataFrame, column: str) -> list[Any]:
    """A score (or threshold) column as JSON values: bools stay bools, ints ints, floats rounded, NaN → null."""
    if column not in df.columns:
        return [None] * len(df)
    series = df[column]
    if pd.api.types.is_bool_dtype(series.dtype) and not series.hasnans:
        return [bool(v) for v in series.tolist()]
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        values = numeric_scores(series)
        integral = pd.api.types.is_integer_dtype(series.dtype)
        cells = values.astype(object) if integral else np.round(values, SCORE_DECIMALS).astype(object)
        cells[~np.isfinite(values)] = None
        if integral:
            return [None if v is None else int(v) for v in cells.tolist()]
        return cells.tolist()
    return [_score(v) for v in series.tolist()]


def _row_errors(df: pd.DataFrame) -> list[str | None]:
    """``error_code: error_message`` per row (either part alone when the other is missing), or None."""
    codes = _texts(df, "error_code", WORD_LIMIT)
    messages = _texts(df, "error_message", TEXT_LIMIT)
    return [f"{c}: {m}" if c and m else (c or m or None) for c, m in zip(codes, messages, strict=True)]


def _columns(df: pd.DataFrame, evaluators: list[dict[str, Any]], limit: int) -> Iterator[tuple[str, list]]:
    """The embedded columns, one at a time, so only one column's list is alive while it is serialised."""
    n = len(df)
    if "item" in df.columns:
        yield "item", _scores(df, "item")
    else:
        yield "item", list(range(n))
    yield "turn", _scores(df, "turn")
    yield "thread", _texts(df, "thread", WORD_LIMIT * 5)
    yield "status", _texts(df, "status", WORD_LIMIT)
    yield "error", _row_errors(df)
    yield "prompt", _texts(df, "prompt", limit)
    yield "response", _texts(df, "response", limit)
    yield "expected", _texts(df, "expected_response", limit)
    for k, ev in enumerate(evaluators):
        key = ev["key"]
        yield f"e{k}.result", _texts(df, f"{key}_result", WORD_LIMIT)
        yield f"e{k}.score", _scores(df, score_column(key))
        if ev.get("has_threshold") and f"{key}_threshold" in df.columns:
            yield f"e{k}.threshold", _scores(df, f"{key}_threshold")
        yield f"e{k}.reason", _texts(df, f"{key}_reason", limit)
        yield f"e{k}.error", _texts(df, f"{key}_error", limit)


def _fmt_rate(value: float) -> str:
    if math.isnan(value):
        return "<td class='num'>\u2013</td>"
    return f"<td class='num'>{value * 100:.1f}\u00a0%<meter min='0' max='1' value='{value:.4f}'></meter></td>"


def _fmt_mean(value: float) -> str:
    return "\u2013" if math.isnan(value) else f"{value:.3f}"


def _summary_html(df: pd.DataFrame, table: pd.DataFrame | None = None) -> str:
    table = summary(df) if table is None else table
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


def _counts_html(df: pd.DataFrame, counts: dict | None = None) -> str:
    counts = status_counts(df) if counts is None else counts
    buttons = [
        f"<button type='button' class='count' id='count-all' aria-pressed='true'>"
        f"<b>{counts['total']}</b>rows</button>"
    ]
    for name in STATUSES:
        buttons.append(
            f"<button type='button' class='count {name}' id='count-{name}' aria-pressed='false'>"
            f"<b>{counts[name]}</b>{name}</button>"
        )
    return f"<div class='counts' role='group' aria-label='Row status counts'>{''.join(buttons)}</div>"


def _head_html(
    df: pd.DataFrame, title: str, evaluators: list[dict[str, Any]], limit: int, totals: dict | None = None
) -> str:
    """The page up to the items table; ``totals`` (``rows``, ``counts``, ``summary``) stand in for what
    ``df`` would give when the rows are streamed rather than held (evalkit.spark)."""
    totals = totals or {}
    meta = df.attrs.get("evalkit") or {}
    source = meta.get("source") if isinstance(meta, dict) else None
    facts = [f"{totals.get('rows', len(df)):,} rows", f"{len(evaluators)} evaluators"]
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
{_counts_html(df, totals.get("counts"))}
<h2>Evaluators</h2>
{_summary_html(df, totals.get("summary"))}
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
        for position, (name, values) in enumerate(_columns(df, evaluators, text_limit)):
            put(("," if position else "") + script_safe_json(name) + ":" + script_safe_json(values))
        put("}}</script>\n")
        put(f"<script>{JS}</script>\n</body>\n</html>\n")
