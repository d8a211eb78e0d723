"""How numbers read, the same in the CLI, ``summary()``, notebooks and pages.

Two rules, in one place so every surface says a number the same way:

* a rate is a percentage with one decimal (``0.818181`` reads ``81.8%``); a rate that is not a number
  (nothing was judged) reads ``n/a``;
* a count goes with its noun in the right number (``1 row``, ``3 rows``, ``0 errors``), with thousands
  separators.

The report page's script (``reporting/assets/run_page.js``) carries its own copy of the plural rule, since
it runs in the browser.
"""

from __future__ import annotations

import math
from typing import Any

#: How a rate that is not a number reads.
NOT_A_RATE = "n/a"

# Nouns whose plural is not the noun with an "s".
_PLURALS = {"match": "matches", "entry": "entries", "query": "queries"}


def percent(rate: Any, missing: str = NOT_A_RATE) -> str:
    """``rate`` (a share, 0-1) as a percentage with one decimal: ``0.8181`` → ``"81.8%"``; ``missing`` when
    it is None or not a finite number."""
    try:
        value = float(rate)
    except (TypeError, ValueError):
        return missing
    return f"{value:.1%}" if math.isfinite(value) else missing


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``noun`` in the number ``count`` asks for: ``plural(1, "row")`` is ``"row"``, ``plural(2, "row")``
    ``"rows"`` (``plural_form`` for irregular nouns)."""
    if count == 1:
        return noun
    return plural_form or _PLURALS.get(noun) or noun + "s"


def count(n: int, noun: str, plural_form: str | None = None) -> str:
    """``n`` and its noun: ``count(1, "row")`` → ``"1 row"``, ``count(1200, "row")`` → ``"1,200 rows"``."""
    n = int(n)
    return f"{n:,} {plural(n, noun, plural_form)}"


def score(value: Any, missing: str = NOT_A_RATE) -> str:
    """A mean score to three significant digits (``4.5``, ``0.818``); ``missing`` when there is none."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return missing
    return f"{number:.3g}" if math.isfinite(number) else missing
