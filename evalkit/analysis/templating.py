"""The Jinja2 environment of every HTML evalkit writes, and rendering of fragments from its templates.

Autoescaping on, undefined names are errors. Templates live beside the code that fills them: the comparison's
(``comparison_deltas.html.j2``, ``comparison_changes.html.j2``, shared macros) under
``evalkit/analysis/templates/``, the report page's and the report sections' under
``evalkit/reporting/templates/`` (:mod:`evalkit.reporting.fragments` overlays this environment with them). A
run's strings are escaped by the engine; the filters below cut and format values (:func:`cut`: missing → "",
long texts end with "…") so templates never build HTML from strings.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from evalkit.analysis.formatting import count, item_label, percent

__all__ = ["DASH", "ELLIPSIS", "TEXT_LIMIT", "cut", "environment", "missing", "num", "render"]

#: Longest run text shown per cell (prompts, responses, reasons), marked with :data:`ELLIPSIS` when cut.
TEXT_LIMIT = 1000
ELLIPSIS = "\u2026"
DASH = "\u2013"


def missing(value: Any) -> bool:
    """True for None, ``<NA>``, ``NaT`` and float NaN: the cell has no value."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def cut(value: Any, limit: int = TEXT_LIMIT) -> str:
    """A value as display text: missing → "", cut to ``limit`` characters (marked with …). Not escaped: the
    template's autoescaping does that."""
    if missing(value):
        return ""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def num(value: Any) -> str:
    """A score or threshold as display text: booleans as words, integers as they are, floats to 3 digits."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return DASH if not math.isfinite(value) else f"{float(value):.3g}"
    return "" if missing(value) else str(value)


def _pct(value: Any) -> str:
    return percent(value, missing=DASH)


def _count(value: Any) -> str:
    return f"{int(value):,}"


def _key_first(env_class):
    """An environment class where ``row.name`` reads the key ``name`` of a dict before its attribute, so a
    row with a "values" or "items" key never shows ``<built-in method values of dict ...>`` (issue 18, item 1)."""

    class KeyFirst(env_class):
        def getattr(self, obj, attribute):
            if isinstance(obj, dict) and attribute in obj:
                return obj[attribute]
            return super().getattr(obj, attribute)

    return KeyFirst


@lru_cache(maxsize=1)
def environment():
    """The shared Jinja2 environment (autoescape on, undefined names are errors, package templates, dict keys
    before dict methods)."""
    import jinja2

    env = _key_first(jinja2.Environment)(
        loader=jinja2.PackageLoader("evalkit.analysis", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update({"cut": cut, "num": num, "pct": _pct, "count": _count, "counted": count})
    env.globals.update({"missing": missing, "item_label": item_label})
    return env


def render(name: str, **context: Any) -> Markup:
    """Template ``name`` rendered with ``context``, as safe markup (everything from the run was escaped)."""
    return Markup(environment().get_template(name).render(**context))
