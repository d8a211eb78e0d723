"""The first rows of report.html, embedded apart from the whole item data so the page shows them at once.

A browser runs a page's scripts as its parser reaches them, and the parser reads a 100,000-row page's item data
(tens of megabytes of JSON) for a second or more; a million rows take ten times that. So the page carries, just
before the whole data, a small block (``<script type="application/json" id="evalkit-first">``) with the data's
own fields (:func:`~evalkit.reporting.page.page_meta`), every tag of the run (for the tag filter) and the table
columns of its first :data:`FIRST_ROWS` rows, made by the same functions as the whole data from the table's
head, so they are the same values. The page's script draws the first page of rows from it; filters, search,
sort, paging and the item view work once the whole data has been read.

May import: ``evalkit.reporting.page_data`` and ``page_details`` (and what they import).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from evalkit.reporting.page_data import page_columns
from evalkit.reporting.page_details import has_content, item_tags

#: Rows in the first block: the table's first page at its default size (50 rows).
FIRST_ROWS = 50


def first_columns(df: pd.DataFrame, evaluators: list[dict[str, Any]], limit: int) -> dict[str, list]:
    """The table columns of the first :data:`FIRST_ROWS` rows of ``df`` (plain lists), with their ``tags``
    when they have any: what the page's script needs to draw those rows."""
    head = df.iloc[:FIRST_ROWS]
    columns = dict(page_columns(head, evaluators, limit))
    tags = item_tags(head)
    if has_content(tags):
        columns["tags"] = tags
    return columns


def extend_first(columns: dict[str, list], chunk: pd.DataFrame, evaluators: list[dict[str, Any]], limit: int):
    """Add a chunk's rows to the first columns of a page written chunk by chunk, up to :data:`FIRST_ROWS`."""
    have = len(columns.get("item", ()))
    if have >= FIRST_ROWS:
        return
    more = first_columns(chunk.iloc[: FIRST_ROWS - have], evaluators, limit)
    if "tags" in more and "tags" not in columns:
        columns["tags"] = [None] * have
    for name, values in more.items():
        columns.setdefault(name, []).extend(values)
    if "tags" in columns and "tags" not in more:
        columns["tags"].extend([None] * len(more["item"]))
    if "tags" in columns:  # last, as from a whole table
        columns["tags"] = columns.pop("tags")


def tag_names(tags: Iterable[list[str] | None]) -> list[str]:
    """Every distinct tag of a run, sorted (the page's tag filter lists them before it has read the rows)."""
    return sorted({tag for row in tags if row for tag in row})


def first_block(meta: dict[str, Any], columns: dict[str, list], tags: Iterable[str]) -> dict[str, Any]:
    """The first block: the data's fields, ``first`` (how many rows it holds), ``tags`` and the ``columns``."""
    return {**meta, "first": len(columns.get("item", ())), "tags": sorted(tags), "columns": columns}
