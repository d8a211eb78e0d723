"""The report notebook's outputs, and how they go on the one report page.

:func:`render_report <evalkit.reporting.notebook_report.execution.render_report>` executes the notebook, then
:func:`export_outputs` turns the executed notebook's *outputs* (code is never shown) into HTML sections that
the report page (:mod:`evalkit.reporting.page`) shows above the run's items table and item view:

* ``text/html`` outputs are copied; every one that comes from the report's sections escapes each run string
  with :func:`html.escape` (prompts, responses, reasons, names, the title).
* plotly figures arrive as ``application/vnd.plotly.v1+json`` (the notebook calls :func:`configure_plotly`, so
  a figure is its JSON and nothing else: no ``<script src=cdn>``, no plotly.js copy per figure).
  Each becomes an empty ``<div class="evalkit-figure">`` plus its JSON in a ``<script type="application/json">``
  (``<``, ``>``, ``&`` written as ``\\u003c`` etc., so no value can close the element); the page inlines
  plotly.js once and its chart script draws every figure. The run's texts inside figures already went through
  :func:`evalkit.reporting.charts.plain`, so plotly shows them literally.
* markdown cells get a minimal renderer (headings, paragraphs, ``code``, ``**bold**``), escaped first.
* ``stdout`` streams become ``<pre>`` blocks (escaped); ``stderr`` (warnings, logs) is left out.

nbconvert is deliberately not used, even when installed: its HTML templates load require.js and MathJax from
CDNs (the report must open offline) and it knows nothing of a Content-Security-Policy. The page carries one
(scripts only by sha256, no connection). The sections' style is ``evalkit/reporting/assets/notebook_report.css``,
scoped to them.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from markupsafe import Markup

from evalkit.reporting.inline import asset, plotly_js, script_safe_json

PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: Mime type of the header's hidden companion: ``{"title": ...}``, read by :func:`export_html` for <title>.
META_MIME = "application/vnd.evalkit.report+json"
#: showSendToCloud: plotly.js 3 shows a "Share chart" (upload to Plotly Cloud) button unless told not to.
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "showSendToCloud": False}

#: Cell tag that keeps a cell (and its outputs) out of the exported HTML; the notebook's own introduction.
REMOVE_TAG = "remove-cell"
_SKIPPED_TAGS = frozenset({REMOVE_TAG, "parameters", "injected-parameters"})


def configure_plotly() -> None:
    """Make every figure display as its JSON only (``plotly_mimetype``), with the report's plotly config.

    Jupyter, JupyterLab and VS Code draw that mime type with their own plotly; :func:`export_html` embeds
    plotly.js once for all figures. The ``notebook`` renderer would inline plotly.js into the notebook and
    ``notebook_connected`` would load it from a CDN: neither is wanted.
    """
    import plotly.io as pio

    pio.renderers["plotly_mimetype"].config = dict(PLOTLY_CONFIG)
    pio.renderers.default = "plotly_mimetype"


# ------------------------------------------------------------------------------------------------ HTML export

#: The exported page's style (``assets/notebook_report.css``).
CSS = asset("notebook_report.css") + asset("failing_rows.css")  # the latter also inline, for JupyterLab


def _plotly_js() -> str:
    """The plotly.js bundled with the installed plotly package (the version its figure JSON is written for)."""
    return plotly_js()


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


@dataclass
class Exported:
    """The outputs of an executed report notebook: HTML ``sections`` (escaped where they come from the run),
    how many plotly ``figures`` they place (each a ``div.evalkit-figure`` plus its JSON), and the ``title``
    the header cell recorded."""

    sections: list[str] = field(default_factory=list)
    figures: int = 0
    title: str | None = None


def export_outputs(notebook: Any) -> Exported:
    """The executed notebook's outputs as page sections (see the module docstring for each kind of output)."""
    out = Exported()
    for cell in notebook.get("cells", []):
        tags = set((cell.get("metadata") or {}).get("tags") or [])
        if tags & _SKIPPED_TAGS:
            continue
        if cell.get("cell_type") == "markdown":
            out.sections.append(_markdown_html(_text(cell.get("source", ""))))
            continue
        if cell.get("cell_type") != "code" or "remove-output" in tags:
            continue
        for output in cell.get("outputs", []):
            part = _output_html(output, out)
            if part:
                out.sections.append(part)
    return out


def _output_html(output: dict, out: Exported) -> str | None:
    kind = output.get("output_type")
    if kind == "stream":
        if output.get("name") == "stdout":
            return f"<pre class='stream'>{html.escape(_text(output.get('text', '')))}</pre>"
        return None
    if kind not in ("display_data", "execute_result"):
        return None
    data = output.get("data") or {}
    meta = data.get(META_MIME)
    if isinstance(meta, dict) and isinstance(meta.get("title"), str):
        out.title = meta["title"]
    if PLOTLY_MIME in data and isinstance(data[PLOTLY_MIME], dict):
        spec = data[PLOTLY_MIME]
        name = f"evalkit-figure-{out.figures}"
        out.figures += 1
        payload = {"data": spec.get("data", []), "layout": spec.get("layout", {})}
        return (
            f"<div class='evalkit-figure' id='{name}'></div>"
            f"<script type='application/json' id='{name}-data'>{_json_for_script(payload)}</script>"
        )
    if "text/html" in data:
        return _text(data["text/html"])
    if any(m in data for m in ("image/png", "image/jpeg")):
        mime = "image/png" if "image/png" in data else "image/jpeg"
        return _image(mime, data[mime])
    if "text/plain" in data:
        return f"<pre class='stream'>{html.escape(_text(data['text/plain']))}</pre>"
    return None


def export_html(notebook: Any, title: str | None = None, run: pd.DataFrame | None = None) -> str:
    """The executed report notebook on the one report page (:mod:`evalkit.reporting.page`), as a string.

    ``notebook`` is an nbformat notebook (the executed one); its outputs become the page's sections, then come
    the items table of ``run`` (the scored case table, if given) and the item view. ``title`` overrides the
    title the header cell recorded (:data:`META_MIME`).
    """
    from evalkit.reporting.page import render_page

    exported = export_outputs(notebook)
    items = run if run is not None else pd.DataFrame({"item": pd.Series([], dtype="int64")})
    return render_page(items, **page_options(exported, title))


def page_options(exported: Exported, title: str | None) -> dict[str, Any]:
    """The :func:`evalkit.reporting.page.write_page` options that put ``exported`` on the report page."""
    return {
        "title": title or exported.title or "evalkit report",
        "figures": [],
        "sections": [Markup(s) for s in exported.sections],
        "inline_figures": exported.figures,
        "own_header": False,
        "summary": False,
        "extra_css": CSS,
    }
