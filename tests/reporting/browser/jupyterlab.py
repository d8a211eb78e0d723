"""Widget and output HTML laid out as JupyterLab lays it out, for Chromium: JupyterLab's own CSS and ipywidgets'.

JupyterLab's stylesheet comes from nbconvert's ``lab`` template (``index.css`` and ``theme-light.css``: the
JupyterLab CSS that nbconvert ships for its HTML export), the widgets' from the installed ``jupyterlab_widgets``
extension (its CSS is a string inside the bundled JavaScript; :func:`widgets_css` takes it out). Nothing is
copied into the repository: both are read from the installed packages at test time.

:func:`widget_html` writes an ipywidgets tree as the DOM the widget manager builds (boxes as flex ``div``s with
their ``Layout`` as inline style, an ``HTML`` widget as ``div.widget-html > div.widget-html-content``); other
controls become empty boxes of their layout's size.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from jupyter_core.paths import jupyter_path


def _find(*parts: str) -> Path:
    for root in jupyter_path(*parts[:-1]):
        for found in Path(root).glob(parts[-1]):
            return found
    raise FileNotFoundError("/".join(parts))


def lab_css() -> list[Path]:
    """JupyterLab's notebook CSS as nbconvert's lab template ships it."""
    static = _find("nbconvert", "templates", "lab", "static")
    return [static / "index.css", static / "theme-light.css"]


def widgets_css() -> str:
    """ipywidgets' CSS (the template literals of the jupyterlab_widgets bundle that style ``jupyter-widget``)."""
    static = _find("labextensions", "@jupyter-widgets", "jupyterlab-manager", "static")
    parts = []
    for bundle in sorted(static.glob("*.js")):
        text = bundle.read_text(encoding="utf-8", errors="replace")
        parts += [m for m in re.findall(r"`([^`]*)`", text) if ".jupyter-widget" in m and "{" in m]
    if not parts:
        raise FileNotFoundError(f"no widget CSS in {static}")
    return "\n".join(parts)


_LAYOUT = ("width", "height", "min_width", "max_width", "flex", "flex_flow", "overflow", "align_items")


def _style(widget) -> str:
    layout = getattr(widget, "layout", None)
    pairs = [(k.replace("_", "-"), getattr(layout, k, None)) for k in _LAYOUT] if layout is not None else []
    return "; ".join(f"{k}: {v}" for k, v in pairs if v)


def widget_html(widget) -> str:
    """The DOM the widget manager builds for ``widget`` (and its children)."""
    import ipywidgets as w

    style = html.escape(_style(widget), quote=True)
    if isinstance(widget, w.Box):
        kind = "hbox" if isinstance(widget, w.HBox) else "vbox"
        inner = "".join(widget_html(child) for child in widget.children)
        return (
            f'<div class="lm-Widget jupyter-widgets widget-container widget-box widget-{kind} '
            f'jupyter-widget-box jupyter-widget-{kind}" style="{style}">{inner}</div>'
        )
    if isinstance(widget, w.HTML):
        return (
            f'<div class="lm-Widget jupyter-widgets widget-inline-hbox widget-html jupyter-widget-inline-hbox '
            f'jupyter-widget-html" style="{style}"><div class="widget-html-content jupyter-widget-html-content">'
            f"{widget.value}</div></div>"
        )
    return (
        f'<div class="lm-Widget jupyter-widgets widget-inline-hbox" style="{style}; min-height: 28px"></div>'
    )


def notebook_page(path: Path, outputs: list[tuple[str, str]], width: int) -> Path:
    """An HTML file at ``path``: the ``(kind, html)`` outputs of one cell (kind ``"html"``: a text/html output,
    rendered as JupyterLab renders HTML; ``"widget"``: a widget view) in a notebook output area ``width`` px
    wide."""
    links = "".join(f'<link rel="stylesheet" href="{css.as_uri()}">' for css in lab_css())
    area = {
        "html": 'class="jp-RenderedHTMLCommon jp-RenderedHTML jp-OutputArea-output" data-mime-type="text/html"',
        "widget": 'class="jp-OutputArea-output" data-mime-type="application/vnd.jupyter.widget-view+json"',
    }
    children = "".join(
        f'<div class="jp-OutputArea-child"><div {area[kind]}>{output}</div></div>' for kind, output in outputs
    )
    cells = (  # one code cell: its outputs are siblings, as JupyterLab and nbconvert lay them out
        '<div class="jp-Cell jp-CodeCell"><div class="jp-Cell-outputWrapper">'
        f'<div class="jp-OutputArea">{children}</div></div></div>'
    )
    path.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'>{links}<style>{widgets_css()}</style></head>"
        f'<body class="jp-Notebook" data-jp-theme-light="true" style="width: {width}px">{cells}</body></html>',
        encoding="utf-8",
    )
    return path
