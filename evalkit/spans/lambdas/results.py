"""Result entries of span evaluator calls, shaped like the Evaluate API's, and the tables made from them.

An entry is ``evaluatorName``, ``evaluatorId``, ``context.spanContext`` (``sessionId``, plus ``traceId`` for
TRACE and ``spanId`` for TOOL_CALL), then either ``label``/``value``/``explanation`` or
``errorCode``/``errorMessage``; absent keys are omitted. ``results_frame`` flattens entries into the columns of
results.csv (with ``passed`` when the evaluators are given), and ``passing`` counts the results a gate accepts,
each by its evaluator's rule (``passing_rule``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from evalkit.spans.lambdas.passing_rule import entry_passes, rules_by_id

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.spans.lambdas.span_evaluator import SpanEvaluator

#: Error codes evalkit gives to calls that did not produce a valid response.
TIMEOUT = "Timeout"
EXCEPTION = "EvaluatorException"
INVALID = "InvalidEvaluatorResponse"
TOO_LARGE = "PayloadTooLarge"
CRASHED = "EvaluatorCrashed"  # the worker process died during the call (os._exit, a segfault)
#: The columns of ``results_frame`` (and results.csv).
RESULT_COLUMNS = (
    "evaluatorName",
    "level",
    "sessionId",
    "traceId",
    "spanId",
    "label",
    "value",
    "explanation",
    "errorCode",
    "errorMessage",
)


def result_entry(
    evaluator: SpanEvaluator, session_id: str, trace_id: str | None, span_id: str | None
) -> dict:
    """The start of a result entry: who evaluated what (the target's span context)."""
    span_context = {"sessionId": session_id}
    if trace_id is not None:
        span_context["traceId"] = trace_id
    if span_id is not None:
        span_context["spanId"] = span_id
    return {
        "evaluatorName": evaluator.name,
        "evaluatorId": evaluator.evaluator_id,
        "context": {"spanContext": span_context},
    }


def result_level(entry: dict) -> str:
    """The level of a result, read from its span context (spanId: TOOL_CALL, traceId: TRACE, else SESSION)."""
    ctx = entry.get("context", {}).get("spanContext", {})
    return "TOOL_CALL" if "spanId" in ctx else "TRACE" if "traceId" in ctx else "SESSION"


def results_frame(results: list[dict], evaluators: Iterable[Any] | None = None) -> pd.DataFrame:
    """The result entries as a flat table (the columns of results.csv); with the ``evaluators`` that made
    them, a last column ``passed`` says whether each counts as passing by its evaluator's rule."""
    import pandas as pd

    rows = {c: [] for c in RESULT_COLUMNS}
    for entry in results:
        ctx = entry.get("context", {}).get("spanContext", {})
        rows["evaluatorName"].append(entry.get("evaluatorName"))
        rows["level"].append(result_level(entry))
        rows["sessionId"].append(ctx.get("sessionId"))
        rows["traceId"].append(ctx.get("traceId"))
        rows["spanId"].append(ctx.get("spanId"))
        for key in ("label", "value", "explanation", "errorCode", "errorMessage"):
            rows[key].append(entry.get(key))
    frame = pd.DataFrame(
        {k: pd.Series(v, dtype=object) for k, v in rows.items()}, columns=list(RESULT_COLUMNS)
    )
    frame["value"] = pd.to_numeric(frame["value"])
    if evaluators is not None:
        rules = rules_by_id(evaluators)
        frame["passed"] = pd.Series([entry_passes(e, rules) for e in results], dtype=bool)
    return frame


def passing(
    results: list[dict], threshold: float | None = None, evaluators: Iterable[Any] | None = None
) -> tuple[int, int]:
    """``(passing, total)``: the results that pass, of all.

    With ``evaluators`` (those that made the results), each result is judged by its evaluator's rule: its
    declared passing labels (``PASSING_LABELS``, an LLM judge's top label) or else the value rule. Without,
    an entry's own ``passed`` (set by the online receiver and the stream) counts, else the value rule. A
    ``threshold`` replaces the value rule's 1.0 for evaluators that declare no labels. Errors and results
    without a value or a passing label count against the rate: a gate must not pass because evaluators
    crashed, timed out or did not find what they check.
    """
    rules = rules_by_id(evaluators) if evaluators is not None else {}
    passed = 0
    for entry in results:
        if "errorCode" in entry:
            continue
        if entry.get("evaluatorId") in rules and rules[entry["evaluatorId"]] is not None:
            passed += entry_passes(entry, rules)
        elif evaluators is None and isinstance(entry.get("passed"), bool):
            passed += entry["passed"]
        elif threshold is not None:
            value = entry.get("value")
            passed += isinstance(value, (int, float)) and not isinstance(value, bool) and value >= threshold
        else:
            passed += entry_passes(entry, rules)
    return passed, len(results)
