"""report.html of ``evalkit run``: the one report page (:mod:`evalkit.reporting.page`) of a scored case table.

Kept as the run's entry point (``write_html``, ``report_title``) so callers need not know how the page is
built; everything about the page itself lives in :mod:`evalkit.reporting.page`.
"""

from __future__ import annotations

import os

import pandas as pd

from evalkit.analysis.summaries import summary
from evalkit.reporting.page import CSS, PAGE_TEMPLATE, page_title, run_figures, write_page
from evalkit.reporting.page_data import TEXT_LIMIT

__all__ = ["CSS", "report_title", "write_html"]


def report_title(df: pd.DataFrame, title: str | None = None) -> str:
    """The report title: ``title``, else the document's ``metadata.name``, else the source file name."""
    return page_title(df, title)


def write_html(
    df: pd.DataFrame,
    path: str | os.PathLike,
    title: str | None = None,
    *,
    text_limit: int = TEXT_LIMIT,
    history: pd.DataFrame | None = None,
) -> None:
    """Write the standalone report page for the scored case table ``df`` to ``path``, atomically.

    Summary and charts, then the items table with filters, search, sort and paging, and the item view (see
    :mod:`evalkit.reporting.page`). Works on an unscored table too (no evaluator chips or charts).
    ``history`` (:func:`evalkit.runs`) adds the trend of pass rates across those runs to the charts.
    """
    table = summary(df)  # once, for the summary table and the pass-rate chart
    figures = run_figures(df, table)
    if history is not None and len(history):
        from evalkit.reporting.trend import pass_rate_trend

        figures.insert(0, pass_rate_trend(history))
    write_page(df, path, title=title, text_limit=text_limit, figures=figures, table=table)


def prepare_page_writer() -> None:
    """Load what the first page write of a process loads (the page's compiled template, the charts' module and
    plotly template), so that a page writer forked afterwards starts with it: ``evalkit run`` calls this while
    its document is read in a forked child (about 0.04 s of the first page)."""
    from evalkit.reporting import chart_specs
    from evalkit.reporting.fragments import environment

    environment().get_template(PAGE_TEMPLATE)
    chart_specs.template()
