"""The report notebook's outputs, and their export to one standalone, offline HTML page.

:func:`render_report <evalkit.reporting.notebook_report.execution.render_report>` executes the notebook, then
:func:`export_html` builds the HTML from the executed notebook's *outputs* only (code is never shown):

* ``text/html`` outputs are copied; every one that comes from the report's sections escapes each run string
  with :func:`html.escape` (prompts, responses, reasons, names, the title).
* plotly figures arrive as ``application/vnd.plotly.v1+json`` (the notebook calls :func:`configure_plotly`, so
  a figure is its JSON and nothing else: no ``<script src=cdn>``, no plotly.js copy per figure).
  Each becomes an empty ``<div>`` plus its JSON in a ``<script type="application/json">`` (``<``, ``>``, ``&``
  written as ``\\u003c`` etc., so no value can close the element), and plotly.js from the installed plotly
  package is inlined **once**, followed by a small loader that draws every figure. The run's texts inside
  figures already went through :func:`evalkit.reporting.charts.plain`, so plotly shows them literally.
* markdown cells get a minimal renderer (headings, paragraphs, ``code``, ``**bold**``), escaped first.
* ``stdout`` streams become ``<pre>`` blocks (escaped); ``stderr`` (warnings, logs) is left out.

nbconvert is deliberately not used, even when installed: its HTML templates load require.js and MathJax from
CDNs (the report must open offline) and it knows nothing of a Content-Security-Policy. The exported page
carries one: scripts run only when they are the page's own (by sha256), no connection is allowed, so an
injection that slipped through could neither run nor phone home. The page's style is
``evalkit/reporting/assets/notebook_report.css``.
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

from evalkit.documents.versions import EVALKIT_VERSION as __version__
from evalkit.reporting.inline import asset, csp_hash, plotly_js, script_safe_json
from evalkit.reporting.notebook_report.formatting import TEXT_LIMIT, esc

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
CSS = asset("notebook_report.css")

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
        + (" ".join(csp_hash(s) for s in scripts) or "'none'")
        + "; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; base-uri 'none'; form-action 'none'"
    )
    body = "\n".join(parts)
    tail = "".join(f"<script>{s}</script>\n" for s in scripts)
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        f"<meta name='generator' content='evalkit {html.escape(__version__)}'>\n"
        f"<title>{esc(page_title, 300)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body class='evalkit-report'>\n<main>\n{body}\n</main>\n"
        f"<footer>Generated by evalkit {html.escape(__version__)} from its report notebook; works offline. Texts "
        f"longer than {TEXT_LIMIT:,} characters are shortened (\u2026).</footer>\n{tail}</body>\n</html>\n"
    )
