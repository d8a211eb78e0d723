"""The report's Comparison with the baseline section: per-evaluator deltas, then the rows that changed.

Both read a :class:`~evalkit.analysis.comparison.Comparison` (B = this run, A = the baseline) computed by the
notebook with :func:`evalkit.compare`; the definitions (paired rows, intervals, McNemar) are those of
:mod:`evalkit.analysis.comparison`. Without a baseline the section says so instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.analysis.comparison_views import comparison_context
from evalkit.reporting.fragments import render
from evalkit.reporting.notebook_report.formatting import FAILING_LIMIT

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.analysis.comparison import Comparison

#: How the report names the two runs: the baseline is A, the run the report is about is B.
ROLES = ("A (baseline)", "B (this run)")


def comparison_html(comparison: Comparison | None) -> str:
    """The baseline comparison's per-evaluator deltas (B = this run minus A = the baseline), as HTML.

    The same deltas as ``evalkit compare`` shows (``comparison_deltas.html.j2``): notices when the runs come
    from different documents or share few rows, a delta coloured only when its test supports it and enough rows
    are paired, and which test decides. A note instead when there is no baseline.
    """
    if comparison is None:
        return str(render("section_no_baseline.html.j2"))
    context = comparison_context(comparison, roles=ROLES, notices=True)
    return str(render("comparison_deltas.html.j2", comparison=context))


def changes_html(comparison: Comparison | None, limit: int = FAILING_LIMIT) -> str:
    """The rows that regressed (pass → fail / error) and improved, ``limit`` each, with how they changed and a
    word diff of the two responses. Empty when there is no baseline (:func:`comparison_html` says so)."""
    if comparison is None:
        return ""
    context = comparison_context(comparison, limit, roles=ROLES)
    return str(render("comparison_changes.html.j2", comparison=context))
