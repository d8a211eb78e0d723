"""The run report: the pieces that ``notebooks/report.ipynb`` shows, and its export to one offline HTML file.

    evalkit report results/candidate --baseline results/baseline --out report.html

or, from Python, :func:`render_report`. The report is a notebook first: ``notebooks/report.ipynb`` (shipped
inside the package as ``evalkit/reporting/templates/report.ipynb``, the same file) reads a saved run with
:func:`evalkit.read_run` and displays what the functions here return: HTML strings (header, provenance, summary,
failing items, comparison) and plotly figures (pass rates, status breakdown, score distributions, thread turns,
deltas). Keeping the logic here keeps the notebook a few lines per section and the logic testable without a
kernel. The notebook imports this package only (``from evalkit.reporting import notebook_report as report``),
so the names below are its whole interface; they live in one module per concern:

- ``run_facts``: which run this is: :func:`header` (title block) and :func:`provenance` (versions, hashes,
  judge model and parameters, cache hits, tokens), never a secret.
- ``summary``: the per-evaluator summary table and the figures over the whole run.
- ``failing``: the rows that did not pass and what failed in each.
- ``comparison``: deltas against a baseline run, and the rows that regressed or improved.
- ``formatting``: escaping and cutting every run string, numbers, rates, the list limits.
- ``export``: the notebook's plotly setup and :func:`export_html` (outputs only, plotly.js inline once, a
  Content-Security-Policy, no external resource).
- ``execution``: :func:`render_report`: papermill on a Jupyter kernel, errors, the atomic write;
  ``scratch``: its temp folder (executed notebook, kernel connection file, sockets), removed in every path.
"""

from __future__ import annotations

from evalkit.reporting.notebook_report.comparison import changes_html, comparison_html
from evalkit.reporting.notebook_report.execution import notebook_path, render_report
from evalkit.reporting.notebook_report.export import (
    META_MIME,
    PLOTLY_CONFIG,
    PLOTLY_MIME,
    REMOVE_TAG,
    configure_plotly,
    export_html,
)
from evalkit.reporting.notebook_report.failing import FAILING_COLUMNS, failing_html, failing_items
from evalkit.reporting.notebook_report.formatting import FAILING_LIMIT, TEXT_LIMIT
from evalkit.reporting.notebook_report.run_facts import (
    JUDGE_PARAMETERS,
    ReportHeader,
    header,
    provenance,
    provenance_html,
)
from evalkit.reporting.notebook_report.summary import (
    THREAD_LIMIT,
    score_distributions,
    summary_html,
    thread_turns,
)

__all__ = [
    "FAILING_COLUMNS",
    "FAILING_LIMIT",
    "JUDGE_PARAMETERS",
    "META_MIME",
    "PLOTLY_CONFIG",
    "PLOTLY_MIME",
    "REMOVE_TAG",
    "TEXT_LIMIT",
    "THREAD_LIMIT",
    "ReportHeader",
    "changes_html",
    "comparison_html",
    "configure_plotly",
    "export_html",
    "failing_html",
    "failing_items",
    "header",
    "notebook_path",
    "provenance",
    "provenance_html",
    "render_report",
    "score_distributions",
    "summary_html",
    "thread_turns",
]
