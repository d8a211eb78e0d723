"""Agents under test: a Python callable, a module path, or an OpenAI-compatible HTTP endpoint.

Items run concurrently, the turns of a thread in order with the conversation as history; failures carry the
upstream error codes; the OpenTelemetry spans an agent emits are captured per item.

    from evalkit.agents import run_agent, write_spans_jsonl

Modules, as the data flows: ``targets`` (resolve ``file.py:function``, ``package.module:function`` or an
``http(s)://`` endpoint into an agent and call it), ``calls`` (one row's call: retries, deadline, answer
or upstream error code), ``run`` (``run_agent``: items concurrently, thread turns in order with history),
``span_capture`` (OpenTelemetry spans routed per item, ``session.id``, ``write_spans_jsonl``). Nothing here
imports pandas, openai or OpenTelemetry until it is used.

May import: ``evalkit.judges`` (retry and deadline machinery), ``evalkit.evaluators``, ``evalkit.spans``,
``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_API = {
    "AgentResult": ("evalkit.agents.calls", "AgentResult"),
    "TURN_SKIPPED_MESSAGE": ("evalkit.agents.run", "TURN_SKIPPED_MESSAGE"),
    "resolve_target": ("evalkit.agents.targets", "resolve_target"),
    "run_agent": ("evalkit.agents.run", "run_agent"),
    "write_spans_jsonl": ("evalkit.agents.span_capture", "write_spans_jsonl"),
}

__all__ = ["TURN_SKIPPED_MESSAGE", "AgentResult", "resolve_target", "run_agent", "write_spans_jsonl"]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from evalkit.agents.calls import AgentResult
    from evalkit.agents.run import TURN_SKIPPED_MESSAGE, run_agent
    from evalkit.agents.span_capture import write_spans_jsonl
    from evalkit.agents.targets import resolve_target


def __getattr__(name: str):
    """Import the agents API on first use (PEP 562)."""
    try:
        module, attr = _API[name]
    except KeyError:
        raise AttributeError(f"module 'evalkit.agents' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
