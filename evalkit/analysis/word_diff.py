"""Word-level difference of two texts, for showing what changed between response A and response B.

:func:`word_diff` splits both texts into words, punctuation and whitespace and aligns them with
:class:`difflib.SequenceMatcher`; the result is a list of ``(op, text)`` segments, ``op`` being ``"same"``,
``"del"`` (only in A) or ``"ins"`` (only in B), which a page shows as plain, struck-out and highlighted text.
"""

from __future__ import annotations

import difflib
import re

__all__ = ["DIFF_LIMIT", "word_diff"]

#: Longest text (characters) that is diffed; longer texts are cut first (and end with "…").
DIFF_LIMIT = 4000
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


def _tokens(text: str) -> list[str]:
    if len(text) > DIFF_LIMIT:
        text = text[:DIFF_LIMIT] + "\u2026"
    return _TOKEN.findall(text)


def word_diff(a: str | None, b: str | None) -> list[tuple[str, str]]:
    """Segments ``(op, text)`` that turn ``a`` into ``b`` word by word; adjacent segments of one op are merged.

    Joining the ``same`` and ``del`` texts gives ``a`` back, joining ``same`` and ``ins`` gives ``b`` (for texts
    under :data:`DIFF_LIMIT`). A missing text counts as empty.
    """
    ta, tb = _tokens(a or ""), _tokens(b or "")
    matcher = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    out: list[tuple[str, str]] = []

    def put(op: str, text: str) -> None:
        if not text:
            return
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1] + text)
        else:
            out.append((op, text))

    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            put("same", "".join(ta[i1:i2]))
        else:
            put("del", "".join(ta[i1:i2]))
            put("ins", "".join(tb[j1:j2]))
    return out
