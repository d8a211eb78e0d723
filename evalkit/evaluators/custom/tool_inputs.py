"""The ``tool_calls`` and ``tool_definitions`` keyword arguments a custom LLM judge receives.

Why: azure-ai-evaluation's tool-focused ``.prompty`` judges (tool call accuracy, tool input accuracy, tool
output utilisation) are written for the agent's tool calls and the definitions of its tools; a custom judge
built on one of them needs both. They are passed only where the row has them, in azure-ai-evaluation's
shapes (``{"type": "tool_call", "tool_call_id", "name", "arguments"}`` and ``{"name", "description",
"parameters"}``), and a wrapper that does not use them absorbs them with its ``**_`` (the seed's contract:
``__call__`` accepts extras for forward compatibility). Where from, first found:

* the row's captured spans (an agent run, a trace): read as the built-in ToolCallAccuracy reads them
  (``llm_judges.builtin.tool_calls_and_definitions``);
* the item's link to its trace (``extensions["dev.evalkit.spans"].tool_calls``, written by ``spans
  to-document``): each call's ``name``, ``arguments`` and ``call_id``; a definition names the tool only.

``diagnostics.tool_calls`` holds identities and statuses, not arguments, so it gives neither.

May import: ``evalkit.evaluators.llm_judges``.
"""

from __future__ import annotations

from typing import Any

from evalkit.evaluators.llm_judges.builtin import tool_calls_and_definitions

#: The extension ``spans to-document`` links an item to its trace with.
SPANS_EXTENSION = "dev.evalkit.spans"


def tool_inputs(row: dict) -> dict[str, list[dict]]:
    """``{"tool_calls": [...], "tool_definitions": [...]}`` for a row (module docstring), or ``{}`` when it
    holds no tool call."""
    spans = row.get("spans")
    if isinstance(spans, list) and spans:
        calls, definitions = tool_calls_and_definitions([s for s in spans if isinstance(s, dict)])
    else:
        calls, definitions = _from_link(row.get("extensions"))
    if not calls:
        return {}
    return {"tool_calls": calls, "tool_definitions": definitions}


def _from_link(extensions: Any) -> tuple[list[dict], list[dict]]:
    link = extensions.get(SPANS_EXTENSION) if isinstance(extensions, dict) else None
    linked = link.get("tool_calls") if isinstance(link, dict) else None
    calls: list[dict] = []
    definitions: dict[str, dict] = {}
    for entry in linked if isinstance(linked, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            continue
        arguments = entry.get("arguments")
        call_id = entry.get("call_id")
        calls.append(
            {
                "type": "tool_call",
                "tool_call_id": str(call_id) if call_id else f"call_{len(calls) + 1}",
                "name": name,
                "arguments": arguments if isinstance(arguments, dict) else _wrapped(arguments),
            }
        )
        definitions.setdefault(
            name, {"name": name, "description": "", "parameters": {"type": "object", "properties": {}}}
        )
    return calls, list(definitions.values())


def _wrapped(arguments: Any) -> dict:
    """Arguments that are not an object, as ToolCallAccuracy's reading has them: none, or ``{"input": ...}``."""
    return {} if arguments is None else {"input": arguments}
