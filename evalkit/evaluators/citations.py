"""Citations: counts the distinct citation markers in a response, in one of four marker formats.

Scored column-wise: rows are grouped by their options (see ``options``), and one compiled regex runs per
citation format over the responses that use it and contain a marker opener at all (~0.10 s for 100,000
rows of ~20-word texts on a small 2-core VM).

Citations (score field ``count``: int; threshold, default 1, pass when count >= threshold)
    The count is the number of DISTINCT citation indices among the markers found in ``response``. Option
    ``citation_format`` (default ``oai_unicode``, as upstream) chooses the markers:

    * ``oai_unicode``: ``【3:0†source】`` -> 3. The first number is the index; ``:<digits>`` is optional
      (``【3†x】`` also counts); the part after ``†`` is any text up to the closing ``】``.
    * ``bracket``: ``[12]`` -> 12, a single integer only (``[1, 2]`` and ``[^1]`` are not citations).
      Decision: a markdown link ``[1](url)`` also counts as citation 1 here, because it does contain the
      bracket marker ``[1]``; a document that wants only bare brackets should not mix the two styles.
    * ``markdown``: ``[1](url)`` -> 1; the parenthesised part is anything up to the first ``)``. A bare
      ``[1]`` does not count.
    * ``mixed``: all of the above. ``[1]``, ``[1](url)`` and ``【1:0†x】`` are the same citation 1, and a
      markdown link is one marker (not a bracket plus a link).

    Indices are decimal ASCII digits read as integers (``[01]`` is 1); index 0 is not a citation, since
    upstream citation indices are 1-based. The same index repeated counts once. An unknown format is a
    configuration error listing the valid ones. ``threshold`` must be an integer >= 0 (``2.0`` is read as
    2; a bool is not an integer). ``details`` carries ``format`` and ``citations``: one
    ``{"index", "text", "source"}`` dict per distinct index in ascending order, ``text`` / ``source`` taken
    from the first entry with that index in the row's recorded ``citations`` column (the index may be
    recorded as an int or a digit string) and omitted when that entry lacks them or there is no entry.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalkit.evaluators.columnwise import gc_paused, scored_frame, take, text_column, verdicts
from evalkit.evaluators.options import choice_option, count_option, parse_groups

CITATION_FORMATS = ("oai_unicode", "bracket", "markdown", "mixed")
DEFAULT_CITATION_FORMAT = "oai_unicode"
_SEQUENCES = (list, tuple, np.ndarray)  # nested lists read back from Parquet arrive as object arrays

_INDEX = r"0*([1-9][0-9]*)"
_OAI = rf"【{_INDEX}(?::[0-9]+)?†[^】]*】"
#: Per format: the marker regex (every group that matches holds the index) and the characters a response
#: must contain to hold a marker at all (a cheap test that skips the regex for most rows).
_CITATION_MARKERS = {
    "oai_unicode": (re.compile(_OAI), ("【",)),
    "bracket": (re.compile(rf"\[{_INDEX}\]"), ("[",)),
    "markdown": (re.compile(rf"\[{_INDEX}\]\([^)]*\)"), ("[",)),
    "mixed": (re.compile(rf"{_OAI}|\[{_INDEX}\](?:\([^)]*\))?"), ("【", "[")),
}


def _found_indices(responses: list[str], fmt: str) -> list[Sequence[int]]:
    """Per response, the sorted distinct citation indices of the markers of ``fmt`` (``()`` for none)."""
    pattern, openers = _CITATION_MARKERS[fmt]
    findall = pattern.findall
    if len(openers) == 1:
        (opener,) = openers
        found = [findall(t) if opener in t else () for t in responses]
    else:
        first, second = openers
        found = [findall(t) if first in t or second in t else () for t in responses]
    if pattern.groups > 1:
        found = [[a or b for a, b in hits] if hits else () for hits in found]
    return [
        (sorted({int(i) for i in hits}) if len(hits) > 1 else [int(hits[0])]) if hits else ()
        for hits in found
    ]


def _recorded(citations: Any) -> dict[int, dict]:
    """The row's recorded citations by index (first entry wins); malformed entries are skipped."""
    table: dict[int, dict] = {}
    for entry in citations if isinstance(citations, _SEQUENCES) else ():
        if not isinstance(entry, dict):
            continue
        index = entry.get("index")
        if type(index) is not int:  # tolerate "2", numpy integers and 2.0 (Parquet round trips)
            if isinstance(index, str) and index.strip().isdigit():
                index = int(index)
            elif isinstance(index, numbers.Integral) and not isinstance(index, (bool, np.bool_)):
                index = int(index)
            elif isinstance(index, float) and index.is_integer():
                index = int(index)
            else:
                continue
        table.setdefault(index, entry)
    return table


def _citation_details(fmt: str, indices: Sequence[int], recorded: Any) -> dict:
    """The ``details`` of a row with citations: each index with the recorded ``text`` / ``source``."""
    table = _recorded(recorded) if isinstance(recorded, _SEQUENCES) and len(recorded) else {}
    entries = []
    for index in indices:
        entry: dict[str, Any] = {"index": index}
        source = table.get(index)
        if source is not None:
            for field in ("text", "source"):
                if source.get(field) is not None:
                    entry[field] = source[field]
        entries.append(entry)
    return {"format": fmt, "citations": entries}


class Citations:
    """Counts distinct citation indices in ``response`` (see the module docstring)."""

    name = "Citations"
    key = "citations"
    score_field = "count"
    has_threshold = True
    requires: tuple[str, ...] = ()
    is_llm = False

    def _parse(self, options: dict) -> tuple[str, int]:
        return (
            choice_option(self.name, options, "citation_format", DEFAULT_CITATION_FORMAT, CITATION_FORMATS),
            count_option(self.name, options, "threshold", 1),
        )

    def score(self, rows: pd.DataFrame, configs: list[dict[str, Any]]) -> pd.DataFrame:
        """One regex pass per citation format over the rows that use it; thresholds applied per row."""
        n = len(rows)
        good, bad = parse_groups(self.name, rows, configs, self._parse)
        responses = text_column(rows, "response")
        recorded = rows["citations"].tolist() if "citations" in rows.columns else [None] * n
        count = np.zeros(n, dtype=np.int64)
        threshold = np.zeros(n, dtype=np.int64)
        result = np.full(n, None, dtype=object)
        reason = np.full(n, None, dtype=object)
        details = np.full(n, None, dtype=object)
        for (_, limit), positions in good:
            threshold[positions] = limit
        for fmt in CITATION_FORMATS:
            parts = [positions for (f, _), positions in good if f == fmt]
            if not parts:
                continue
            positions = np.sort(np.concatenate(parts))
            picked = positions.tolist()
            with gc_paused():
                indices = _found_indices(take(responses, picked), fmt)
                details[positions] = [
                    _citation_details(fmt, found, recorded[i]) if found else {"format": fmt, "citations": []}
                    for found, i in zip(indices, picked, strict=True)
                ]
            counts = np.fromiter(map(len, indices), dtype=np.int64, count=len(indices))
            limits = threshold[positions]
            count[positions] = counts
            result[positions] = verdicts(counts >= limits)
            reason[positions] = _citation_reasons(counts, limits, fmt)
        return scored_frame(rows, count, threshold, result, reason, details, bad)


def _citation_reasons(counts: np.ndarray, limits: np.ndarray, fmt: str) -> np.ndarray:
    """ "Found 2 citations (oai_unicode); at least 1 required", formatted once per distinct pair."""
    base = int(limits.max(initial=0)) + 1
    pairs, inverse = np.unique(counts * base + limits, return_inverse=True)
    texts = np.array(
        [
            f"Found {c} citation{'' if c == 1 else 's'} ({fmt}); at least {t} required"
            for c, t in zip((pairs // base).tolist(), (pairs % base).tolist(), strict=True)
        ],
        dtype=object,
    )
    return texts[inverse.reshape(-1)]
