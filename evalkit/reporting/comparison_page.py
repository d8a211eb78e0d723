"""The comparison of two runs on the one report page: what ``evalkit compare A B --out FILE.html`` writes.

    from evalkit.analysis.comparison import compare
    from evalkit.reporting.comparison_page import write_html
    write_html(compare("results/baseline", "results/candidate"), "compare.html")

The page is :mod:`evalkit.reporting.page` with a comparison section (``templates/comparison.html.j2``):

* **banners** first, when the runs come from different documents, share few rows, or are too few for a test
  (:func:`evalkit.analysis.comparison_checks.notices`);
* the **deltas** table, a delta coloured only when it is significant: McNemar's exact test decides pass rates
  (its interval agrees with it by construction), the paired bootstrap interval decides mean scores, and either
  needs at least :data:`~evalkit.analysis.statistics.MIN_PAIRS` pairs; the page says so under the table;
* the two delta charts, then the **regressed** and **improved** rows with a word-level diff of response A and
  response B (:func:`evalkit.analysis.word_diff.word_diff`), and the unpaired rows;
* then run B's summary, charts-free items table and item view, as on a run's report.html.

Everything goes through the template's autoescaping; the file is written atomically and works offline.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evalkit.analysis.comparison_views import comparison_context
from evalkit.reporting.charts import comparison_deltas
from evalkit.reporting.page import Banner, write_page
from evalkit.reporting.run_spans import attach_spans

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.analysis.comparison import Comparison

__all__ = ["comparison_context", "write_html"]  # comparison_context: from evalkit.analysis.comparison_views


def write_html(
    c: Comparison, path: str | os.PathLike, title: str | None = None, *, max_rows: int = 500, pairwise=None
) -> Path:
    """Write the comparison page of ``c`` to ``path`` (atomically) and return the path.

    ``title`` defaults to "A vs B" (the runs' labels); lists show at most ``max_rows`` rows each. The items
    table below is run B's (the candidate's), when ``c`` carries it. ``pairwise`` (an
    ``evalkit.pairwise`` result) adds its win / tie / loss section after the deltas.
    """
    title = title or f"{c.label_a} vs {c.label_b}"
    items = c.frame_b if c.frame_b is not None else pd.DataFrame({"item": pd.Series([], dtype="int64")})
    source = (items.attrs.get("evalkit") or {}).get("source")
    if source and not str(source).startswith("<"):
        items = attach_spans(items, Path(str(source)).parent)  # B's spans.jsonl, for the item view's trace
    target = Path(path)
    # the page's header names A and B and counts the paired rows (facts below): the sections do not again
    context = {**comparison_context(c, max_rows), "named_above": True}
    if pairwise is not None:
        from evalkit.analysis.pairwise.views import pairwise_context

        context["pairwise"] = {**pairwise_context(pairwise, max_rows), "named_above": True}
    write_page(
        items,
        target,
        title=title,
        figures=[comparison_deltas(c, metric="pass_rate"), comparison_deltas(c, metric="mean")],
        banners=[Banner(level, heading, text) for level, heading, text in c.notices],
        comparison=context,
        facts=[
            f"A = {c.label_a}",
            f"B = {c.label_b}",
            f"{c.paired:,} paired rows",
            f"{len(c.unpaired):,} unpaired (only in one run, or the prompt changed)",
        ],
    )
    return target
