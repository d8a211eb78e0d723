"""SnapshotBox: a widget container whose notebook output also keeps a static HTML rendering of its state.

A displayed widget is saved in the notebook as a reference to a live model plus its text repr
(``VBox(children=(...))``); reopened without its kernel (GitHub, nbviewer, an executed papermill notebook, a
colleague's Jupyter) it shows that repr, or nothing. ``nbconvert --to html`` of an executed notebook is worse:
nbclient saved the widget state, so nbconvert picks the widget view over any ``text/html`` beside it and the
page needs the widget manager from a CDN to draw it (offline, or from a sandboxed share: an empty box).

So ``SnapshotBox`` is displayed as two outputs: the widget (view plus a one-line ``text/plain``), then the
view's state as static HTML (the same tables the widgets show) in an output of its own, ``text/html`` only,
which nbconvert, nbviewer and GitHub show as they are. Where the widget itself is drawn beside it (JupyterLab,
or an exported page whose widget manager loaded) the static copy hides itself (CSS ``:has()`` on the output
before it), so the live view is not shown twice. Imported by the views only (it imports ipywidgets).
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w

#: The static copy's class, and the rule that hides it when the output before it holds a drawn widget box
#: (JupyterLab's output areas and nbconvert's lab template both wrap outputs in ``.jp-OutputArea-child``).
SNAPSHOT_CLASS = "evalkit-widget-snapshot"
HIDE_WHEN_LIVE = (
    f".jp-OutputArea-child:has(.jupyter-widgets .widget-box) + .jp-OutputArea-child .{SNAPSHOT_CLASS}"
    " { display: none; }"
)


class SnapshotBox(w.VBox):
    """A ``VBox`` displayed with ``text()`` as its ``text/plain``, then ``snapshot()`` as a static HTML output."""

    def __init__(self, children, *, snapshot: Callable[[], str], text: Callable[[], str], **kwargs):
        super().__init__(children, **kwargs)
        self._snapshot = snapshot
        self._text = text

    def static_html(self) -> str:
        """The view's state now, as the HTML of the static copy (with the rule that hides it beside the widget)."""
        return (
            f"<style>{HIDE_WHEN_LIVE}</style><div class='{SNAPSHOT_CLASS}'>"
            "<div style='color:#6c757d;font-size:smaller'>(a static copy of the widget, as it was displayed)</div>"
            f"{self._snapshot()}</div>"
        )

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = self._text()
        return bundle

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)
        display({"text/html": self.static_html(), "text/plain": self._text()}, raw=True)
