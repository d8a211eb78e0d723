"""The run report: the pieces that ``notebooks/report.ipynb`` shows, and its export to one offline HTML file.

    evalkit report results/candidate --baseline results/baseline --out report.html

or, from Python, :func:`render_report`. The report is a notebook first: ``notebooks/report.ipynb`` (shipped
inside the package as ``evalkit/templates/report.ipynb``, the same file) reads a saved run with
:func:`evalkit.read_run` and displays what the functions here return: HTML strings (header, provenance, summary,
failing items, comparison) and plotly figures (pass rates, status breakdown, score distributions, thread turns,
deltas). Keeping the logic here keeps the notebook a few lines per section and the logic testable without a
kernel.

**Export.** :func:`render_report` executes the notebook with papermill on a real kernel (``python3``), then
:func:`export_html` builds the HTML from the executed notebook's *outputs* only (code is never shown):

* ``text/html`` outputs are copied; every one that comes from this module escapes each run string with
  :func:`html.escape` (prompts, responses, reasons, names, the title).
* plotly figures arrive as ``application/vnd.plotly.v1+json`` (the notebook sets plotly's ``plotly_mimetype``
  renderer, so a figure is its JSON and nothing else: no ``<script src=cdn>``, no plotly.js copy per figure).
  Each becomes an empty ``<div>`` plus its JSON in a ``<script type="application/json">`` (``<``, ``>``, ``&``
  written as ``\\u003c`` etc., so no value can close the element), and plotly.js from the installed plotly
  package is inlined **once**, followed by a small loader that draws every figure. The run's texts inside
  figures already went through :func:`evalkit.reporting.charts.plain`, so plotly shows them literally.
* markdown cells get a minimal renderer (headings, paragraphs, ``code``, ``**bold**``), escaped first.
* ``stdout`` streams become ``<pre>`` blocks (escaped); ``stderr`` (warnings, logs) is left out.

nbconvert is deliberately not used, even when installed: its HTML templates load require.js and MathJax from
CDNs (the report must open offline) and it knows nothing of a Content-Security-Policy. The exported page
carries one: scripts run only when they are the page's own (by sha256), no connection is allowed, so an
injection that slipped through could neither run nor phone home.

**Secrets.** Nothing here reads the environment. Provenance shows only *named* fields of the run's metadata
(see :data:`JUDGE_PARAMETERS` and :func:`provenance`), never a whole mapping, so a key that found its way into
results.json is not displayed; a URL in the judge description loses its query string and user info.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalkit import __version__
from evalkit.analysis.summaries import STATUS_ROW, STATUSES, scored_evaluators, status_counts, summary
from evalkit.documents.columns import score_column
from evalkit.reporting.html_page import report_title, script_safe_json

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

    from evalkit.analysis.comparison import Comparison

__all__ = [
    "changes_html",
    "comparison_html",
    "configure_plotly",
    "export_html",
    "failing_html",
    "failing_items",
    "header",
    "notebook_path",
    "provenance",
    "provenance_html",
    "render_report",
    "score_distributions",
    "summary_html",
    "thread_turns",
]

#: Most failing rows (and regressed / improved rows) listed; the rest are counted.
FAILING_LIMIT = 200
#: Longest prompt / response / reason shown per cell (marked with "…" when cut).
TEXT_LIMIT = 1000
#: Most threads drawn in the thread-turns chart (one heatmap line each).
THREAD_LIMIT = 50
ELLIPSIS = "\u2026"
DASH = "\u2013"

PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: Mime type of the header's hidden companion: ``{"title": ...}``, read by :func:`export_html` for <title>.
META_MIME = "application/vnd.evalkit.report+json"
#: showSendToCloud: plotly.js 3 shows a "Share chart" (upload to Plotly Cloud) button unless told not to.
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "showSendToCloud": False}

#: Judge parameters shown in provenance (``parameters`` of the judge summary): these names only, scalars only.
JUDGE_PARAMETERS = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "reasoning_effort",
    "api_version",
)
_HEX = re.compile(r"^(?:sha256:)?[0-9a-fA-F]{8,128}$")
_URL_SECRETS = re.compile(r"(?P<scheme>https?://)(?:[^\s/@]*@)?(?P<rest>[^\s?#]*)(?:[?#]\S*)?")

#: Cell tag that keeps a cell (and its outputs) out of the exported HTML; the notebook's own introduction.
REMOVE_TAG = "remove-cell"
_SKIPPED_TAGS = frozenset({REMOVE_TAG, "parameters", "injected-parameters"})


# ------------------------------------------------------------------------------------------------ small helpers


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _esc(value: Any, limit: int = TEXT_LIMIT) -> str:
    """A value as escaped HTML text: missing → "", cut to ``limit`` characters (marked with …)."""
    if _missing(value):
        return ""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[:limit] + ELLIPSIS
    return html.escape(text, quote=True)


def _pct(value: float) -> str:
    return DASH if not math.isfinite(value) else f"{value:.1%}"


def _num(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return DASH if not math.isfinite(value) else f"{float(value):.3g}"
    return "" if _missing(value) else str(value)


def _run_name(run: pd.DataFrame) -> str:
    """The run's folder name (never the full local path: reports get shared)."""
    source = (run.attrs.get("evalkit") or {}).get("source")
    if not source or str(source).startswith("<"):
        return "(in memory)"
    path = Path(str(source))
    return (path.parent.name or path.name) if path.name == "results.json" else path.name


def _metadata(run: pd.DataFrame) -> dict:
    document = (run.attrs.get("evalkit") or {}).get("document")
    metadata = document.get("metadata") if isinstance(document, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def _extension(run: pd.DataFrame, name: str) -> dict:
    extensions = _metadata(run).get("extensions")
    value = extensions.get(name) if isinstance(extensions, dict) else None
    return value if isinstance(value, dict) else {}


def _scalar(value: Any, limit: int = 200) -> str | None:
    """A metadata value shown only when it is a plain scalar (a mapping could hold anything, keys included)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _num(value)
    if isinstance(value, str) and value:
        return value if len(value) <= limit else value[:limit] + ELLIPSIS
    return None


def _without_url_secrets(text: str) -> str:
    """URLs keep scheme, host and path: user info (``user:pass@``) and query strings (``?api-key=``) go."""
    return _URL_SECRETS.sub(lambda m: m.group("scheme") + m.group("rest"), text)


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# ------------------------------------------------------------------------------------------------ notebook setup


def configure_plotly() -> None:
    """Make every figure display as its JSON only (``plotly_mimetype``), with the report's plotly config.

    Jupyter, JupyterLab and VS Code draw that mime type with their own plotly; :func:`export_html` embeds
    plotly.js once for all figures. The ``notebook`` renderer would inline plotly.js into the notebook and
    ``notebook_connected`` would load it from a CDN: neither is wanted.
    """
    import plotly.io as pio

    pio.renderers["plotly_mimetype"].config = dict(PLOTLY_CONFIG)
    pio.renderers.default = "plotly_mimetype"


@dataclass
class ReportHeader:
    """The report's title block. Displays as HTML, plus the title as :data:`META_MIME` for the export."""

    title: str
    html: str

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.html, META_MIME: {"title": self.title}}

    def _repr_html_(self) -> str:
        return self.html


def header(run: pd.DataFrame, title: str | None = None, baseline: pd.DataFrame | None = None) -> ReportHeader:
    """Title (``title``, else the document's name, else the file name) and one line of facts about the run."""
    text = report_title(run, title)
    counts = status_counts(run)
    items = int(run["item"].nunique()) if "item" in run.columns else len(run)
    facts = [
        f"run {_esc(_run_name(run), 200)}",
        f"{counts['total']:,} rows",
        f"{items:,} items",
        f"{len(scored_evaluators(run))} evaluators",
    ]
    if baseline is not None:
        facts.insert(1, f"baseline {_esc(_run_name(baseline), 200)}")
    evaluated = _scalar(_metadata(run).get("evaluatedAt"), 40)
    if evaluated:
        facts.append(f"evaluated {_esc(evaluated)}")
    rate = counts["pass"] / counts["total"] if counts["total"] else math.nan
    badges = (
        "".join(f"<span class='count {s}'><b>{counts[s]:,}</b> {s}</span>" for s in STATUSES)
        + f"<span class='count'><b>{_pct(rate)}</b> rows pass</span>"
    )
    markup = (
        f"<header class='evalkit-head'><h1>{_esc(text, 300)}</h1>"
        f"<p class='meta'>{' · '.join(facts)}</p><div class='counts'>{badges}</div></header>"
    )
    return ReportHeader(title=text, html=markup)


# ------------------------------------------------------------------------------------------------ provenance


def provenance(run: pd.DataFrame) -> pd.DataFrame:
    """Where the numbers come from, as a two-column frame (``field``, ``value``), values as display text.

    Read by name, never by dumping a mapping: from the document metadata ``name`` and ``evaluatedAt``; from
    ``metadata.extensions["dev.evalkit.run"]`` or ``["dev.evalkit.judge"]`` ``evalkit_version`` and
    ``document_sha256`` (when the run recorded them); from the judge summary ``model`` (URLs without query or
    user info), ``model_name``, ``parameters`` (only :data:`JUDGE_PARAMETERS`, scalars), ``prompt_hashes``
    (evaluator name → hex digest; anything not a hex digest is dropped), ``calls``, ``cache_hits``,
    ``throttled``, ``prompt_tokens``, ``completion_tokens``. The sha256 of results.json itself is computed here,
    so even a run that recorded nothing can be pinned down.
    """
    meta = run.attrs.get("evalkit") or {}
    metadata = _metadata(run)
    run_ext = _extension(run, "dev.evalkit.run")
    judge = meta.get("judge") if isinstance(meta.get("judge"), dict) else _extension(run, "dev.evalkit.judge")
    rows: list[tuple[str, str]] = [("run folder", _run_name(run))]
    source = meta.get("source")
    if source and not str(source).startswith("<") and Path(str(source)).is_file():
        rows.append(("results.json sha256", _file_sha256(Path(str(source)))))
    for label, key in (("document", "name"), ("evaluated at", "evaluatedAt")):
        value = _scalar(metadata.get(key))
        if value:
            rows.append((label, value))
    for label, key in (("evalkit version (run)", "evalkit_version"), ("document sha256", "document_sha256")):
        value = _scalar(run_ext.get(key)) or _scalar(judge.get(key))
        rows.append((label, value or "not recorded by this run"))
    rows.append(("evalkit version (report)", __version__))
    if not judge:
        rows.append(("judge", "none: no LLM evaluator ran"))
        return pd.DataFrame(rows, columns=["field", "value"])

    model = _scalar(judge.get("model"), 300)
    if model:
        rows.append(("judge model", _without_url_secrets(model)))
    name = _scalar(judge.get("model_name"))
    if name:
        rows.append(("judge model name", name))
    parameters = judge.get("parameters")
    if isinstance(parameters, dict):
        shown = [
            f"{k}={_scalar(parameters[k], 60)}" for k in JUDGE_PARAMETERS if _scalar(parameters.get(k), 60)
        ]
        if shown:
            rows.append(("judge parameters", ", ".join(shown)))
    hashes = judge.get("prompt_hashes")
    if isinstance(hashes, dict):
        for evaluator, digest in hashes.items():
            if isinstance(digest, str) and _HEX.match(digest):
                rows.append((f"judge prompt sha256: {str(evaluator)[:100]}", digest))
    calls, hits = _count(judge.get("calls")), _count(judge.get("cache_hits"))
    if calls is not None:
        rows.append(("judge calls", f"{calls:,} (retries included)"))
    if hits is not None:
        asked = hits + (calls or 0)
        rate = f" ({hits / asked:.1%} of {asked:,} judge requests)" if asked else ""
        rows.append(("judge cache hits", f"{hits:,}{rate}"))
    throttled = _count(judge.get("throttled"))
    if throttled:
        rows.append(("concurrency cuts (429)", f"{throttled:,}"))
    prompt, completion = _count(judge.get("prompt_tokens")), _count(judge.get("completion_tokens"))
    if prompt is not None or completion is not None:
        total = (prompt or 0) + (completion or 0)
        rows.append(("judge tokens", f"{prompt or 0:,} prompt + {completion or 0:,} completion = {total:,}"))
    return pd.DataFrame(rows, columns=["field", "value"])


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def provenance_html(run: pd.DataFrame) -> str:
    """:func:`provenance` as an HTML table (every value escaped)."""
    lines = "".join(
        f"<tr><th scope='row'>{_esc(field, 200)}</th><td class='mono'>{_esc(value, 400)}</td></tr>"
        for field, value in provenance(run).itertuples(index=False)
    )
    return f"<table class='facts'><tbody>{lines}</tbody></table>"


# ------------------------------------------------------------------------------------------------ summary


def summary_html(run: pd.DataFrame) -> str:
    """The per-evaluator summary of :func:`evalkit.summary` as an HTML table, with token columns if judged."""
    table = summary(run)
    if table.empty:
        return "<p class='none'>No evaluator results and no row status in this run.</p>"
    tokens = "prompt_tokens" in table.columns
    heads = ["evaluator", "asked", "passed", "failed", "errored", "partial", "pass rate", "mean score"]
    if tokens:
        heads += ["prompt tokens", "completion tokens"]
    lines = []
    for name, row in table.iterrows():
        status = name == STATUS_ROW
        cells = "".join(
            f"<td class='num'>{int(row[c]):,}</td>"
            for c in ("asked", "passed", "failed", "errored", "partial")
        )
        cells += f"<td class='num'>{_pct(float(row['pass_rate']))}</td>"
        mean = float(row["mean_score"])
        cells += f"<td class='num'>{DASH if math.isnan(mean) else f'{mean:.3f}'}</td>"
        if tokens:
            cells += "".join(
                f"<td class='num'>{int(row[c]):,}</td>" for c in ("prompt_tokens", "completion_tokens")
            )
        label = "row status" if status else _esc(name, 200)
        css = " class='status-row'" if status else ""
        lines.append(f"<tr{css}><th scope='row'>{label}</th>{cells}</tr>")
    head = "".join(f"<th>{h}</th>" for h in heads)
    note = (
        "<p class='meta'>Evaluator pass rate = passed / (passed + failed): errored rows are counted apart, not "
        "in the rate. Row status pass rate = passed / all rows.</p>"
    )
    return (
        f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"
        f"</div>{note}"
    )


# ------------------------------------------------------------------------------------------------ figures


def score_distributions(run: pd.DataFrame, columns: int = 2) -> go.Figure | None:
    """Every evaluator's score distribution (:func:`evalkit.reporting.charts.score_distribution`) in one grid figure.

    None when nothing is scored. Subplot titles are the charts' own titles (names already made plain).
    """
    from plotly.subplots import make_subplots

    from evalkit.reporting.charts import score_distribution

    keys = [ev["key"] for ev in scored_evaluators(run) if f"{ev['key']}_result" in run.columns]
    if not keys:
        return None
    figures = [score_distribution(run, key) for key in keys]
    columns = max(1, min(columns, len(figures)))
    rows = math.ceil(len(figures) / columns)
    grid = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=[f.layout.title.text for f in figures],
        vertical_spacing=min(0.12, 0.6 / rows),
        horizontal_spacing=0.08,
    )
    for index, figure in enumerate(figures):
        row, col = divmod(index, columns)
        for trace in figure.data:
            grid.add_trace(trace, row=row + 1, col=col + 1)
        if figure.layout.xaxis.type == "category":
            grid.update_xaxes(type="category", row=row + 1, col=col + 1)
    grid.update_layout(
        title={"text": "Score distributions (rows that asked for each evaluator)"},
        template="plotly_white",
        showlegend=False,
        bargap=0.1,
        height=max(340, 280 * rows),
        margin={"l": 60, "r": 30, "t": 90, "b": 50},
    )
    return grid


def thread_turns(run: pd.DataFrame, limit: int = THREAD_LIMIT) -> go.Figure | None:
    """:func:`evalkit.reporting.charts.thread_turns` for the first ``limit`` threads; None when the run has no threads."""
    from evalkit.reporting.charts import thread_turns as chart

    if "turn" not in run.columns:
        return None
    threaded = ~np.asarray(pd.array(run["turn"], dtype="Int64").isna(), dtype=bool)
    if not threaded.any():
        return None
    if "item" not in run.columns:
        return chart(run)
    order = pd.unique(run.loc[threaded, "item"].to_numpy())
    shown = order[:limit]
    figure = chart(run[threaded & run["item"].isin(shown).to_numpy()] if len(order) > limit else run)
    if len(order) > limit:
        figure.update_layout(title={"text": f"Thread turns (first {len(shown):,} of {len(order):,} threads)"})
    figure.update_layout(height=max(300, 120 + 18 * len(shown)))
    return figure


# ------------------------------------------------------------------------------------------------ failing items

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
                if scores is not None and not _missing(scores[j]):
                    parts.append(f"score {_num(scores[j])}")
                if thresholds is not None and not _missing(thresholds[j]):
                    parts.append(f"threshold {_num(thresholds[j])}")
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
    return [None if _missing(v) else v for v in rows[name].tolist()]


def _first(rows: pd.DataFrame, column: str, position: int) -> str | None:
    if column not in rows.columns:
        return None
    value = rows[column].iat[position]
    return None if _missing(value) else str(value)


def _where(item: Any, turn: Any, thread: Any) -> str:
    label = f"#{item}" if _missing(turn) else f"#{item} · turn {turn}"
    out = html.escape(label)
    if isinstance(thread, str) and thread:
        out += f"<div class='meta'>{_esc(thread, 200)}</div>"
    return out


def _badge(word: Any) -> str:
    text = _esc(word, 40)
    css = word if word in STATUSES else "other"
    return f"<span class='badge {css}'>{text}</span>"


def _more(total: int, shown: int, what: str) -> str:
    if total <= shown:
        return ""
    return f"<p class='meta'>{total - shown:,} more {what} not shown (results.json and results.csv have all).</p>"


def failing_html(run: pd.DataFrame, limit: int = FAILING_LIMIT) -> str:
    """:func:`failing_items` as an HTML table (every text escaped and cut), with the count of the rest."""
    frame, total = failing_items(run, limit)
    if total == 0:
        return "<p class='none'>No failing rows: every row passed.</p>"
    head = "".join(
        f"<th>{h}</th>" for h in ("item", "status", "what failed", "prompt", "response", "expected")
    )
    lines = []
    for row in frame.itertuples(index=False):
        error = f"<div class='err'>{_esc(row.error, 500)}</div>" if row.error else ""
        lines.append(
            f"<tr><td>{_where(row.item, row.turn, row.thread)}</td><td>{_badge(row.status)}{error}</td>"
            f"<td><div class='text'>{_esc(row.failed)}</div></td>"
            f"<td><div class='text'>{_esc(row.prompt)}</div></td>"
            f"<td><div class='text'>{_esc(row.response)}</div></td>"
            f"<td><div class='text'>{_esc(row.expected)}</div></td></tr>"
        )
    shown = f"; the first {len(frame):,} in run order" if total > len(frame) else ""
    return (
        f"<p class='meta'>{total:,} rows did not pass (fail, partial or error){shown}.</p>"
        f"<div class='scroll'><table class='rows'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(lines)}</tbody></table></div>{_more(total, len(frame), 'rows')}"
    )


# ------------------------------------------------------------------------------------------------ comparison


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
            _pct(r["pass_rate_a"]),
            _pct(r["pass_rate_b"]),
            pp(r["pass_rate_delta"]),
            f"[{pp(low)}, {pp(high)}]",
            DASH if not math.isfinite(r["p_value"]) else f"{r['p_value']:.3g}",
            _num(r["mean_a"]),
            _num(r["mean_b"]),
            signed(r["mean_delta"]),
            f"{int(r['regressed']):,}",
            f"{int(r['improved']):,}",
        ]
        body = "".join(f"<td class='num{css if i == 3 else ''}'>{cell}</td>" for i, cell in enumerate(cells))
        label = "row status" if status else _esc(name, 200)
        lines.append(f"<tr{' class=status-row' if status else ''}><th scope='row'>{label}</th>{body}</tr>")
    head = "".join(f"<th>{h}</th>" for h in heads)
    facts = (
        f"A (baseline) = {_esc(c.label_a, 200)} · B (this run) = {_esc(c.label_b, 200)} · {c.paired:,} paired "
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
        only = f"<p class='meta'>Not compared ({_esc('; '.join(names), 1000)}).</p>"
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
        f"<tr><td>{_where(row.item, row.turn, row.thread)}</td>"
        f"<td>{_badge(row.status_a)} → {_badge(row.status_b)}</td>"
        f"<td><div class='text'>{_esc(row.changes)}</div></td>"
        f"<td><div class='text'>{_esc(row.prompt)}</div></td>"
        f"<td><div class='text'>{_esc(row.response_a)}</div></td>"
        f"<td><div class='text'>{_esc(row.response_b)}</div></td></tr>"
        for row in shown.itertuples(index=False)
    ]
    return (
        f"<div class='scroll'><table class='rows'><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody>"
        f"</table></div>{_more(len(frame), len(shown), what + ' rows')}"
    )


# ------------------------------------------------------------------------------------------------ HTML export

CSS = """
body.evalkit-report { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
  margin: 1.5rem auto; max-width: 90rem; padding: 0 1.5rem; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; overflow-wrap: anywhere; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
.meta, .none { color: #656d76; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #d0d7de; padding: .3rem .55rem; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.up { color: #1a7f37; font-weight: 600; } td.down { color: #cf222e; font-weight: 600; }
tr.status-row th, tr.status-row td { border-top: 2px solid #d0d7de; font-weight: 600; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table.rows { min-width: 60rem; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 12em; overflow: auto; max-width: 30rem; }
.err { color: #7d5a00; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .9em; max-width: 14rem; }
.badge { display: inline-block; border-radius: 4px; padding: 0 .4rem; font-size: .8rem; font-weight: 600;
  color: #fff; background: #656d76; }
.badge.pass { background: #1a7f37; } .badge.fail { background: #cf222e; }
.badge.partial { background: #bc4c00; } .badge.error { background: #d4a000; color: #1f2328; }
.counts { display: flex; gap: .5rem; flex-wrap: wrap; margin: .6rem 0; }
.count { border: 1px solid #d0d7de; border-radius: 6px; padding: .3rem .8rem; }
.count b { font-size: 1.2rem; margin-right: .2rem; }
.count.pass b { color: #1a7f37; } .count.fail b { color: #cf222e; } .count.partial b { color: #bc4c00; }
.count.error b { color: #7d5a00; }
.evalkit-figure { width: 100%; min-height: 320px; margin: .8rem 0; }
pre.stream { background: #f6f8fa; padding: .6rem; overflow: auto; white-space: pre-wrap; }
footer { margin-top: 2.5rem; color: #656d76; font-size: .85em; }
"""

#: Draws every figure of the page from its JSON; plotly.js runs just before it.
LOADER_JS = """(function () {
  "use strict";
  var config = PLOTLY_CONFIG;
  var nodes = document.querySelectorAll("div.evalkit-figure");
  for (var i = 0; i < nodes.length; i++) {
    var spec = JSON.parse(document.getElementById(nodes[i].id + "-data").textContent);
    Plotly.newPlot(nodes[i], spec.data || [], spec.layout || {}, config);
  }
})();""".replace("PLOTLY_CONFIG", json.dumps(PLOTLY_CONFIG))
PLOTLY_PRELUDE_JS = "window.PlotlyConfig = {MathJaxConfig: 'local'};"


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _plotly_js() -> str:
    """The plotly.js bundled with the installed plotly package (the version its figure JSON is written for)."""
    from plotly.offline import get_plotlyjs

    source = get_plotlyjs()
    # A literal "</script" inside would end the element early; "<\\/" means the same inside JS strings.
    return source.replace("</script", "<\\/script")


def _json_for_script(value: Any) -> str:
    try:
        return script_safe_json(value)
    except ValueError:  # NaN or infinity somewhere: JSON has no such numbers, plotly wants null
        return script_safe_json(_finite(value))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


_INLINE = (
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>"),
)


def _markdown_html(source: str) -> str:
    """A small, safe subset of markdown: ``#``-headings, paragraphs, ``code`` and ``**bold**``; escaped first."""
    blocks = []
    for block in re.split(r"\n\s*\n", source.strip()):
        text = html.escape(block.strip(), quote=False)
        for pattern, replacement in _INLINE:
            text = pattern.sub(replacement, text)
        heading = re.match(r"^(#{1,4})\s+(.*)$", text, flags=re.DOTALL)
        if heading:
            level = len(heading.group(1))
            blocks.append(f"<h{level}>{heading.group(2).strip()}</h{level}>")
        elif text:
            blocks.append(f"<p>{text}</p>")
    return "\n".join(blocks)


def _image(mime: str, data: Any) -> str | None:
    payload = "".join(data) if isinstance(data, list) else data
    if not isinstance(payload, str):
        return None
    payload = re.sub(r"\s+", "", payload)
    if not re.fullmatch(r"[A-Za-z0-9+/=]+", payload):
        return None
    return f"<img alt='' src='data:{mime};base64,{payload}'>"


def _text(data: Any) -> str:
    return "".join(data) if isinstance(data, list) else str(data)


def export_html(notebook: Any, title: str | None = None) -> str:
    """The executed report notebook as one standalone HTML page: outputs only, plotly.js inline once.

    ``notebook`` is an nbformat notebook (the executed one). ``title`` overrides the title the header cell
    recorded (:data:`META_MIME`). See the module docstring for how each kind of output is rendered.
    """
    parts: list[str] = []
    figures = 0
    recorded_title = None
    for cell in notebook.get("cells", []):
        tags = set((cell.get("metadata") or {}).get("tags") or [])
        if tags & _SKIPPED_TAGS:
            continue
        if cell.get("cell_type") == "markdown":
            parts.append(_markdown_html(_text(cell.get("source", ""))))
            continue
        if cell.get("cell_type") != "code" or "remove-output" in tags:
            continue
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                if output.get("name") == "stdout":
                    parts.append(f"<pre class='stream'>{html.escape(_text(output.get('text', '')))}</pre>")
                continue
            if kind not in ("display_data", "execute_result"):
                continue
            data = output.get("data") or {}
            meta = data.get(META_MIME)
            if isinstance(meta, dict) and isinstance(meta.get("title"), str):
                recorded_title = meta["title"]
            if PLOTLY_MIME in data and isinstance(data[PLOTLY_MIME], dict):
                spec = data[PLOTLY_MIME]
                name = f"evalkit-figure-{figures}"
                figures += 1
                payload = {"data": spec.get("data", []), "layout": spec.get("layout", {})}
                parts.append(
                    f"<div class='evalkit-figure' id='{name}'></div>"
                    f"<script type='application/json' id='{name}-data'>{_json_for_script(payload)}</script>"
                )
            elif "text/html" in data:
                parts.append(_text(data["text/html"]))
            elif any(m in data for m in ("image/png", "image/jpeg")):
                mime = "image/png" if "image/png" in data else "image/jpeg"
                image = _image(mime, data[mime])
                if image:
                    parts.append(image)
            elif "text/plain" in data:
                parts.append(f"<pre class='stream'>{html.escape(_text(data['text/plain']))}</pre>")

    page_title = title or recorded_title or "evalkit report"
    scripts = [PLOTLY_PRELUDE_JS, _plotly_js(), LOADER_JS] if figures else []
    csp = (
        "default-src 'none'; script-src "
        + (" ".join(_csp_hash(s) for s in scripts) or "'none'")
        + "; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; base-uri 'none'; form-action 'none'"
    )
    body = "\n".join(parts)
    tail = "".join(f"<script>{s}</script>\n" for s in scripts)
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        f"<meta name='generator' content='evalkit {html.escape(__version__)}'>\n"
        f"<title>{_esc(page_title, 300)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body class='evalkit-report'>\n<main>\n{body}\n</main>\n"
        f"<footer>Generated by evalkit {html.escape(__version__)} from its report notebook; works offline. Texts "
        f"longer than {TEXT_LIMIT:,} characters are shortened (\u2026).</footer>\n{tail}</body>\n</html>\n"
    )


# ------------------------------------------------------------------------------------------------ running


def notebook_path() -> Path:
    """The report notebook shipped in the package (``evalkit/templates/report.ipynb``).

    The repository's ``notebooks/report.ipynb`` is the same file (a test keeps them identical): the package
    copy is what an installed evalkit has, the repository copy is what people open next to the quickstart.
    """
    return Path(__file__).resolve().parent / "templates" / "report.ipynb"


def render_report(
    run_dir: str | os.PathLike,
    out: str | os.PathLike,
    *,
    baseline_dir: str | os.PathLike | None = None,
    title: str | None = None,
    notebook_out: str | os.PathLike | None = None,
    kernel_name: str = "python3",
    timeout: float | None = 600,
) -> Path:
    """Execute the report notebook on ``run_dir`` (and ``baseline_dir``) and write the HTML to ``out``.

    The notebook runs with papermill on the ``kernel_name`` Jupyter kernel in a scratch folder that is removed
    afterwards; ``notebook_out`` also keeps the executed notebook. Both files are written atomically. Raises
    :class:`~evalkit.errors.DocumentError` when a run folder is missing or not a run (before any kernel starts,
    or from the notebook), :class:`~evalkit.errors.EnvironmentConfigError` when there is no such kernel, and
    :class:`~evalkit.errors.EvalkitError` naming the cell when the notebook fails otherwise.
    """
    import nbformat

    from evalkit.documents.atomic import atomic_write
    from evalkit.documents.run_reader import results_file
    from evalkit.errors import EvalkitError

    source = notebook_path()
    if not source.is_file():
        raise EvalkitError(
            f"the report notebook is missing from this installation ({source}); reinstall evalkit "
            "(its package data must include templates/*.ipynb)"
        )
    run_path = results_file(run_dir).resolve()
    base_path = results_file(baseline_dir).resolve() if baseline_dir is not None else None
    with tempfile.TemporaryDirectory(prefix="evalkit-report-") as scratch:
        executed = _execute(
            source,
            Path(scratch) / "report.ipynb",
            {
                "run_dir": str(run_path),
                "baseline_dir": None if base_path is None else str(base_path),
                "title": title,
                "out_dir": str(Path(scratch) / "out"),
            },
            cwd=scratch,
            kernel_name=kernel_name,
            timeout=timeout,
        )
    page = export_html(executed, title=title)
    target = Path(out)
    with atomic_write(target, "wb") as handle:
        # backslashreplace: a lone surrogate (undecodable bytes in a run) must not abort the report
        handle.write(page.encode("utf-8", "backslashreplace"))
    if notebook_out is not None:
        with atomic_write(Path(notebook_out), "w") as handle:
            nbformat.write(executed, handle)
    return target


def _execute(source: Path, target: Path, parameters: dict, *, cwd: str, kernel_name: str, timeout):
    import papermill
    from jupyter_client.kernelspec import NoSuchKernel
    from papermill.exceptions import PapermillExecutionError

    from evalkit.errors import DocumentError, EnvironmentConfigError, EvalkitError

    options: dict[str, Any] = {}
    if os.name == "posix":
        # Unix sockets in the scratch folder instead of localhost TCP ports: the run's data never crosses a
        # network socket, and ipykernel has nothing to warn about ("running over TCP without encryption").
        # nbclient leaves a kernel manager it did not create running, so this one is shut down below.
        from jupyter_client.manager import KernelManager

        options["km"] = KernelManager(kernel_name=kernel_name, transport="ipc", ip=str(Path(cwd) / "kernel"))
    try:
        return papermill.execute_notebook(
            str(source),
            str(target),
            parameters=parameters,
            kernel_name=kernel_name,
            cwd=cwd,
            progress_bar=False,
            log_output=False,
            execution_timeout=timeout,
            **options,
        )
    except NoSuchKernel:
        raise EnvironmentConfigError(
            f"no Jupyter kernel named {kernel_name!r}: install one for this Python with "
            f"'python -m ipykernel install --user --name {kernel_name}'"
        ) from None
    except PapermillExecutionError as exc:
        message = str(exc.evalue).strip()
        if exc.ename == "DocumentError":
            raise DocumentError(message) from None
        raise EvalkitError(
            f"the report notebook failed in cell {exc.exec_count}: {exc.ename}: {message}"
        ) from None
    finally:
        km = options.get("km")
        if km is not None and km.has_kernel:
            km.shutdown_kernel(now=False)
