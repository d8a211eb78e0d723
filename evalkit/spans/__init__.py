"""OpenTelemetry spans and AgentCore-compatible code-based (Lambda) evaluators.

    from evalkit import spans
    df = spans.load("traces/otlp.json")              # one row per span; OTLP JSON or CloudWatch JSONL
    spans.sessions(df)                               # one row per session: traces, spans, tool calls
    ev = spans.load_span_evaluator("schema_check")   # custom-evaluators/schema_check/schema_check.py
    results = spans.evaluate_spans(df, [ev])         # AgentCore Evaluate-style result entries

A span evaluator is a plain AWS Lambda handler; `evalkit spans package NAME` zips it for AWS Lambda.

Modules, as the data flows:

- spans in: ``loading`` (``load``: span files, problems per line) reads OTLP JSON with ``otlp_json`` and
  CloudWatch flat documents with ``span_document`` (the canonical span document both become);
  ``span_frame`` builds the frame, its derived columns and ``sessions``.
- offline evaluation: ``span_evaluator`` (``load_span_evaluator``, levels), ``payload`` (the AgentCore
  payload per session, trace or tool call, 6 MB truncation), ``invocation`` (the call, its timeout and the
  response contract), ``evaluator_workers`` (each code-based evaluator in a worker process: a hang is killed,
  a crash costs one result), ``results`` (result entries, ``results_frame``, ``passing``), ``lambda_runner``
  (``evaluate_spans``, which puts them together).
- LLM-as-judge span evaluators (AgentCore's ``Builtin.<Name>`` and custom ``<name>.json``): ``message_forms``
  (prompts, answers, tool calls and tool definitions in every span form) and ``conversation`` (turns and the
  placeholders ``context``, ``assistant_turn``, ``tool_turn``, ``available_tools``); ``builtin_judges`` (the
  thirteen built-ins as data), ``llm_evaluator`` (``LLMSpanEvaluator``: checking a configuration, the prompt,
  reading the answer), ``judge_runner`` (``SpanJudges``: model, pool, cache; ``evaluate_llm``) and
  ``evaluator_specs`` (a name on the command line to an evaluator of the right kind).
- online evaluation (``evalkit spans serve``): ``online`` (``serve``: the server and its loop) with
  ``intake`` (decoding ``POST /v1/traces``; ``otlp_protobuf`` for protobuf bodies), ``receiver`` (the aiohttp
  server: keep-alive, idle timeout, TLS), ``store`` (SQLite, group commit), ``store_lock`` (one receiver per
  store), ``session_tracking`` (timeouts, sampling,
  filters), ``session_evaluation`` and ``exports`` (results.jsonl, metrics.jsonl, alarms); ``online_views``
  reads a store back (``online_frame``, ``pass_rate_over_time``, ``status``).

Nothing here imports pandas or plotly until it is used.

May import: ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: The public names and the module of each, imported on first use (PEP 562): a worker process that imports
#: only ``evaluator_workers`` (and the modules it needs) starts without the rest of the package.
_API = {
    "COLUMNS": "evalkit.spans.span_frame",
    "DEFAULT_TIMEOUT": "evalkit.spans.invocation",
    "LEVELS": "evalkit.spans.span_evaluator",
    "LLMSpanEvaluator": "evalkit.spans.llm_evaluator",
    "PAYLOAD_LIMIT": "evalkit.spans.payload",
    "SpanEvaluator": "evalkit.spans.span_evaluator",
    "SpanJudges": "evalkit.spans.judge_runner",
    "evaluate_spans": "evalkit.spans.lambda_runner",
    "load": "evalkit.spans.loading",
    "load_span_evaluator": "evalkit.spans.span_evaluator",
    "online_frame": "evalkit.spans.online_views",
    "pass_rate_over_time": "evalkit.spans.online_views",
    "passing": "evalkit.spans.results",
    "read_response": "evalkit.spans.invocation",
    "results_frame": "evalkit.spans.results",
    "serve": "evalkit.spans.online",
    "sessions": "evalkit.spans.span_frame",
}

__all__ = [
    "COLUMNS",
    "DEFAULT_TIMEOUT",
    "LEVELS",
    "LLMSpanEvaluator",
    "PAYLOAD_LIMIT",
    "SpanEvaluator",
    "SpanJudges",
    "evaluate_spans",
    "load",
    "load_span_evaluator",
    "online_frame",
    "pass_rate_over_time",
    "passing",
    "read_response",
    "results_frame",
    "serve",
    "sessions",
]

if TYPE_CHECKING:
    from evalkit.spans.invocation import DEFAULT_TIMEOUT, read_response
    from evalkit.spans.judge_runner import SpanJudges
    from evalkit.spans.lambda_runner import evaluate_spans
    from evalkit.spans.llm_evaluator import LLMSpanEvaluator
    from evalkit.spans.loading import load
    from evalkit.spans.online import serve
    from evalkit.spans.online_views import online_frame, pass_rate_over_time
    from evalkit.spans.payload import PAYLOAD_LIMIT
    from evalkit.spans.results import passing, results_frame
    from evalkit.spans.span_evaluator import LEVELS, SpanEvaluator, load_span_evaluator
    from evalkit.spans.span_frame import COLUMNS, sessions


def __getattr__(name: str):
    """Import the public API on first use (PEP 562)."""
    try:
        module = _API[name]
    except KeyError:
        raise AttributeError(f"module 'evalkit.spans' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
