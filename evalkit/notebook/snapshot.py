"""SnapshotBox: a widget container whose notebook output also keeps a static HTML rendering of its state.

A displayed widget is saved in the notebook as a reference to a live model plus its text repr
(``VBox(children=(...))``); reopened without its kernel (GitHub, nbviewer, an executed papermill notebook, a
colleague's Jupyter) it shows that repr, or nothing. ``SnapshotBox`` adds ``text/html``, the view's state as
static HTML when it is displayed (the same tables the widgets show), and a one-line ``text/plain``, so a
reopened notebook reads like the widget did. Imported by the views only (it imports ipywidgets).
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w


class SnapshotBox(w.VBox):
    """A ``VBox`` displayed with ``snapshot()`` as its ``text/html`` and ``text()`` as its ``text/plain``."""

    def __init__(self, children, *, snapshot: Callable[[], str], text: Callable[[], str], **kwargs):
        super().__init__(children, **kwargs)
        self._snapshot = snapshot
        self._text = text

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = (
            "<div class='evalkit-widget-snapshot'>"
            "<div style='color:#6c757d;font-size:smaller'>(a static copy of the widget, as it was displayed)</div>"
            f"{self._snapshot()}</div>"
        )
        bundle["text/plain"] = self._text()
        return bundle
