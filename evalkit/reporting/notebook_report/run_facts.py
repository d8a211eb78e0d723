"""Which run the report shows: the title block (:func:`header`) and where its numbers come from (:func:`provenance`).

**Secrets.** Nothing here reads the environment. Provenance shows only *named* fields of the run's metadata
(see :data:`JUDGE_PARAMETERS` and :func:`provenance`), never a whole mapping, so a key that found its way into
results.json is not displayed; a URL in the judge description loses its query string and user info. Run
folders are shown by name, never by their full local path (reports get shared).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.analysis.formatting import count, percent
from evalkit.analysis.run_identity import run_identity
from evalkit.analysis.summaries import STATUSES, scored_evaluators, status_counts
from evalkit.documents.versions import EVALKIT_VERSION as __version__
from evalkit.reporting.fragments import render
from evalkit.reporting.html_page import report_title
from evalkit.reporting.notebook_report.export import META_MIME
from evalkit.reporting.notebook_report.formatting import ELLIPSIS, num

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
        return num(value)
    if isinstance(value, str) and value:
        return value if len(value) <= limit else value[:limit] + ELLIPSIS
    return None


def _without_url_secrets(text: str) -> str:
    """URLs keep scheme, host and path: user info (``user:pass@``) and query strings (``?api-key=``) go."""
    return _URL_SECRETS.sub(lambda m: m.group("scheme") + m.group("rest"), text)


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


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
        f"run {_run_name(run)[:200]}",
        count(counts["total"], "row"),
        count(items, "item"),
        count(len(scored_evaluators(run)), "evaluator"),
    ]
    sampled = run_identity(run)["samples"]  # --samples K: how the verdicts were made, and how many flipped
    if sampled:
        flaky = sampled["flaky_rows"]
        flipped = f"{count(flaky, 'flaky row')} " if flaky is not None else ""
        facts.append(f"{flipped}over {sampled['k']} samples (pass rule {sampled['pass_rule']})")
    if baseline is not None:
        facts.insert(1, f"baseline {_run_name(baseline)[:200]}")
    evaluated = _scalar(_metadata(run).get("evaluatedAt"), 40)
    if evaluated:
        facts.append(f"evaluated {evaluated}")
    rate = counts["pass"] / counts["total"] if counts["total"] else math.nan
    markup = str(
        render("section_header.html.j2", title=text, facts=facts, statuses=STATUSES, counts=counts, rate=rate)
    )
    return ReportHeader(title=text, html=markup)


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
        rate = f" ({percent(hits / asked)} of {count(asked, 'judge request')})" if asked else ""
        rows.append(("judge cache hits", f"{hits:,}{rate}"))
    throttled = _count(judge.get("throttled"))
    if throttled:
        rows.append(("concurrency cuts (429)", f"{throttled:,}"))
    prompt, completion = _count(judge.get("prompt_tokens")), _count(judge.get("completion_tokens"))
    if prompt is not None or completion is not None:
        total = (prompt or 0) + (completion or 0)
        rows.append(("judge tokens", f"{prompt or 0:,} prompt + {completion or 0:,} completion = {total:,}"))
        rows.append(("judge cost", _cost(judge.get("cost"))))
    return pd.DataFrame(rows, columns=["field", "value"])


def _cost(cost) -> str:
    """``$0.0123 (USD 0.15 / 0.60 per 1M tokens, EVALKIT_PRICES file)`` or "price not set"."""
    from evalkit.judges.prices import cost_text

    text = cost_text(cost)
    rates = [cost.get(k) for k in ("input_per_1m", "output_per_1m")] if isinstance(cost, dict) else []
    if text.startswith("$") and all(isinstance(r, (int, float)) for r in rates) and rates:
        source = _scalar(cost.get("source"), 200) or "given"
        text += f" (USD {rates[0]:g} / {rates[1]:g} per 1M prompt / completion tokens; {source})"
    return text


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def provenance_html(run: pd.DataFrame) -> str:
    """:func:`provenance` as an HTML table (``section_provenance.html.j2``, every value escaped)."""
    return str(render("section_provenance.html.j2", rows=list(provenance(run).itertuples(index=False))))
