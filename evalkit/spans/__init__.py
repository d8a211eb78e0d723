"""OpenTelemetry spans and AgentCore-compatible code-based (Lambda) evaluators.

    from evalkit import spans
    df = spans.load("traces/otlp.json")              # one row per span or event record; every shape on disk
    spans.sessions(df)                               # one row per session: traces, spans, tool calls
    ev = spans.load_span_evaluator("schema_check")   # custom-evaluators/schema_check/schema_check.py
    results = spans.evaluate_spans(df, [ev])         # AgentCore Evaluate-style result entries
    spans.to_document(df, out="regression.json")      # one eval item per trace, to re-run with --agent

A span evaluator is a plain AWS Lambda handler; `evalkit spans package NAME` zips it for AWS Lambda.

Subpackages, as the data flows (each ``__init__`` says what it holds and what it may import):

- ``reading``: telemetry in. ``loading`` (``load``: span files of every shape, problems per line),
  ``shapes`` (which shape a JSON value is: OTLP JSON, Collector lines, CloudWatch, snake_case, SDK
  ``to_json()``), ``session_ids`` (session attributes, else the trace's session, else the trace itself),
  ``span_document`` (the canonical span document), ``otlp_json`` / ``otlp_protobuf``, ``span_frame`` (the
  frame, its derived columns, ``sessions``), ``message_forms`` (prompts, answers, tool calls in every form,
  from a span, then its event records: ``record_content``; ``message_text`` the shared message reading).
- ``lambdas``: code-based evaluators as Lambda runs them. ``handler_location`` (which file and function),
  ``span_evaluator`` (``load_span_evaluator``, levels), ``payload`` (the AgentCore event, 6 MB truncation),
  ``invocation`` (the call, its deadline, the response contract), ``event_replay`` (a recorded event, as
  ``spans invoke`` runs it), ``evaluator_workers`` (a worker process per evaluator: a hang is killed, a crash
  costs one result), ``results`` (result entries, ``results_frame``, ``passing``), ``passing_rule`` (which
  labels pass: ``PASSING_LABELS``, an LLM judge's top label, else value >= 1.0), ``packaging`` (the zip),
  ``requirements_bundle`` (its pinned third-party packages, from pip).
- ``llm_judges``: AgentCore's ``Builtin.<Name>`` and custom ``<name>.json`` judges. ``builtin_judges``,
  ``judge_config`` (CreateEvaluator's shapes), ``llm_evaluator``, ``custom_llm_judges``, ``conversation``
  (turns and placeholders), ``ground_truth`` (reference inputs), ``trajectory_match``
  (``Builtin.Trajectory*Match``, no model), ``judge_runner`` (``SpanJudges``).
- ``evaluator_specs`` (a name on the command line to an evaluator of the right kind) and ``evaluation``
  (``evaluate_spans``: both kinds over sessions), on top of those three.
- ``online``: ``evalkit spans serve``. ``server`` (``serve``), ``intake``, ``receiver``, ``store``,
  ``store_lock``, ``session_tracking``, ``session_evaluation``, ``exports``, ``views`` (``online_frame``,
  ``pass_rate_over_time``, ``status``).
- ``datasets``: traces to eval documents (``to_document``, ``evalkit spans to-document``): ``selection``,
  ``store_sessions``, ``retrieval``, ``items``.

Layers inside, bottom up: ``reading`` < ``lambdas`` < ``llm_judges`` < ``evaluator_specs`` / ``evaluation``
< ``online`` < ``datasets`` (``tests/test_layout.py`` holds them).

Nothing here imports pandas or plotly until it is used.

May import: ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: The public names and the module of each, imported on first use (PEP 562): a worker process that imports
#: only ``evaluator_workers`` (and the modules it needs) starts without the rest of the package.
_API = {
    "COLUMNS": "evalkit.spans.reading.span_frame",
    "DEFAULT_TIMEOUT": "evalkit.spans.lambdas.invocation",
    "LEVELS": "evalkit.spans.lambdas.span_evaluator",
    "LLMSpanEvaluator": "evalkit.spans.llm_judges.llm_evaluator",
    "PAYLOAD_LIMIT": "evalkit.spans.lambdas.payload",
    "SpanEvaluator": "evalkit.spans.lambdas.span_evaluator",
    "SpanJudges": "evalkit.spans.llm_judges.judge_runner",
    "evaluate_spans": "evalkit.spans.evaluation",
    "load": "evalkit.spans.reading.loading",
    "load_span_evaluator": "evalkit.spans.lambdas.span_evaluator",
    "online_frame": "evalkit.spans.online.views",
    "pass_rate_over_time": "evalkit.spans.online.views",
    "passing": "evalkit.spans.lambdas.results",
    "read_response": "evalkit.spans.lambdas.invocation",
    "results_frame": "evalkit.spans.lambdas.results",
    "serve": "evalkit.spans.online.server",
    "sessions": "evalkit.spans.reading.span_frame",
    "to_document": "evalkit.spans.datasets.to_document",
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
    "to_document",
]

if TYPE_CHECKING:
    from evalkit.spans.datasets.to_document import to_document
    from evalkit.spans.evaluation import evaluate_spans
    from evalkit.spans.lambdas.invocation import DEFAULT_TIMEOUT, read_response
    from evalkit.spans.lambdas.payload import PAYLOAD_LIMIT
    from evalkit.spans.lambdas.results import passing, results_frame
    from evalkit.spans.lambdas.span_evaluator import LEVELS, SpanEvaluator, load_span_evaluator
    from evalkit.spans.llm_judges.judge_runner import SpanJudges
    from evalkit.spans.llm_judges.llm_evaluator import LLMSpanEvaluator
    from evalkit.spans.online.server import serve
    from evalkit.spans.online.views import online_frame, pass_rate_over_time
    from evalkit.spans.reading.loading import load
    from evalkit.spans.reading.span_frame import COLUMNS, sessions


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
