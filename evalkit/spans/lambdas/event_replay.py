"""Replaying a recorded AgentCore Lambda event through a handler, as Lambda would run it.

The event is what the service sends a code-based evaluator (not a span): ``schemaVersion``, ``evaluatorId``,
``evaluatorName``, ``evaluationLevel``, ``evaluationInput.sessionSpans``, ``evaluationReferenceInputs``,
``evaluationTarget``. ``read_event`` checks the keys a handler cannot do without (``evaluationLevel`` and
``evaluationInput.sessionSpans``, the two AWS's SDK decorator reads unguarded) and refuses a span file by
name. ``replay`` sends the event's JSON text to a worker process of the runner (the handler gets its own
copy, parsed afresh as by the runtime), calls the handler there with a Lambda-like context within the time
limit (kept from evalkit's side: the worker's process group is killed), and passes its return value through
JSON as the runtime does: ``Replay.response`` is the JSON the function would have returned (or the error
object Lambda returns when a handler raises, times out or returns something JSON cannot carry), and
``Replay.problem`` says why it is not a valid evaluator response (``read_response``), or is None.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.documents.json_input import JsonInputError, parse_json, read_limited
from evalkit.errors import EvalkitError, EvaluatorCrashed, shown
from evalkit.spans.lambdas.evaluator_workers import call_in, start_worker
from evalkit.spans.lambdas.invocation import InvalidResponse, read_response
from evalkit.spans.lambdas.payload import PAYLOAD_LIMIT
from evalkit.spans.lambdas.results import CRASHED
from evalkit.spans.lambdas.span_evaluator import LEVELS, SpanEvaluator
from evalkit.usercode.output_tail import Logs
from evalkit.usercode.worker import CallTimedOut

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
    records it), ``problem`` (why the call gave no valid evaluator response, or None) and ``logs`` (what the
    handler printed, kept apart from its response as Lambda keeps them)."""

    response: Any
    fields: dict
    problem: str | None = None
    logs: Logs = Logs()


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
    """Call ``evaluator``'s handler on the event ``text`` as Lambda would, in a worker process of the runner
    (``evaluator_workers``); see the module docstring. The worker and every process the handler started are
    gone when this returns; ``Replay.logs`` is what the handler printed."""
    function = getattr(evaluator, "function", "lambda_handler")
    with start_worker(evaluator) as worker:
        try:
            data = call_in(worker, text, timeout)
        except CallTimedOut:
            message = f"Task timed out after {timeout:.2f} seconds"
            fields = {"errorCode": "Timeout", "errorMessage": message}
            return Replay({"errorMessage": message}, fields, message, worker.logs())
        except EvaluatorCrashed as exc:
            return _crashed(exc, worker.logs())
        logs = worker.logs()
    if "raised" in data:
        return _raised(data, evaluator, function, logs)
    if "unmarshalable" in data:
        message = f"Unable to marshal response: {data['unmarshalable']}"
        error = {"errorMessage": message, "errorType": "Runtime.MarshalError", "requestId": data["requestId"]}
        return Replay(
            error, {"errorCode": "InvalidEvaluatorResponse", "errorMessage": message}, message, logs
        )
    response = data["returned"]
    try:  # the contract is checked here, in evalkit's process, on the data the worker sent
        return Replay(response, read_response(response, function), None, logs)
    except InvalidResponse as exc:
        fields = {"errorCode": "InvalidEvaluatorResponse", "errorMessage": str(exc)}
        return Replay(response, fields, str(exc), logs)


def _crashed(exc: EvaluatorCrashed, logs: Logs) -> Replay:
    """Lambda's error object for a runtime that exited (``Runtime.ExitError``)."""
    status = exc.how or "did not start"
    error = {
        "errorType": "Runtime.ExitError",
        "errorMessage": f"RequestId: {uuid.uuid4()} Error: Runtime exited with error: {status}",
    }
    return Replay(error, {"errorCode": CRASHED, "errorMessage": str(exc)}, str(exc), logs)


def _raised(data: dict, evaluator: SpanEvaluator, function: str, logs: Logs) -> Replay:
    """Lambda's error object for a handler that raised (``errorMessage``, ``errorType``, ``stackTrace``)."""
    raised = data["raised"]
    error = {
        "errorMessage": raised["message"],
        "errorType": raised["type"],
        "requestId": data["requestId"],
        "stackTrace": raised["stackTrace"],
    }
    message = f"{function} raised {raised['type']}: {raised['message']}{raised['line']}"
    return Replay(error, {"errorCode": "EvaluatorException", "errorMessage": message}, message, logs)
