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
    entry_identity,
    is_absent,
    is_complete,
    show_identity,
    span_tool_identity,
    span_tool_name,
    tool_identifier,
    tool_spans_in_order,
)

_SEQUENCES = (list, tuple, np.ndarray)


def _captured_calls(evidence: Any) -> list[tuple[Identity, str | None]]:
    """(identity, name as captured) of every captured call: spans in call order, or a tool_calls object's
    ``selected_functions`` then ``executions``."""
    if isinstance(evidence, dict):
        calls = []
        for field in ("selected_functions", "executions"):
            entries = evidence.get(field)
            if isinstance(entries, _SEQUENCES):
                calls += [(entry_identity(e), None) for e in entries]
        return calls
    return [(span_tool_identity(s), span_tool_name(s)) for s in tool_spans_in_order(evidence) or []]


def tool_call_not_allowed(spans_or_tool_calls: Any, allowlist: Any) -> str | None:
    """The message naming the first captured tool call outside ``allowlist`` (for ``toolCallNotAllowed``).

    ``spans_or_tool_calls`` is a row's span list or its ``diagnostics.tool_calls`` object. A call is allowed
    when its ``plugin_function`` identifier, or (for a span) its tool name as captured, is in the trimmed
    allowlist, exactly. A call whose identity is incomplete and whose captured name is not listed cannot be
    shown to be allowed and is reported (fail closed). None when every call is allowed or nothing was
    captured; an absent allowlist allows nothing.
    """
    if is_absent(spans_or_tool_calls):
        return None
    allowed = set(allow_list(allowlist, "allowed_tools"))
    listed = ", ".join(repr(a) for a in sorted(allowed)) if allowed else "empty"
    for identity, raw in _captured_calls(spans_or_tool_calls):
        identifier = tool_identifier(*identity) if is_complete(identity) else None
        if identifier in allowed or raw in allowed:
            continue
        if identifier is not None:
            return f"Tool call '{identifier}' is not allowed (allowed_tools: {listed})."
        if raw is not None:
            return f"Tool call '{raw}' is not allowed (allowed_tools: {listed})."
        return (
            f"Tool call {show_identity(identity)} has an incomplete identity and cannot be matched against "
            f"allowed_tools ({listed})."
        )
    return None
