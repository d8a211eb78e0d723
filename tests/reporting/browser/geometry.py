"""Geometry checks the page tests share: words broken across lines, text cut off by its box."""

from __future__ import annotations

#: JS: the words (whitespace-separated) inside the elements matching a selector that the browser laid out
#: over more than one line, each as "word (N lines)". A word that wraps mid-word has one client rect per line.
_BROKEN_WORDS = """selector => {
  const broken = [];
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /\\S+/g;
      for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) { broken.push(m[0] + " (" + lines.size + " lines)"); }
      }
    }
  }
  return broken;
}"""

#: JS: the elements matching a selector whose content is taller or wider than their box (cut off or scrolled).
_OVERFLOWING = """selector => [...document.querySelectorAll(selector)]
  .filter(e => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1)
  .map(e => e.textContent.slice(0, 80))"""


def broken_words(page, selector: str) -> list[str]:
    """Words inside ``selector`` that wrap in the middle (``agentRequ`` / ``estFailed``)."""
    return page.evaluate(_BROKEN_WORDS, selector)


def overflowing(page, selector: str) -> list[str]:
    """The start of each ``selector`` element whose text does not fit its box."""
    return page.evaluate(_OVERFLOWING, selector)
