"""Citations: counts the distinct cited sources in a response, in the citation styles a format allows.

Scored column-wise: rows are grouped by their options (see ``options``); per format, the responses are
joined into one text that one regex pass scans for the bracketed styles and one for bare URLs, each match
assigned to its row by its offset (100,000 rows of ~20 words, two thirds of them citing: ~0.35 s CPU with
every style on a 2-core VM, from ~0.9 s when each row ran its own regexes).

Citations (score field ``count``: int; threshold, default 1, pass when count >= threshold)
    The evaluator reference (seed 001) counts "citation references in the agent's response, such as [1],
    [2], or hyperlink-style citations". A response can hold five styles of citation:

    * ``oai``: ``【3:0†source】`` -> 3. The first number is the index; ``:<digits>`` is optional (``【3†x】``
      also counts); the part after ``†`` is any text up to the closing ``】``.
    * ``bracket``: ``[12]`` -> 12, a single integer only (``[1, 2]`` and ``[^1]`` are not citations).
    * ``numbered link``: ``[1](url)`` -> 1; the parenthesised part is anything up to the first ``)``.
    * ``hyperlink``: ``[text](url)`` with a non-numeric text -> the source ``url`` (images ``![..](..)`` are
      not citations).
    * ``bare URL``: ``https://...`` outside a markdown link -> that URL (trailing punctuation dropped).

    Option ``citation_format`` chooses the styles that count:

    ======================  =========================================================================
    (not set)               every style, as ``mixed`` (seed over upstream, whose default is oai_unicode)
    ``oai_unicode``         oai
    ``bracket``             bracket, numbered link (it does contain the bracket marker ``[1]``)
    ``markdown``            numbered link, hyperlink
    ``inline``              bracket, numbered link, hyperlink, bare URL (used by upstream's samples)
    ``mixed``               every style
    ======================  =========================================================================

    Any other string is read as not set, with one warning per run naming the value and the accepted ones
    (the upstream schema types ``citation_format`` as a free string); a non-string is a configuration error.

    The count is the number of DISTINCT sources: numbered citations by index (``[1]``, ``[1](url)`` and
    ``【1:0†x】`` are the same citation 1; ``[01]`` is 1; index 0 is not a citation, upstream indices being
    1-based), hyperlinks and bare URLs by URL, and a URL already given by a numbered link is that citation.
    ``threshold`` must be an integer >= 0 (``2.0`` is read as 2; a bool is not an integer). ``details``
    carries ``format`` and ``citations``: one ``{"index", "text", "source"}`` dict per distinct numbered index
    in ascending order, ``text`` / ``source`` taken from the first entry with that index in the row's
    recorded ``citations`` column (the index may be recorded as an int or a digit string) and omitted when
    that entry lacks them; then one ``{"index", "source", "text"}`` dict per URL source in order of
    appearance, numbered on after the largest index (upstream's ``Citation`` needs an index >= 1), ``text``
    being the link text (omitted for a bare URL).

    Shared details: in the table one ``evaluate`` call returns, rows whose details are necessarily equal
    share one dict object (as rows share their ``evaluators`` map): rows citing nothing, and rows citing the
    same indices with no URL source and no recorded ``citations``, per ``citation_format``. 100,000 rows kept
    about 37 MB of identical dicts and lists before. No evalkit code changes a details dict after scoring;
    replacing a cell (``df.at[i, "citations_details"] = {...}``) changes that row only, but changing the dict
    in place (``df.at[i, "citations_details"]["format"] = ...``) changes every row sharing it: copy it first
    (``copy.deepcopy``). Results read back from results.json (``read_run``) hold one dict per row.
"""

from __future__ import annotations

import logging
import numbers
import re
from typing import Any

import numpy as np
import pandas as pd

from evalkit.evaluators.base import OptionError
from evalkit.evaluators.deterministic.columnwise import gc_paused, scored_frame, take, text_column, verdicts
from evalkit.evaluators.deterministic.options import count_option, parse_groups

log = logging.getLogger("evalkit.evaluators.citations")

_OAI, _BRACKET, _NUMBERED_LINK, _HYPERLINK, _URL = "oai", "bracket", "numbered link", "hyperlink", "bare URL"
_ALL_STYLES = frozenset((_OAI, _BRACKET, _NUMBERED_LINK, _HYPERLINK, _URL))
#: The citation styles each ``citation_format`` counts.
FORMAT_STYLES = {
    "oai_unicode": frozenset((_OAI,)),
    "bracket": frozenset((_BRACKET, _NUMBERED_LINK)),
    "markdown": frozenset((_NUMBERED_LINK, _HYPERLINK)),
    "inline": frozenset((_BRACKET, _NUMBERED_LINK, _HYPERLINK, _URL)),
    "mixed": _ALL_STYLES,
}
CITATION_FORMATS = tuple(FORMAT_STYLES)
DEFAULT_CITATION_FORMAT = "mixed"
_SEQUENCES = (list, tuple, np.ndarray)  # nested lists read back from Parquet arrive as object arrays

#: One pass finds the bracketed styles; a match is classified afterwards (a markdown link is one marker).
#: A match gives (oai index, label, "(target)"), None for the parts that did not match: the label is the
#: text inside ``[...]`` ("" for ``[]``); the target keeps its parentheses so that ``()`` is told apart.
#: Every alternative starts with a literal character, so the scan skips text without one at C speed.
#: ``{sep}`` is where the column-wise scan adds its row separator to every negated class: no match spans
#: two rows.
_MARKER_TEMPLATE = (
    r"【0*([1-9][0-9]*)(?::[0-9]+)?†[^】{sep}]*】"
    r"|!\[[^\[\]\n{sep}]*\]\([^){sep}]*\)"  # an image, skipped whole
    r"|\[([^\[\]\n{sep}]*)\](\([^){sep}]*\))?"
)
#: Bare URLs, in a second pass: a URL right after "](" is a link's or an image's target, read (or skipped)
#: by the first pass. The look-behind follows "http" (it tests the same two characters before the URL)
#: so that the pattern starts with a literal the scan searches for.
_BARE_URL_TEMPLATE = r"http(?<!\]\(http)s?://[^\s<>\[\]()\"'`】{sep}]+"
_MARKER = re.compile(_MARKER_TEMPLATE.format(sep=""))
_BARE_URL = re.compile(_BARE_URL_TEMPLATE.format(sep=""))
#: The column-wise scan joins the responses with NUL (a column holding a NUL is scanned row by row).
_SEP = "\x00"
_JOINED_MARKER = re.compile(_MARKER_TEMPLATE.format(sep=r"\x00"))
_JOINED_BARE_URL = re.compile(_BARE_URL_TEMPLATE.format(sep=r"\x00"))
_NUMBER = re.compile(r"[0-9]+").fullmatch
_TRAILING = ".,;:!?'\""
#: What a match adds to its row: (_INDEX, n, "") a counted index, (_NUMBERED_URL, url, "") the target of
#: a numbered link (a hyperlink to it is that citation), (_LINK, url, text) a hyperlink or bare URL.
_INDEX, _LINK, _NUMBERED_URL = 0, 1, 2
_NONE: tuple[tuple[int, ...], tuple[tuple[str, str], ...]] = ((), ())


#: Rows per scan: the joined text of a pass stays small (about 1 MB at ~100 characters a row), so the scan
#: adds little memory at peak; rows are independent, so the split changes nothing else.
_PASS_ROWS = 10_000

Found = tuple[tuple[int, ...], tuple[tuple[str, str], ...]]


def _found(responses: list[str], styles: frozenset) -> list[Found]:
    """Per response, ``(sorted distinct citation indices, ((url, link text), ...))`` in ``styles``,
    ``((), ())`` for none. Rows citing the same single index share one tuple.

    One regex pass per ``_PASS_ROWS`` rows: the responses are joined with NUL, which the joined patterns
    never cross, so each match lies in one row (found from its offset); a marker is classified once per
    distinct match. A pass with a NUL in some response is scanned row by row with the plain patterns.
    """
    found: list[Found] = []
    singles: dict[int, Found] = {}
    for start in range(0, len(responses), _PASS_ROWS):
        found += _found_pass(responses[start : start + _PASS_ROWS], styles, singles)
    return found


def _found_pass(responses: list[str], styles: frozenset, singles: dict[int, Found]) -> list[Found]:
    """``_found`` for one pass of rows; ``singles`` holds the shared one-index results."""
    n = len(responses)
    joined = _SEP.join(responses)
    if joined.count(_SEP) != n - 1:
        return [_row_citations(_scan(t, styles, _MARKER, _BARE_URL)[1], singles) for t in responses]
    offsets, parts = _scan(joined, styles, _JOINED_MARKER, _JOINED_BARE_URL)
    found = [_NONE] * n
    if not parts:
        return found
    lengths = np.fromiter(map(len, responses), dtype=np.int64, count=n) + 1
    starts = np.cumsum(lengths) - lengths
    rows = np.searchsorted(starts, np.array(offsets, dtype=np.int64), side="right") - 1
    # A row's parts in scan order (its markers, then its bare URLs): a stable sort by row keeps that order.
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    firsts = np.flatnonzero(np.diff(rows, prepend=-1)).tolist()
    order_list, rows_list = order.tolist(), rows.tolist()
    for first, end in zip(firsts, [*firsts[1:], len(rows_list)], strict=True):
        if end - first == 1:
            found[rows_list[first]] = _row_citations((parts[order_list[first]],), singles)
        else:
            found[rows_list[first]] = _row_citations([parts[j] for j in order_list[first:end]], singles)
    return found


def _scan(text: str, styles: frozenset, marker: re.Pattern, bare_url: re.Pattern) -> tuple[list, list]:
    """``(offsets, parts)``: each citation part of ``text`` and where its match starts; a row's markers
    come before its bare URLs (link sources are listed in that order)."""
    offsets: list[int] = []
    parts: list[tuple] = []
    if "[" in text or "【" in text:
        classified: dict[tuple, tuple] = {}
        for match in marker.finditer(text):
            groups = match.groups()
            kinds = classified.get(groups)
            if kinds is None:
                kinds = classified[groups] = _marker_parts(groups, styles)
            for kind in kinds:
                offsets.append(match.start())
                parts.append(kind)
    if _URL in styles and "://" in text:
        for match in bare_url.finditer(text):
            offsets.append(match.start())
            parts.append((_LINK, match.group().rstrip(_TRAILING), ""))
    return offsets, parts


def _marker_parts(groups: tuple, styles: frozenset) -> tuple[tuple, ...]:
    """What one marker match adds to its row (see ``_INDEX``); nothing for an image or a style not counted."""
    oai, label, target = groups
    if oai is not None:
        return ((_INDEX, int(oai), ""),) if _OAI in styles else ()
    if label is None:  # an image
        return ()
    words = target[1:-1].split() if target else ()
    source = words[0].strip("<>") if words else ""
    if _NUMBER(label):
        index = int(label)
        if not index or (_NUMBERED_LINK if target else _BRACKET) not in styles:
            return ()
        return ((_INDEX, index, ""), (_NUMBERED_URL, source, "")) if source else ((_INDEX, index, ""),)
    if source and _HYPERLINK in styles:
        return ((_LINK, source, label.strip()),)
    return ()


def _row_citations(parts, singles: dict[int, Found]) -> Found:
    """A row's ``(sorted distinct indices, ((url, link text), ...))`` from its parts in order of appearance."""
    if not parts:
        return _NONE
    if len(parts) == 1 and parts[0][0] == _INDEX:
        index = parts[0][1]
        one = singles.get(index)
        if one is None:
            one = singles[index] = ((index,), ())
        return one
    indices: set[int] = set()
    numbered_urls: set[str] = set()
    links: dict[str, str] = {}
    for kind, value, text in parts:
        if kind == _INDEX:
            indices.add(value)
        elif kind == _NUMBERED_URL:
            numbered_urls.add(value)
        else:
            links.setdefault(value, text)
    if not links:
        return tuple(sorted(indices)), ()
    return tuple(sorted(indices)), tuple((u, t) for u, t in links.items() if u not in numbered_urls)


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


def _citation_details(fmt: str, found: Found, recorded: Any) -> dict:
    """The ``details`` of a row: each index with the recorded ``text`` / ``source``, then the URL sources."""
    indices, links = found
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
    after = indices[-1] if indices else 0
    for offset, (url, text) in enumerate(links, start=1):
        entries.append({"index": after + offset, "source": url, **({"text": text} if text else {})})
    return {"format": fmt, "citations": entries}


def _details_column(fmt: str, found: list[Found], recorded: list, picked: list[int]) -> list[dict]:
    """The ``details`` of each picked row.

    Rows whose details can only be equal (no citation, or the same indices with no URL source and no recorded
    citations to take text from) share one dict (see the module docstring): 100,000 rows kept ~37 MB of
    identical dicts. The others get their own, built by ``_citation_details``.
    """
    shared: dict[tuple[int, ...], dict] = {}
    out = []
    append = out.append
    for (indices, links), i in zip(found, picked, strict=True):
        if links or (indices and isinstance(recorded[i], _SEQUENCES) and len(recorded[i])):
            append(_citation_details(fmt, (indices, links), recorded[i]))
            continue
        details = shared.get(indices)
        if details is None:
            details = shared[indices] = {"format": fmt, "citations": [{"index": index} for index in indices]}
        append(details)
    return out


def _format_option(evaluator: str, options: dict) -> tuple[str, str | None]:
    """``(format, unknown value or None)``: an unknown string reads as the default (warned about once)."""
    value = options.get("citation_format")
    if value is None:
        return DEFAULT_CITATION_FORMAT, None
    if not isinstance(value, str):
        valid = ", ".join(f"'{c}'" for c in CITATION_FORMATS)
        raise OptionError(
            f"{evaluator} option 'citation_format' must be a string, one of {valid}; got {value!r}"
        )
    if value in FORMAT_STYLES:
        return value, None
    return DEFAULT_CITATION_FORMAT, value


class Citations:
    """Counts distinct cited sources in ``response`` (see the module docstring)."""

    name = "Citations"
    key = "citations"
    score_field = "count"
    has_threshold = True
    requires: tuple[str, ...] = ()
    is_llm = False

    def _parse(self, options: dict) -> tuple[str, int, str | None]:
        fmt, unknown = _format_option(self.name, options)
        return fmt, count_option(self.name, options, "threshold", 1), unknown

    def score(self, rows: pd.DataFrame, configs: list[dict[str, Any]]) -> pd.DataFrame:
        """One regex pass per citation format over the rows that use it; thresholds applied per row."""
        n = len(rows)
        good, bad = parse_groups(self.name, rows, configs, self._parse)
        _warn_unknown(
            rows, [(unknown, positions) for (_, _, unknown), positions in good if unknown is not None]
        )
        responses = text_column(rows, "response")
        recorded = rows["citations"].tolist() if "citations" in rows.columns else [None] * n
        count = np.zeros(n, dtype=np.int64)
        threshold = np.zeros(n, dtype=np.int64)
        result = np.full(n, None, dtype=object)
        reason = np.full(n, None, dtype=object)
        details = np.full(n, None, dtype=object)
        for (_, limit, _), positions in good:
            threshold[positions] = limit
        for fmt in CITATION_FORMATS:
            parts = [positions for (f, _, _), positions in good if f == fmt]
            if not parts:
                continue
            positions = np.sort(np.concatenate(parts))
            picked = positions.tolist()
            with gc_paused():
                found = _found(take(responses, picked), FORMAT_STYLES[fmt])
                details[positions] = _details_column(fmt, found, recorded, picked)
            counts = np.array([len(a) + len(b) if a or b else 0 for a, b in found], dtype=np.int64)
            limits = threshold[positions]
            count[positions] = counts
            result[positions] = verdicts(counts >= limits)
            reason[positions] = _citation_reasons(counts, limits, fmt)
        return scored_frame(rows, count, threshold, result, reason, details, bad)


def _warn_unknown(rows: pd.DataFrame, unknown: list[tuple[str, np.ndarray]]) -> None:
    """One warning for the run, naming every unknown ``citation_format`` value (with the document and the
    first item using it) and the accepted ones."""
    if not unknown:
        return
    first: dict[str, int] = {}
    for value, positions in unknown:
        first[value] = min(first.get(value, len(rows)), int(positions.min()))
    items = rows["item"].tolist() if "item" in rows.columns else None
    turns = rows["turn"].tolist() if "turn" in rows.columns else None
    named = []
    for value in sorted(first):
        where = ""
        if items is not None:
            turn = turns[first[value]] if turns is not None else None
            where = f" (items[{items[first[value]]}]" + (
                "" if turn is None or pd.isna(turn) else f".turns[{turn}]"
            )
            where += ")"
        named.append(f"{value!r}{where}")
    source = (rows.attrs.get("evalkit") or {}).get("source")
    accepted = ", ".join(f"'{c}'" for c in CITATION_FORMATS)
    log.warning(
        "%sCitations: unknown citation_format %s, read as the default (every citation style, as '%s'); "
        "write one of %s to count only some styles",
        f"{source}: " if source else "",
        ", ".join(named),
        DEFAULT_CITATION_FORMAT,
        accepted,
    )


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
