"""Values for the report's sections: missing cells, numbers as text, and the limits on how much is listed.

The sections (:mod:`.run_facts`, :mod:`.summary`, :mod:`.failing`, :mod:`.comparison`) render Jinja2 templates
with autoescaping (:mod:`evalkit.reporting.fragments`), which escape and cut every run string; what is left here
is plain data formatting.
"""

from __future__ import annotations

from evalkit.analysis.templating import DASH, ELLIPSIS, TEXT_LIMIT, missing, num

__all__ = ["DASH", "ELLIPSIS", "FAILING_LIMIT", "TEXT_LIMIT", "missing", "num"]

#: Most failing rows (and regressed / improved rows) listed; the rest are counted.
FAILING_LIMIT = 200
