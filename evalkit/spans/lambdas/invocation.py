"""Calling a Lambda handler as the service does: a deadline per call and the response contract.

Each call gets a Lambda-like context object. ``call_data`` calls the handler and says what it did as data (in
a worker process of the runner, ``evaluator_workers``, or here on the watched thread of ``Caller`` for
handlers without a file); ``data_fields`` reads that data in evalkit's own process. What the handler returns is checked against AgentCore's
response contract (``label`` with optional ``value`` and ``explanation``, or ``errorCode`` and
``errorMessage``; null keys count as absent, as AWS's SDK returns them) by ``read_response``, after a round trip through JSON as the Lambda runtime makes it.
"""

from __future__ import annotations

import json
import math
import queue
import sys
import threading
import time
import traceback
import uuid
from typing import Any

from evalkit.spans.lambdas.results import EXCEPTION, INVALID
from evalkit.spans.lambdas.span_evaluator import source_line

#: AWS Lambda's (and AgentCore's) time limit for one evaluator call, in seconds.
DEFAULT_TIMEOUT = 300.0
#: The service keeps this many characters of an explanation.
EXPLANATION_LIMIT = 2048

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class InvalidResponse(ValueError):
    """The handler's return value breaks the AgentCore response contract."""


def read_response(out: Any, handler: str = "lambda_handler") -> dict:
    """Check a handler's return value against the response contract; return the result fields it sets.

    Success: ``label`` (non-empty string), optional ``value`` (a finite number from 0.0 to 1.0, as a float)
    and optional ``explanation`` (a string, cut to 2048 characters). Error: a non-empty string ``errorCode``,
    with ``errorMessage`` (a string, or null: AWS's SDK allows an error without a message; evalkit then
    writes one saying so). Keys set to null count as absent: AWS's SDK
    (``bedrock_agentcore.evaluation.custom_code_based_evaluators``) returns ``EvaluatorOutput.model_dump()``,
    every key present, ``"errorCode": null`` on a success; an empty ``errorCode`` is no error either, as the
    SDK's own validator reads it. What comes back holds only the keys of one kind, so ``"errorCode" in
    entry`` is the test for an error everywhere downstream.

    The value is first passed through JSON, as the Lambda runtime does, so what is checked is what the service
    would receive. ``handler`` names the function in messages.
    """
    if not isinstance(out, dict):
        raise InvalidResponse(
            f"{handler} returned {_kind(out)}, not an object with 'label' (or 'errorCode' and 'errorMessage')"
        )
    try:
        out = json.loads(_dumps(out))
    except (TypeError, ValueError) as exc:
        raise InvalidResponse(f"the response is not JSON-serialisable ({exc})") from None
    code = out.get("errorCode")
    if code is not None and code != "":
        return _error_fields(code, out.get("errorMessage"))
    return _success_fields(out)


def _error_fields(code: Any, message: Any) -> dict:
    if not isinstance(code, str):
        raise InvalidResponse(f"'errorCode' must be a string, found {_kind(code)}")
    if message is None:
        message = f"the evaluator returned errorCode {code!r} without an errorMessage"
    elif not isinstance(message, str):
        raise InvalidResponse(f"'errorMessage' must be a string or null, found {_kind(message)}")
    return {"errorCode": code, "errorMessage": message}


def _success_fields(out: dict) -> dict:
    label = out.get("label")
    if label is None:
        stray = " ('errorMessage' is set but 'errorCode' is not)" if out.get("errorMessage") else ""
        raise InvalidResponse(
            f"the response has no 'label' (required on success; an error response needs a non-null "
            f"errorCode){stray}"
        )
    if not isinstance(label, str) or not label:
        raise InvalidResponse(f"'label' must be a non-empty string, found {_kind(label)}")
    fields: dict[str, Any] = {"label": label}
    value = out.get("value")
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InvalidResponse(f"'value' must be a number, found {_kind(value)}")
        if not 0.0 <= value <= 1.0:
            raise InvalidResponse(
                f"'value' {value!r} is outside 0.0-1.0 (AgentCore's score is an optional number between "
                f"0.0 and 1.0; label {label!r})"
            )
        fields["value"] = float(value)
    explanation = out.get("explanation")
    if explanation is not None:
        if not isinstance(explanation, str):
            raise InvalidResponse(f"'explanation' must be a string, found {_kind(explanation)}")
        fields["explanation"] = explanation[:EXPLANATION_LIMIT]
    return fields


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return {dict: "an object", list: "a list"}.get(type(value), type(value).__name__)


# --- calling the handler -------------------------------------------------------------------------------


class LambdaContext:
    """The parts of the Lambda context object evaluators use, with a deadline of ``timeout`` from now."""

    def __init__(self, name: str, timeout: float):
        self.function_name = name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:local:000000000000:function:{name}"
        self.memory_limit_in_mb = "128"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{name}"
        self.log_stream_name = "evalkit-local"
        self._deadline = time.monotonic() + timeout

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class TimedOut(Exception):
    pass


class _Worker:
    """A daemon thread that runs handler calls one at a time; abandoned (and told to stop) after a timeout."""

    def __init__(self):
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.results: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="evalkit-span-evaluator", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, event, context = job
            try:
                out = (True, fn(event, context))
            except BaseException as exc:  # noqa: BLE001 - user code: any failure is an error result
                out = (False, exc)
            self.results.put(out)


class Caller:
    """Calls a handler on a reusable worker thread and stops waiting at the deadline.

    A Python thread cannot be killed: a call that overruns keeps running in the background until it returns
    (the worker is a daemon, so it never holds up the exit). The next call gets a fresh worker.
    """

    def __init__(self):
        self._worker: _Worker | None = None

    def __call__(self, fn, event, context, timeout: float) -> tuple[bool, Any]:
        if self._worker is None:
            self._worker = _Worker()
        worker = self._worker
        worker.jobs.put((fn, event, context))
        try:
            return worker.results.get(timeout=timeout)
        except queue.Empty:
            worker.jobs.put(None)
            self._worker = None
            raise TimedOut from None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.jobs.put(None)
            self._worker = None


def call_data(handler, event: dict, context: LambdaContext, path, *, exits: bool = True) -> dict:
    """Call ``handler`` here and now; what it did, as data that crosses a pipe as JSON (no check yet).

    ``{"returned": response}`` (already known to pass through JSON), ``{"unmarshalable": why}`` (a return
    value JSON cannot carry), or ``{"raised": {"type", "message", "line", "stackTrace"}}``; each with the
    context's ``requestId``. With ``exits`` a ``SystemExit`` ends the calling process, as it ends a Lambda
    runtime (in a worker: the parent reports a crash); without, it is an exception like any other. The check
    of the response contract is ``data_fields``'s, in the process that reads the data.
    """
    request = {"requestId": context.aws_request_id}
    try:
        out = handler(event, context)
    except SystemExit:
        if exits:
            raise
        return {**request, "raised": _exception_data(sys.exc_info()[1], path)}
    except BaseException as exc:  # noqa: BLE001 - user code: any failure is an error result
        return {**request, "raised": _exception_data(exc, path)}
    try:
        json.dumps(out, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return {**request, "unmarshalable": str(exc)}
    return {**request, "returned": out}


def _exception_data(exc: BaseException, path) -> dict:
    frames = traceback.extract_tb(exc.__traceback__)
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "line": source_line(exc, path),
        "stackTrace": [line.rstrip("\n") for line in traceback.format_list(frames)],
    }


def data_fields(data: dict, function: str = "lambda_handler") -> dict:
    """The result fields of ``call_data``'s data: the response checked against the contract (here, in the
    reading process, where the handler cannot patch the check), or an error entry."""
    if "returned" in data:
        return response_fields(data["returned"], function)
    if "unmarshalable" in data:
        return {
            "errorCode": INVALID,
            "errorMessage": f"the response is not JSON-serialisable ({data['unmarshalable']})",
        }
    raised = data["raised"]
    return {
        "errorCode": EXCEPTION,
        "errorMessage": f"{function} raised {raised['type']}: {raised['message']}{raised['line']}",
    }


def call_fields(handler, event: dict, context: LambdaContext, path, function: str = "lambda_handler") -> dict:
    """Call ``handler`` in this process (a function without a file, or ``isolate=False``); its result fields.
    A ``SystemExit`` is the handler's exception here: it must not end evalkit."""
    return data_fields(call_data(handler, event, context, path, exits=False), function)


def response_fields(out: Any, function: str = "lambda_handler") -> dict:
    """``read_response``, with a contract violation as an error entry."""
    try:
        return read_response(out, function)
    except InvalidResponse as exc:
        return {"errorCode": INVALID, "errorMessage": str(exc)}
