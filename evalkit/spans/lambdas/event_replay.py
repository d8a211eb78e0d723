"""Replaying a recorded AgentCore Lambda event through a handler, as Lambda would run it.

The event is what the service sends a code-based evaluator (not a span): ``schemaVersion``, ``evaluatorId``,
``evaluatorName``, ``evaluationLevel``, ``evaluationInput.sessionSpans``, ``evaluationReferenceInputs``,
``evaluationTarget``. ``read_event`` checks the keys a handler cannot do without (``evaluationLevel`` and
``evaluationInput.sessionSpans``, the two AWS's SDK decorator reads unguarded) and refuses a span file by
name. ``replay`` parses the event's JSON text afresh (the handler gets its own copy, as from the runtime),
calls the handler with a Lambda-like context within the time limit, and passes its return value through
JSON as the runtime does: ``Replay.response`` is the JSON the function would have returned (or the error
object Lambda returns when a handler raises, times out or returns something JSON cannot carry), and
``Replay.problem`` says why it is not a valid evaluator response (``read_response``), or is None.
"""

from __future__ import annotations

import json
import os
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.documents.json_input import JsonInputError, parse_json, read_limited
from evalkit.errors import EvalkitError, shown
from evalkit.spans.lambdas.invocation import Caller, InvalidResponse, LambdaContext, TimedOut, read_response
from evalkit.spans.lambdas.payload import PAYLOAD_LIMIT
from evalkit.spans.lambdas.span_evaluator import LEVELS, SpanEvaluator, source_line

EVENT_KEYS = (
    "schemaVersion",
    "evaluatorId",
    "evaluatorName",
    "evaluationLevel",
    "evaluationInput",
    "evaluationReferenceInputs",
    "evaluationTarget",
)


@dataclass
class Replay:
    """One replayed call: ``response`` (JSON-ready), ``fields`` (the result it gives, as ``spans eval``
    records it) and ``problem`` (why the call gave no valid evaluator response, or None)."""

    response: Any
    fields: dict
    problem: str | None = None


def read_event(path: str | os.PathLike) -> tuple[dict, str]:
    """``(event, its JSON text)`` of a recorded AgentCore event file, or an ``EvalkitError`` naming the file."""
    source = Path(path)
    if not source.is_file():
        raise EvalkitError(f"{shown(source)}: event file not found")
    data = read_limited(source, PAYLOAD_LIMIT, what="AgentCore event (Lambda takes at most 6 MB)")
    try:
        text = data.decode("utf-8")
        event = parse_json(text)
    except UnicodeDecodeError as exc:
        raise EvalkitError(
            f"{shown(source)}: the event is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    except JsonInputError as exc:
        if _is_telemetry(_first_line(text)):
            raise EvalkitError(_telemetry_message(source)) from None
        raise EvalkitError(f"{shown(source)}: the event is not valid JSON ({exc})") from None
    if not isinstance(event, dict):
        raise EvalkitError(f"{shown(source)}: the event must be a JSON object with {', '.join(EVENT_KEYS)}")
    if "evaluationInput" not in event and _is_telemetry(event):
        raise EvalkitError(_telemetry_message(source))
    level = event.get("evaluationLevel")
    if level not in LEVELS:
        raise EvalkitError(
            f"{shown(source)}: 'evaluationLevel' is {level!r}, not one of {', '.join(LEVELS)} (an AgentCore event "
            f"carries {', '.join(EVENT_KEYS)})"
        )
    given = event.get("evaluationInput")
    spans = given.get("sessionSpans") if isinstance(given, dict) else None
    if not isinstance(spans, list):
        raise EvalkitError(
            f"{shown(source)}: 'evaluationInput.sessionSpans' must be a list of spans and event records"
        )
    return event, text


def _first_line(text: str):
    try:
        return parse_json(text.lstrip().split("\n", 1)[0])
    except JsonInputError:
        return None


def _is_telemetry(doc) -> bool:
    """A span, an event record or an OTLP export: what span files hold, not an event."""
    return isinstance(doc, dict) and (
        "resourceSpans" in doc or "resourceLogs" in doc or ("traceId" in doc and "spanId" in doc)
    )


def _telemetry_message(source: Path) -> str:
    return (
        f"{shown(source)} holds telemetry (spans or event records), not an AgentCore Lambda event: replay an event "
        f"({', '.join(EVENT_KEYS)}), or evaluate span files with evalkit spans eval"
    )


def replay(evaluator: SpanEvaluator, text: str, timeout: float) -> Replay:
    """Call ``evaluator``'s handler on the event ``text`` as Lambda would; see the module docstring."""
    function = getattr(evaluator, "function", "lambda_handler")
    context = LambdaContext(evaluator.name, timeout)
    caller = Caller()
    try:
        ok, out = caller(evaluator.handler, parse_json(text), context, timeout)
    except TimedOut:
        message = f"Task timed out after {timeout:.2f} seconds"
        return Replay({"errorMessage": message}, {"errorCode": "Timeout", "errorMessage": message}, message)
    finally:
        caller.close()
    if not ok:
        return _raised(out, evaluator, context, function)
    try:
        response = json.loads(json.dumps(out, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        message = f"Unable to marshal response: {exc}"
        error = {
            "errorMessage": message,
            "errorType": "Runtime.MarshalError",
            "requestId": context.aws_request_id,
        }
        return Replay(error, {"errorCode": "InvalidEvaluatorResponse", "errorMessage": message}, message)
    try:
        return Replay(response, read_response(response, function))
    except InvalidResponse as exc:
        return Replay(response, {"errorCode": "InvalidEvaluatorResponse", "errorMessage": str(exc)}, str(exc))


def _raised(exc: BaseException, evaluator: SpanEvaluator, context: LambdaContext, function: str) -> Replay:
    """Lambda's error object for a handler that raised (``errorMessage``, ``errorType``, ``stackTrace``)."""
    frames = traceback.extract_tb(exc.__traceback__)
    error = {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "requestId": context.aws_request_id,
        "stackTrace": [line.rstrip("\n") for line in traceback.format_list(frames)],
    }
    message = f"{function} raised {type(exc).__name__}: {exc}{source_line(exc, evaluator.path)}"
    return Replay(error, {"errorCode": "EvaluatorException", "errorMessage": message}, message)
