"""The Jinja2 environment of the report pages: :mod:`evalkit.analysis.templating`'s (same filters, autoescaping)
with ``evalkit/reporting/templates/`` in front of ``evalkit/analysis/templates/``.

The report page (``page.html.j2``), its comparison section (``comparison.html.j2``, which includes the
comparison templates of the analysis layer) and the report notebook's sections (``section_*.html.j2``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from markupsafe import Markup

from evalkit.analysis import templating
from evalkit.analysis.templating import cut

__all__ = ["cut", "environment", "render"]


@lru_cache(maxsize=1)
def environment():
    """The analysis environment, overlaid with a loader that looks in ``evalkit/reporting/templates/`` first."""
    import jinja2

    base = templating.environment()
    return base.overlay(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("evalkit.reporting", "templates"), base.loader])
    )


def render(name: str, **context: Any) -> Markup:
    """Template ``name`` rendered with ``context``, as safe markup (everything from the run was escaped)."""
    return Markup(environment().get_template(name).render(**context))
