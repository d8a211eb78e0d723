"""How numbers (and items) read, the same in the CLI, ``summary()``, notebooks and pages.

Three rules, in one place so every surface says a number the same way:

* a rate is a percentage with one decimal (``0.818181`` reads ``81.8%``); a rate that is not a number
  (nothing was judged) reads ``n/a``;
* a count goes with its noun in the right number (``1 row``, ``3 rows``, ``0 errors``), with thousands
  separators;
* an item is named ``#9``, a turn of a multi-turn thread ``#9 \u00b7 turn 2`` (:func:`item_label`), so a list
  of them (``#1, #9 \u00b7 turn 0``) never reads as more items than it names.

What a judge spent reads the same after every command that calls one (``run``, ``spans eval``, ``compare
--pairwise``, ``align``): :func:`judge_usage`, ``22 calls, 0 from cache, 18,486 prompt + 803 completion tokens,
$0.0016``.

The report page's script (``reporting/assets/run_page.js``) carries its own copy of the plural rule and of the
item names, since it runs in the browser.
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


def judge_usage(spent: Any) -> str:
    """What a judge spent, the one way every command prints it: ``22 calls, 0 from cache, 18,486 prompt + 803
    completion tokens, $0.0016`` (``price not set`` without a price). ``spent`` holds ``calls`` (requests the
    model received, retries included), ``cache_hits``, ``prompt_tokens``, ``completion_tokens`` and ``cost``
    (the ``{"usd": ...}`` of :func:`evalkit.judges.prices.judge_cost`, or None)."""
    from evalkit.judges.prices import cost_text

    def number(key: str) -> int:
        value = spent.get(key) if isinstance(spent, dict) else None
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

    return (
        f"{count(number('calls'), 'call')}, {number('cache_hits'):,} from cache, "
        f"{number('prompt_tokens'):,} prompt + {number('completion_tokens'):,} completion tokens, "
        f"{cost_text(spent.get('cost') if isinstance(spent, dict) else None)}"
    )


def score(value: Any, missing: str = NOT_A_RATE) -> str:
    """A mean score to three significant digits (``4.5``, ``0.818``); ``missing`` when there is none."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return missing
    return f"{number:.3g}" if math.isfinite(number) else missing


def item_label(item: Any, turn: Any = None) -> str:
    """How every surface names a row: ``#9`` for an item, ``#9 \u00b7 turn 2`` for a turn of a thread (``turn``
    None, ``<NA>`` or NaN: no turn). Whole floats read as integers (a turn column with gaps is float)."""
    name = f"#{_whole(item)}"
    return name if _no_value(turn) else f"{name} \u00b7 turn {_whole(turn)}"


def _no_value(value: Any) -> bool:
    try:
        return value is None or bool(value != value)  # None or NaN
    except TypeError:  # pandas' NA: its comparisons are NA, which has no truth value
        return True


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value
