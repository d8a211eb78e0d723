"""Result entries of span evaluator calls, shaped like the Evaluate API's, and the tables made from them.

An entry is ``evaluatorName``, ``evaluatorId``, ``context.spanContext`` (``sessionId``, plus ``traceId`` for
TRACE and ``spanId`` for TOOL_CALL), then either ``label``/``value``/``explanation`` or
``errorCode``/``errorMessage``; absent keys are omitted. ``results_frame`` flattens entries into the columns of
results.csv, and ``passing`` counts the results a gate accepts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def results_frame(results: list[dict]) -> pd.DataFrame:
    """The result entries as a flat table (the columns of results.csv)."""
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
    return frame


def passing(
    results: list[dict], threshold: float = 1.0, labels: dict[str, tuple[str, ...]] | None = None
) -> tuple[int, int]:
    """``(passing, total)``: results without an error whose numeric ``value`` is >= ``threshold``, of all.

    ``labels`` maps an ``evaluatorId`` to the labels that pass for it: its results pass by label instead (an
    LLM judge with a categorical scale, whose results carry a label and no value, as AgentCore's do). Errors
    and results without a value count against the rate: a gate must not pass because evaluators crashed or
    timed out.
    """
    labels = labels or {}

    def passed(r: dict) -> bool:
        if "errorCode" in r:
            return False
        if r.get("evaluatorId") in labels:
            return r.get("label") in labels[r["evaluatorId"]]
        return isinstance(r.get("value"), (int, float)) and r["value"] >= threshold

    return sum(1 for r in results if passed(r)), len(results)
