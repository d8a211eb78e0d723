"""OpenTelemetry spans and AgentCore-compatible code-based (Lambda) evaluators.

    from evalkit import spans
    df = spans.load("traces/otlp.json")              # one row per span; OTLP JSON or CloudWatch JSONL
    spans.sessions(df)                               # one row per session: traces, spans, tool calls
    ev = spans.load_span_evaluator("schema_check")   # custom-evaluators/schema_check/schema_check.py
    results = spans.evaluate_spans(df, [ev])         # AgentCore Evaluate-style result entries

A span evaluator is a plain AWS Lambda handler, so the same file is deployed to AgentCore unchanged.
"""

from __future__ import annotations

from evalkit.spans.lambda_runner import (
    DEFAULT_TIMEOUT,
    LEVELS,
    PAYLOAD_LIMIT,
    SpanEvaluator,
    evaluate_spans,
    load_span_evaluator,
    passing,
    read_response,
    results_frame,
)
from evalkit.spans.loading import COLUMNS, load, sessions
from evalkit.spans.online import online_frame, pass_rate_over_time, serve

__all__ = [
    "COLUMNS",
    "DEFAULT_TIMEOUT",
    "LEVELS",
    "PAYLOAD_LIMIT",
    "SpanEvaluator",
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
