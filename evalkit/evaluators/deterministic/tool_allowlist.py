"""The allowlist check of an agent run: the first captured tool call outside ``allowed_tools``, if any.

Which tools are allowed is resolved in ``evalkit.documents.evaluator_maps`` (``resolve_allowed_tools``):
``default_allowed_tools`` and an item's (or turn's) ``allowed_tools`` combine by ``allowed_tools_mode``:
``extend`` (the default) takes the union, ``replace`` the item list only; an absent list is empty, so
nothing at all resolves to an empty allowlist (fail closed). Entries are trimmed, whitespace-only ones
dropped, duplicates removed; matching is exact and case-sensitive. The engine gives a row with a call outside
the list the error code ``toolCallNotAllowed``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalkit.documents.evaluator_maps import allow_list
from evalkit.spans.reading.tool_calls import (
    Identity,
    call_names,
    entry_identity,
    is_absent,
    show_identity,
    span_tool_identity,
    span_tool_name,
    tool_spans_in_order,
)

_SEQUENCES = (list, tuple, np.ndarray)


def _captured_calls(evidence: Any) -> list[tuple[Identity, list[str]]]:
    """(identity, the names it answers to) of every captured call: spans in call order, or a tool_calls
    object's ``selected_functions`` then ``executions``."""
    if isinstance(evidence, dict):
        calls = []
        for field in ("selected_functions", "executions"):
            entries = evidence.get(field)
            if isinstance(entries, _SEQUENCES):
                calls += [(identity, call_names(identity)) for identity in map(entry_identity, entries)]
        return calls
    spans = tool_spans_in_order(evidence) or []
    return [(span_tool_identity(s), call_names(span_tool_identity(s), span_tool_name(s))) for s in spans]


def tool_call_not_allowed(spans_or_tool_calls: Any, allowlist: Any) -> str | None:
    """The message naming the first captured tool call outside ``allowlist`` (for ``toolCallNotAllowed``).

    ``spans_or_tool_calls`` is a row's span list or its ``diagnostics.tool_calls`` object. A call is allowed
    when one of the names it answers to (``reading.tool_calls.call_names``: its ``namespace_toolname``
    identifier, its whole name when it has no plugin, its tool name as captured) is in the trimmed
    allowlist, exactly: an entry ``ns_tool`` allows the call (``ns``, ``tool``) and the tool named
    ``ns_tool``. A call with no name (its function name unknown) cannot be shown to be allowed and is
    reported (fail closed). None when every call is allowed or nothing was captured; an absent allowlist
    allows nothing.
    """
    if is_absent(spans_or_tool_calls):
        return None
    allowed = set(allow_list(allowlist, "allowed_tools"))
    listed = ", ".join(repr(a) for a in sorted(allowed)) if allowed else "empty"
    for identity, names in _captured_calls(spans_or_tool_calls):
        if any(name in allowed for name in names):
            continue
        if names:
            return f"Tool call '{names[0]}' is not allowed (allowed_tools: {listed})."
        return (
            f"Tool call {show_identity(identity)} has an incomplete identity and cannot be matched against "
            f"allowed_tools ({listed})."
        )
    return None
