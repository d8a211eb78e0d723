"""Tool calls read from captured spans: the old home of ``evalkit.spans.reading.tool_calls``.

The reading moved into ``evalkit.spans`` so that ``evalkit.spans.to_document`` (traces to eval documents)
builds ``diagnostics.tool_calls`` with the rule the tool-call evaluators judge by; the names stay importable
from here.
"""

from __future__ import annotations

from evalkit.spans.reading.tool_calls import (
    FUNCTION_ATTRIBUTE,
    HTTP_STATUS_KEYS,
    PLUGIN_ATTRIBUTE,
    TOOL_NAME_KEYS,
    TOOL_PREFIX,
    Identity,
    as_integer,
    entry_identity,
    is_absent,
    is_complete,
    show_identity,
    span_tool_identity,
    span_tool_name,
    split_tool_name,
    tool_calls_from_spans,
    tool_identifier,
    tool_spans_in_order,
)

__all__ = [
    "FUNCTION_ATTRIBUTE",
    "HTTP_STATUS_KEYS",
    "PLUGIN_ATTRIBUTE",
    "TOOL_NAME_KEYS",
    "TOOL_PREFIX",
    "Identity",
    "as_integer",
    "entry_identity",
    "is_absent",
    "is_complete",
    "show_identity",
    "span_tool_identity",
    "span_tool_name",
    "split_tool_name",
    "tool_calls_from_spans",
    "tool_identifier",
    "tool_spans_in_order",
]
