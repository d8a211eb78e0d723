"""Tool calls read from captured spans: which spans are tool calls, each call's identity and status, and the
upstream (schema 1.11) ``diagnostics.tool_calls`` object built from them::

    {"selected_functions": [{"plugin_name", "function_name"}, ...] | null,
     "executions": [{"plugin_name", "function_name", "response_status"}, ...] | null,
     "evidence_error"?: "..."}

An identity is the pair (plugin_name, function_name); a part that is unknown is None. ``toolcalls`` judges
this evidence, ``tool_allowlist`` checks the calls against an allowlist.

Tool identity from a span (``span_tool_identity``)
    A span is a tool span when its name starts with ``"execute_tool "``, or it has a non-empty
    ``gen_ai.tool.name``, or ``traceloop.span.kind == "tool"`` (the rule of ``span_frame``). Its
    tool name is the first non-blank of ``gen_ai.tool.name``, ``tool.name``, ``traceloop.entity.name``, else
    the span name without ``"execute_tool "``.

    The tool's whole name is its function name, as the agent called it: ``identify_broker`` ->
    (None, ``identify_broker``). Names are never cut at a ``_`` or ``.``: LangGraph, pydantic-ai, the OpenAI
    Agents SDK, Strands and MCP tools are named freely (``get_weather`` has no namespace ``get``). A plugin is
    set only where a real namespace is known, the first non-blank of:

    * ``evalkit.tool.plugin``, set by the agent on its tool spans;
    * ``mcp.server.name``, the MCP server the tool belongs to (set by MCP instrumentations that record it).

    With a plugin, the function is the tool name with a leading ``<plugin>_`` or ``<plugin>.`` removed (a
    client that prefixes a tool with its server's name), else the whole name. Microsoft 365 Developer Info
    identities come already split, in the ``diagnostics.tool_calls`` of upstream documents.

    ``gen_ai.system`` is deliberately *not* used: it names the model provider (``openai``, ``aws.bedrock``),
    not the tool's namespace, and would give every tool of an agent the same plugin.

The names a call answers to (``call_names``)
    Allowlists and expected calls use upstream ``namespace_toolname`` identifiers (``plugin + "_" +
    function``). A call answers to its identifier when both parts are known, to its function name when it has
    no plugin (the tool's whole name: a tool ``github_orgs_get`` of an agent outside Microsoft 365 is the
    upstream ``github_orgs_get``), and, for a span, to its tool name as captured. An identity with no
    function name answers to nothing: it is incomplete.

Execution status from a span
    ``response_status`` is the first integer of ``http.response.status_code`` / ``http.status_code`` (an
    int, an integral float, or a digit string); failing that, 200 for span status OK / UNSET (or no status)
    and 500 for ERROR (numeric OTLP codes 0/1/2 and the ``STATUS_CODE_`` prefix are understood); any other
    status gives null. Every tool span is one execution; ``selected_functions`` holds the distinct
    identities in order of first call. Spans are taken in start-time order; a repeated
    (traceId, spanId) pair is counted once.
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any

import numpy as np

TOOL_PREFIX = "execute_tool "
#: Attribute names holding a tool span's tool name, first non-blank one wins (as in ``evalkit.spans``).
TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
#: Attribute names holding a tool's namespace (its plugin), first non-blank one wins.
PLUGIN_KEYS = ("evalkit.tool.plugin", "mcp.server.name")
HTTP_STATUS_KEYS = ("http.response.status_code", "http.status_code")
_PLUGIN_SEPARATORS = ("_", ".")
_OTLP_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_SPAN_STATUS_HTTP = {"UNSET": 200, "OK": 200, "ERROR": 500}
_SEQUENCES = (list, tuple, np.ndarray)

Identity = tuple["str | None", "str | None"]


def is_absent(value: Any) -> bool:
    """None or a float NaN (what an empty DataFrame cell reads as)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _name(value: Any) -> str | None:
    """A usable identity part: a non-blank string, as is; anything else is unknown (None)."""
    return value if isinstance(value, str) and value.strip() else None


def as_integer(value: Any) -> int | None:
    """An integer (a status, a start time) from an int, an integral float or a digit string; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def is_complete(identity: Identity) -> bool:
    """Both parts of the identity are known."""
    return identity[0] is not None and identity[1] is not None


def tool_identifier(plugin_name: str, function_name: str) -> str:
    """The upstream ``namespace_toolname`` identifier: ``github`` + ``orgs_get`` -> ``github_orgs_get``."""
    return f"{plugin_name}_{function_name}"


def show_identity(identity: Identity) -> str:
    """The identity for messages: its identifier, its whole name when it has no plugin (the tool as the agent
    called it), with a placeholder for an unknown function."""
    plugin, function = identity
    if plugin is None:
        return function or "<unknown tool>"
    return tool_identifier(plugin, function or "<unknown function>")


def entry_identity(entry: Any) -> Identity:
    """The identity of a ``selected_functions`` / ``executions`` entry (an entry that is not an object is
    wholly unknown)."""
    if not isinstance(entry, dict):
        return (None, None)
    return (_name(entry.get("plugin_name")), _name(entry.get("function_name")))


def call_names(identity: Identity, captured: str | None = None) -> list[str]:
    """The names a call answers to (module docstring): its ``namespace_toolname`` identifier when both parts
    are known, its function name when it has no plugin, and its tool name as captured (when given)."""
    plugin, function = identity
    names = []
    if function is not None:
        names.append(function if plugin is None else tool_identifier(plugin, function))
    if captured is not None and captured not in names:
        names.append(captured)
    return names


def _attributes(span: dict) -> dict:
    attributes = span.get("attributes")
    return attributes if isinstance(attributes, dict) else {}


def _first_name(attributes: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        found = _name(attributes.get(key))
        if found is not None:
            return found.strip()
    return None


def _is_tool_span(span: dict) -> bool:
    """A tool-call span: ``execute_tool ...`` by name, or a ``gen_ai.tool.name``, or Traceloop's tool kind."""
    name = span.get("name")
    attributes = _attributes(span)
    return (
        (isinstance(name, str) and name.startswith(TOOL_PREFIX))
        or bool(attributes.get("gen_ai.tool.name"))
        or attributes.get("traceloop.span.kind") == "tool"
    )


def span_tool_name(span: dict) -> str | None:
    """A tool span's tool name: the first of ``TOOL_NAME_KEYS``, else the span name sans ``execute_tool ``."""
    found = _first_name(_attributes(span), TOOL_NAME_KEYS)
    if found is not None:
        return found
    name = span.get("name")
    if not isinstance(name, str):
        return None
    return _name(name.removeprefix(TOOL_PREFIX).strip())


def span_tool_identity(span: dict) -> Identity:
    """(plugin_name, function_name) of a tool span, by the rule of the module docstring."""
    name = span_tool_name(span)
    plugin = _first_name(_attributes(span), PLUGIN_KEYS)
    if plugin is None or name is None:
        return (plugin, name)
    for sep in _PLUGIN_SEPARATORS:
        if name.startswith(plugin + sep) and len(name) > len(plugin) + 1:
            return (plugin, name[len(plugin) + 1 :])
    return (plugin, name)


def _span_status(span: dict) -> int | None:
    """The execution's HTTP status: the HTTP attributes, else 200 for OK/UNSET and 500 for ERROR."""
    attributes = _attributes(span)
    for key in HTTP_STATUS_KEYS:
        status = as_integer(attributes.get(key))
        if status is not None:
            return status
    status = span.get("status")
    code = status.get("code", 0) if isinstance(status, dict) else status
    if code is None:
        code = 0
    if isinstance(code, Integral) and not isinstance(code, bool):
        code = _OTLP_STATUS.get(int(code))
    elif isinstance(code, str):
        code = code.strip().upper().removeprefix("STATUS_CODE_")
    else:
        code = None
    return _SPAN_STATUS_HTTP.get(code)


def _span_list(spans: Any) -> list[dict]:
    """A cell's span documents: a list (or array) of dicts, or a loaded span frame's ``document`` column."""
    if is_absent(spans):
        return []
    columns = getattr(spans, "columns", None)
    if columns is not None:
        spans = spans["document"].tolist() if "document" in columns else []
    if not isinstance(spans, _SEQUENCES):
        return []
    return [s for s in spans if isinstance(s, dict)]


def tool_spans_in_order(spans: Any) -> list[dict] | None:
    """The tool spans in start-time order (stable), each (traceId, spanId) once; None when no span at all."""
    docs = _span_list(spans)
    if not docs:
        return None
    seen: set[tuple] = set()
    tools = []
    for doc in docs:
        if not _is_tool_span(doc):
            continue
        key = (doc.get("traceId"), doc.get("spanId"))
        if key[1] is not None:
            if key in seen:
                continue
            seen.add(key)
        tools.append(doc)

    def start(doc: dict) -> tuple[bool, int]:
        value = as_integer(doc.get("startTimeUnixNano"))
        return (value is None, value or 0)

    tools.sort(key=start)
    return tools


def tool_calls_from_spans(spans: Any) -> dict | None:
    """The upstream ``diagnostics.tool_calls`` object built from a row's captured spans.

    None when there is no span at all (evidence unavailable); spans without a tool span give the
    authoritative ``{"selected_functions": [], "executions": []}``.
    """
    tools = tool_spans_in_order(spans)
    if tools is None:
        return None
    selected: list[dict] = []
    seen: set[Identity] = set()
    executions = []
    for span in tools:
        plugin, function = span_tool_identity(span)
        if (plugin, function) not in seen:
            seen.add((plugin, function))
            selected.append({"plugin_name": plugin, "function_name": function})
        executions.append(
            {"plugin_name": plugin, "function_name": function, "response_status": _span_status(span)}
        )
    return {"selected_functions": selected, "executions": executions}
