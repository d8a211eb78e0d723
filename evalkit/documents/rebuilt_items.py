"""Which items' own dicts the case table need not keep: those ``write_back`` rebuilds exactly from the columns.

The ``source`` column holds each item's (or turn's) dict as read, so that writing back keeps what evalkit does
not model (``tags``, ``allowed_tools``, an item's own ``evaluators``, unknown fields). Most items hold nothing
but modelled fields, and keeping their dicts cost 17.5 MB at 100,000 rows (issue 20's peak-memory goal), so
``load`` stores None for an item when :func:`rebuilt_exactly` holds: ``write_back.iter_items`` reads None as
``{}`` and writes the same keys, in the same order, with the same values.

That holds when the item's keys are, in order, a subsequence of :data:`WRITTEN_ORDER` (the order in which
``iter_items`` writes them onto an empty dict) and each value is one ``iter_items`` writes back from its column:

* ``prompt``: present and a string (it is always written);
* ``expected_response``, ``context``: non-empty strings (an empty one is written only when the item had it);
* ``response``: a string;
* ``citations``: a non-empty list; ``extensions``: a non-empty object;
* ``diagnostics``: a non-empty object of a non-empty ``retrieval_executions`` list and / or an object
  ``tool_calls``, in that order.

Anything else (other keys, null values, empty values, another order) keeps its dict. A row whose cells the
user changes is written from the cells either way; with no dict kept, a cell emptied by the user is left out of
the written item instead of being written empty (the same document by the schema).

May import: nothing from evalkit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: Item keys in the order ``write_back.iter_items`` writes them onto an item with no kept dict.
WRITTEN_ORDER = (
    "prompt",
    "expected_response",
    "context",
    "response",
    "citations",
    "diagnostics",
    "extensions",
)
_POSITION = {key: index for index, key in enumerate(WRITTEN_ORDER)}


def _non_empty_str(value: Any) -> bool:
    return type(value) is str and value != ""


def _diagnostics(value: Any) -> bool:
    if type(value) is not dict or not value:
        return False
    keys = list(value)
    if keys not in (["retrieval_executions"], ["tool_calls"], ["retrieval_executions", "tool_calls"]):
        return False
    executions = value.get("retrieval_executions", [None])
    return (type(executions) is list and bool(executions)) and type(value.get("tool_calls", {})) is dict


_CHECKS = {
    "prompt": lambda value: type(value) is str,
    "expected_response": _non_empty_str,
    "context": _non_empty_str,
    "response": lambda value: type(value) is str,
    "citations": lambda value: type(value) is list and bool(value),
    "diagnostics": _diagnostics,
    "extensions": lambda value: type(value) is dict and bool(value),
}


def rebuilt_exactly(entry: Any) -> bool:
    """True when ``write_back`` writes ``entry`` (an item or a turn as read) back exactly without its dict."""
    if type(entry) is not dict or "prompt" not in entry:
        return False
    last = -1
    for key, value in entry.items():
        position = _POSITION.get(key)
        if position is None or position < last or not _CHECKS[key](value):
            return False
        last = position
    return True


def kept_sources(entries: list) -> Iterator:
    """The ``source`` column: each entry's dict, or None where :func:`rebuilt_exactly` holds."""
    return (None if rebuilt_exactly(entry) else entry for entry in entries)
