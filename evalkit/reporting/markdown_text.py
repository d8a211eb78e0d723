"""Untrusted text made inert for GitHub / GitLab Markdown: what an agent, a judge or a document wrote.

A pull-request comment or a CI job summary renders Markdown with inline HTML. Text evalkit did not write (a
response, a reason, a prompt, an evaluator or document name) could otherwise open a ``<script>`` or
``<img onerror>`` tag, add a link or an image, break a table with a pipe or a newline, ping people with
``@name``, or cross-reference ``#123``. :func:`inline` makes such text plain, on one line:

- control characters are dropped and line breaks become spaces (a table cell is one line);
- ``& < > " '`` become HTML entities, so no tag or entity reaches the page;
- ``$`` becomes ``&#36;``: GitHub renders ``$...$``, ``$$...$$`` and ``$`...`$`` as math (MathJax) and does
  not honour ``\\$`` outside math, while its math parser reads the source, where an entity is no delimiter
  (GitLab likewise); the reader still sees ``$``;
- every ASCII punctuation character Markdown gives a meaning to is backslash-escaped (``\\ ` * _ { } [ ] ( )
  # + - . ! | ~ = :``), so there is no emphasis, code span, link, heading or table cell break;
- a word joiner (U+2060, invisible) follows every ``@`` and ``#`` and splits ``://`` and ``www.``: GitHub
  links mentions, issue numbers and bare URLs after rendering, on the text itself, where escapes are gone.

Long text is cut to ``limit`` characters with an ellipsis, before escaping (escapes are never cut in half).

May import: nothing from evalkit.
"""

from __future__ import annotations

import re

__all__ = ["inline"]

WORD_JOINER = "\u2060"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_BREAKS = re.compile(r"[\r\n\t\u2028\u2029]+")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "$": "&#36;"}
_PUNCTUATION = set("\\`*_{}[]()#+-.!|~=:")


def inline(text: object, limit: int = 300) -> str:
    """``text`` as inert one-line Markdown (see the module docstring); ``""`` for None."""
    if text is None:
        return ""
    value = _BREAKS.sub(" ", _CONTROL.sub("", str(text))).strip()
    if len(value) > limit:
        value = value[: limit - 1].rstrip() + "\u2026"
    out = []
    for ch in value:
        if ch in _HTML:
            out.append(_HTML[ch])
        elif ch in _PUNCTUATION:
            out.append("\\" + ch)
        else:
            out.append(ch)
        if ch in "@#":
            out.append(WORD_JOINER)
    text = "".join(out)
    text = text.replace("\\://", "\\:" + WORD_JOINER + "//")  # no scheme:// for the autolinker
    return re.sub(r"(?i)(www)\\\.", lambda m: m.group(1) + WORD_JOINER + "\\.", text)
