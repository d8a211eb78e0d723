"""Run AgentCore-style code-based evaluators (AWS Lambda handlers) locally over a span frame.

A span evaluator is a folder ``custom-evaluators/<name>/<name>.py`` defining ``lambda_handler(event,
context)``: the same file deploys to AWS Lambda unchanged, because evalkit imports nothing into it and calls
it exactly as Amazon Bedrock AgentCore Evaluations does. That is the point: a check developed and gated in CI
with evalkit is the check that later scores production traffic, with no adapter to drift.

What is reproduced from the service:

* the payload: ``schemaVersion``, ``evaluatorId``, ``evaluatorName``, ``evaluationLevel``,
  ``evaluationInput.sessionSpans`` (every span document of the session, in start order),
  ``evaluationReferenceInputs`` and ``evaluationTarget`` (null for SESSION, the trace for TRACE, the trace and
  the tool-call span for TOOL_CALL); one call per session, trace or tool-call span;
* the 6 MB payload limit (``sessionSpans`` truncated: the latest spans outside the target go first);
* the 300 s Lambda time limit (per call, configurable);
* the response contract: ``label`` (string) with optional numeric ``value`` and string ``explanation`` (kept
  to 2048 characters), or ``errorCode`` and ``errorMessage``;
* the result entries of the Evaluate API: ``evaluatorName``, ``evaluatorId``, ``context.spanContext``,
  ``label``, ``value``, ``explanation``, ``errorCode``, ``errorMessage`` (absent keys omitted).

Every payload is serialised to JSON and parsed back before the call, as the Lambda runtime does: a handler
gets its own copy and cannot corrupt the spans the next call sees.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import json
import logging
import math
import os
import queue
import re
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.errors import EvalkitError, EvaluatorConfigError

log = logging.getLogger("evalkit.spans")

LEVELS = ("TRACE", "TOOL_CALL", "SESSION")
DEFAULT_LEVEL = "TRACE"
#: AWS Lambda's limit for a synchronous invocation payload.
PAYLOAD_LIMIT = 6 * 1024 * 1024
#: AWS Lambda's (and AgentCore's) time limit for one evaluator call, in seconds.
DEFAULT_TIMEOUT = 300.0
#: The service keeps this many characters of an explanation.
EXPLANATION_LIMIT = 2048
SCHEMA_VERSION = "1.0"
NAME_PATTERN = re.compile(r"[a-zA-Z][a-zA-Z0-9_]{0,47}")

#: Error codes evalkit gives to calls that did not produce a valid response.
TIMEOUT = "Timeout"
EXCEPTION = "EvaluatorException"
INVALID = "InvalidEvaluatorResponse"
TOO_LARGE = "PayloadTooLarge"

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class SpanEvaluator:
    """A Lambda-style evaluator: a ``lambda_handler(event, context)`` and the level it is registered at.

    ``evaluator_id`` is ``<name>-<10 characters>``, as AgentCore ids look, derived from the name and the level
    so that it is stable across runs (and differs per level, as separate registrations do).
    """

    def __init__(
        self,
        name: str,
        handler: Callable[[dict, Any], Any],
        *,
        level: str = DEFAULT_LEVEL,
        path: str | os.PathLike | None = None,
        module: Any = None,
    ):
        _check_name(name)
        if not callable(handler):
            raise EvaluatorConfigError(f"span evaluator '{name}': the handler is not callable")
        self.name = name
        self.handler = handler
        self.level = _level(level, f"span evaluator '{name}'")
        self.path = Path(path) if path is not None else None
        self.module = module
        digest = hashlib.sha256(f"{name}/{self.level}".encode()).hexdigest()
        self.evaluator_id = f"{name}-{digest[:10]}"

    def with_level(self, level: str) -> SpanEvaluator:
        """The same handler registered at another level (AgentCore registers one evaluator per level)."""
        return SpanEvaluator(self.name, self.handler, level=level, path=self.path, module=self.module)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return f"SpanEvaluator({self.name!r}, level={self.level!r}{where})"


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise EvaluatorConfigError(
            f"span evaluator name {name!r} is not valid: AgentCore names start with a letter and hold "
            "at most 48 letters, digits and underscores"
        )


def _level(value: Any, who: str) -> str:
    level = value.upper() if isinstance(value, str) else value
    if level not in LEVELS:
        raise EvaluatorConfigError(f"{who}: evaluation level {value!r} is not one of {', '.join(LEVELS)}")
    return level


def load_span_evaluator(
    name: str,
    custom_dir: str | os.PathLike | None = None,
    *,
    level: str | None = None,
    options: dict | None = None,
) -> SpanEvaluator:
    """Import ``<custom_dir>/<name>/<name>.py`` (default ``./custom-evaluators``) as a span evaluator.

    The level is the ``level`` argument, else ``options["level"]``, else the module's ``EVALUATION_LEVEL``,
    else TRACE. The evaluator's folder is on ``sys.path`` while it is imported, as the Lambda task root is,
    so it can import modules deployed beside it.
    """
    options = dict(options or {})
    unknown = sorted(set(options) - {"level"})
    if unknown:
        raise EvaluatorConfigError(
            f"span evaluator '{name}': unknown option(s) {', '.join(unknown)} (known: level)"
        )
    _check_name(name)
    root = Path(custom_dir) if custom_dir is not None else Path.cwd() / "custom-evaluators"
    folder = root / name
    path = folder / f"{name}.py"
    if not folder.is_dir():
        raise EvaluatorConfigError(
            f"span evaluator '{name}' not found: there is no folder {folder} (a span evaluator is "
            f"{root}/<name>/<name>.py defining lambda_handler(event, context))"
        )
    if not path.is_file():
        raise EvaluatorConfigError(
            f"span evaluator '{name}': {path} is missing (the file must be named after its folder)"
        )
    module = _import(name, path)
    handler = getattr(module, "lambda_handler", None)
    if handler is None:
        raise EvaluatorConfigError(
            f"span evaluator '{name}': {path} defines no lambda_handler(event, context)"
        )
    if not callable(handler):
        raise EvaluatorConfigError(f"span evaluator '{name}': lambda_handler in {path} is not a function")
    chosen = (
        level
        if level is not None
        else options.get("level", getattr(module, "EVALUATION_LEVEL", DEFAULT_LEVEL))
    )
    source = "the level option" if level is not None or "level" in options else f"EVALUATION_LEVEL in {path}"
    return SpanEvaluator(
        name, handler, level=_level(chosen, f"span evaluator '{name}' ({source})"), path=path, module=module
    )


def _import(name: str, path: Path):
    module_name = f"evalkit_span_evaluators.{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EvaluatorConfigError(f"span evaluator '{name}': cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up by name
    folder = str(path.parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise EvaluatorConfigError(
            f"span evaluator '{name}': {path} failed to import: SyntaxError: {exc.msg} (line {exc.lineno})"
        ) from None
    except KeyboardInterrupt:
        sys.modules.pop(module_name, None)
        raise
    except BaseException as exc:  # noqa: BLE001 - user code: any failure to import is a configuration error
        sys.modules.pop(module_name, None)
        raise EvaluatorConfigError(
            f"span evaluator '{name}': {path} failed to import: "
            f"{type(exc).__name__}: {exc}{_where(exc, path)}"
        ) from None
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    return module


def _where(exc: BaseException, path: Path | None) -> str:
    """`` (line N)`` of the deepest frame of ``exc`` inside the evaluator's file, if any."""
    if path is None:
        return ""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return f" (line {frames[-1].lineno})" if frames else ""


# --- evaluation ------------------------------------------------------------------------------------------


def evaluate_spans(
    spans: pd.DataFrame | str | os.PathLike,
    evaluators: Iterable[SpanEvaluator | str],
    *,
    session: str | Iterable[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    reference_inputs: list[dict] | None = None,
    custom_dir: str | os.PathLike | None = None,
) -> list[dict]:
    """Call each evaluator's ``lambda_handler`` with the AgentCore payload, per session, trace or tool call.

    ``spans`` is a frame from ``load`` (or a path to load). ``evaluators`` are ``SpanEvaluator`` objects or
    names (``name`` or ``name:LEVEL``) found in ``custom_dir``. ``session`` limits the run to one or more
    session ids. ``reference_inputs`` are AgentCore reference inputs (``{"context": {"spanContext":
    {"sessionId", ...}}, "expectedResponse": ..., "assertions": ..., "expectedTrajectory": ...}``); each
    payload carries those of its session. Returns one result entry per call, evaluator by evaluator, shaped
    like the entries of the Evaluate API's ``evaluationResults``; a failed call is an error entry and never
    stops the run.
    """
    if not isinstance(spans, pd.DataFrame):
        from evalkit.spans.loading import load

        spans = load(spans)
    resolved = _resolve(evaluators, custom_dir)
    if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0):
        raise EvalkitError(f"timeout must be a positive number of seconds, not {timeout!r}")
    groups = _sessions(spans, session)
    references = _references(reference_inputs)
    caller = _Caller()
    results: list[dict] = []
    # Every payload is parsed afresh: with the span frame on the heap, the cyclic collector's full scans of it
    # would cost more than the calls (2.6 s instead of 7.8 s for 40,000 calls over 100,000 spans). Freezing
    # what exists now keeps it out of those scans; new objects, the handlers' included, are still collected.
    freeze = gc.isenabled() and gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        for evaluator in resolved:
            started = time.perf_counter()
            before = len(results)
            head = _head(evaluator)
            for group in groups:
                refs = references.get(group.id, "[]")
                for trace_id, span_id in group.targets(evaluator.level):
                    results.append(
                        _evaluate_one(evaluator, head, group, trace_id, span_id, refs, timeout, caller)
                    )
            log.debug(
                "%s (%s): %d calls in %.3f s",
                evaluator.name,
                evaluator.level,
                len(results) - before,
                time.perf_counter() - started,
            )
    finally:
        caller.close()
        if freeze:
            gc.unfreeze()
    return results


def _resolve(evaluators: Iterable[SpanEvaluator | str], custom_dir) -> list[SpanEvaluator]:
    if isinstance(evaluators, (str, SpanEvaluator)):
        evaluators = [evaluators]
    resolved = []
    seen: set[tuple[str, str]] = set()
    for item in evaluators:
        if isinstance(item, str):
            name, _, level = item.partition(":")
            item = load_span_evaluator(name, custom_dir, level=level or None)
        elif not isinstance(item, SpanEvaluator):
            raise EvalkitError(
                f"evaluators must be SpanEvaluator objects or names, not {type(item).__name__} "
                "(wrap a handler as SpanEvaluator(name, lambda_handler, level=...))"
            )
        key = (item.name, item.level)
        if key in seen:
            raise EvalkitError(f"span evaluator '{item.name}' is given twice at level {item.level}")
        seen.add(key)
        resolved.append(item)
    if not resolved:
        raise EvalkitError("no span evaluator given")
    return resolved


class _Session:
    """One session's spans (in start order), its traces and tool calls, and their JSON, made on first use."""

    __slots__ = ("id", "docs", "trace_ids", "traces", "tools", "_texts", "_sizes")

    def __init__(self, session_id: str, docs: list, trace_ids: list, tools: list):
        self.id = session_id
        self.docs = docs
        self.trace_ids = trace_ids
        self.traces = list(dict.fromkeys(trace_ids))
        self.tools = tools
        self._texts: list[str] | None = None
        self._sizes: list[int] | None = None

    def targets(self, level: str) -> list[tuple[str | None, str | None]]:
        if level == "SESSION":
            return [(None, None)]
        if level == "TRACE":
            return [(t, None) for t in self.traces]
        return self.tools

    def texts(self) -> tuple[list[str], list[int]]:
        if self._texts is None:
            self._texts = [_dumps(d) for d in self.docs]
            self._sizes = [len(t) if t.isascii() else len(t.encode("utf-8")) for t in self._texts]
        return self._texts, self._sizes


def _sessions(spans: pd.DataFrame, wanted) -> list[_Session]:
    missing = [
        c for c in ("session_id", "trace_id", "span_id", "is_tool", "document") if c not in spans.columns
    ]
    if missing:
        raise EvalkitError(
            f"not a span frame from evalkit.spans.load: column(s) {', '.join(missing)} missing"
        )
    session_ids = spans["session_id"].tolist()
    trace_ids = spans["trace_id"].tolist()
    span_ids = spans["span_id"].tolist()
    tools = spans["is_tool"].tolist()
    docs = spans["document"].tolist()
    positions: dict[str, list[int]] = {}
    for i, s in enumerate(session_ids):
        if s is not None and s == s:
            positions.setdefault(s, []).append(i)
    if not spans["start_ns"].is_monotonic_increasing:  # a frame re-ordered or concatenated after load
        starts = spans["start_ns"].tolist()
        positions = {s: sorted(pos, key=starts.__getitem__) for s, pos in positions.items()}
    if not positions:
        raise EvalkitError(
            "no span carries a session id ('session.id' attribute): there is no session to evaluate"
        )
    if wanted is not None:
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        unknown = [n for n in names if n not in positions]
        if unknown:
            known = list(positions)
            shown = ", ".join(known[:5]) + (f" and {len(known) - 5} more" if len(known) > 5 else "")
            raise EvalkitError(
                f"session(s) {', '.join(map(repr, unknown))} not found in the spans; sessions: {shown}"
            )
        positions = {n: positions[n] for n in dict.fromkeys(names)}
    return [
        _Session(
            s,
            [docs[i] for i in pos],
            [trace_ids[i] for i in pos],
            [(trace_ids[i], span_ids[i]) for i in pos if tools[i]],
        )
        for s, pos in positions.items()
    ]


def _references(reference_inputs) -> dict[str, str]:
    """Reference inputs grouped by session id, each group already as its JSON array."""
    if reference_inputs is None:
        return {}
    if not isinstance(reference_inputs, list):
        raise EvalkitError("reference_inputs must be a list of AgentCore reference inputs")
    grouped: dict[str, list] = {}
    for i, ref in enumerate(reference_inputs):
        ctx = ref.get("context") if isinstance(ref, dict) else None
        span_ctx = ctx.get("spanContext") if isinstance(ctx, dict) else None
        session_id = span_ctx.get("sessionId") if isinstance(span_ctx, dict) else None
        if not isinstance(session_id, str):
            raise EvalkitError(f"reference input [{i}] has no context.spanContext.sessionId")
        grouped.setdefault(session_id, []).append(ref)
    try:
        return {k: _dumps(v) for k, v in grouped.items()}
    except (TypeError, ValueError) as exc:
        raise EvalkitError(f"reference inputs are not JSON-serialisable: {exc}") from None


def _head(evaluator: SpanEvaluator) -> str:
    """The payload's JSON up to the first span: the same for every call of one evaluator."""
    return (
        f'{{"schemaVersion":{_dumps(SCHEMA_VERSION)},"evaluatorId":{_dumps(evaluator.evaluator_id)},'
        f'"evaluatorName":{_dumps(evaluator.name)},"evaluationLevel":{_dumps(evaluator.level)},'
        '"evaluationInput":{"sessionSpans":['
    )


def _evaluate_one(
    evaluator: SpanEvaluator,
    head: str,
    group: _Session,
    trace_id: str | None,
    span_id: str | None,
    refs: str,
    timeout: float,
    caller: _Caller,
) -> dict:
    entry = _entry(evaluator, group.id, trace_id, span_id)
    target = None if trace_id is None else {"traceIds": [trace_id]}
    if span_id is not None:
        target["spanIds"] = [span_id]
    tail = f']}},"evaluationReferenceInputs":{refs},"evaluationTarget":{_dumps(target)}}}'
    texts, sizes = group.texts()
    keep = _fit(group, sizes, trace_id, span_id, len(head.encode()) + len(tail.encode()))
    if keep is None:
        entry["errorCode"] = TOO_LARGE
        entry["errorMessage"] = (
            f"the payload exceeds the {PAYLOAD_LIMIT // (1024 * 1024)} MB Lambda limit even with every span "
            "outside the evaluation target dropped; the evaluator was not called"
        )
        return entry
    dropped = len(texts) - len(keep)
    body = ",".join(texts) if not dropped else ",".join(texts[i] for i in keep)
    event = json.loads(head + body + tail)
    context = _Context(evaluator.name, timeout)
    started = time.perf_counter()
    try:
        ok, out = caller(evaluator.handler, event, context, timeout)
    except _TimedOut:
        entry["errorCode"] = TIMEOUT
        entry["errorMessage"] = f"lambda_handler did not return within {timeout:g} s (the Lambda time limit)"
        return _note_truncation(entry, dropped, len(texts))
    log.debug("%s %s/%s: %.4f s", evaluator.name, trace_id, span_id, time.perf_counter() - started)
    if not ok:
        entry["errorCode"] = EXCEPTION
        entry["errorMessage"] = (
            f"lambda_handler raised {type(out).__name__}: {out}{_where(out, evaluator.path)}"
        )
        return _note_truncation(entry, dropped, len(texts))
    try:
        entry.update(read_response(out))
    except InvalidResponse as exc:
        entry["errorCode"] = INVALID
        entry["errorMessage"] = str(exc)
    return _note_truncation(entry, dropped, len(texts))


def _entry(evaluator: SpanEvaluator, session_id: str, trace_id: str | None, span_id: str | None) -> dict:
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


def _fit(group: _Session, sizes: list[int], trace_id, span_id, envelope: int) -> list[int] | None:
    """Positions of the spans that fit in the payload limit, in order; None when even the target does not fit.

    Nothing is dropped when everything fits. Otherwise spans outside the target trace go first, latest start
    first; for a tool call, then the other spans of its trace, latest first; the target itself is never
    dropped (for TRACE the whole trace, for TOOL_CALL the span).
    """
    n = len(sizes)
    total = envelope + sum(sizes) + max(n - 1, 0)
    if total <= PAYLOAD_LIMIT:
        return list(range(n))
    trace_ids = group.trace_ids
    outside = [i for i in range(n - 1, -1, -1) if trace_ids[i] != trace_id]
    order = outside
    if span_id is not None:
        spans_of_trace = [i for i in range(n - 1, -1, -1) if trace_ids[i] == trace_id]
        order = outside + [i for i in spans_of_trace if group.docs[i].get("spanId") != span_id]
    dropped: set[int] = set()
    for i in order:
        if total <= PAYLOAD_LIMIT:
            break
        dropped.add(i)
        total -= sizes[i] + 1
    if total > PAYLOAD_LIMIT or len(dropped) == n:
        return None
    return [i for i in range(n) if i not in dropped]


def _note_truncation(entry: dict, dropped: int, total: int) -> dict:
    """Mark a result whose payload lost spans to the size limit, in ``truncated`` and in the text."""
    if not dropped:
        return entry
    entry["truncated"] = True
    note = (
        f" [evalkit: sessionSpans truncated to fit the {PAYLOAD_LIMIT // (1024 * 1024)} MB payload limit: "
        f"{dropped} of {total} spans dropped, latest first, the target's spans kept]"
    )
    if "errorCode" in entry:
        entry["errorMessage"] = entry["errorMessage"] + note
    else:
        text = entry.get("explanation") or ""
        entry["explanation"] = (text[: EXPLANATION_LIMIT - len(note)] + note).lstrip()
    return entry


class InvalidResponse(ValueError):
    """The handler's return value breaks the AgentCore response contract."""


def read_response(out: Any) -> dict:
    """Check a handler's return value against the response contract; return the result fields it sets.

    Success: ``label`` (non-empty string), optional ``value`` (a finite number, as a float) and optional
    ``explanation`` (a string, cut to 2048 characters). Error: ``errorCode`` and ``errorMessage``, both
    strings.
    The value is first passed through JSON, as the Lambda runtime does, so what is checked is what the service
    would receive.
    """
    if not isinstance(out, dict):
        raise InvalidResponse(
            f"lambda_handler returned {_kind(out)}, not an object with 'label' "
            "(or 'errorCode' and 'errorMessage')"
        )
    try:
        out = json.loads(_dumps(out))
    except (TypeError, ValueError) as exc:
        raise InvalidResponse(f"the response is not JSON-serialisable ({exc})") from None
    if "errorCode" in out or "errorMessage" in out:
        code, message = out.get("errorCode"), out.get("errorMessage")
        for key, value in (("errorCode", code), ("errorMessage", message)):
            if value is None:
                raise InvalidResponse(
                    f"the error response has no '{key}' (an error needs errorCode and errorMessage)"
                )
            if not isinstance(value, str):
                raise InvalidResponse(f"'{key}' must be a string, found {_kind(value)}")
        return {"errorCode": code, "errorMessage": message}
    label = out.get("label")
    if label is None:
        raise InvalidResponse(
            "the response has no 'label' (required on success; an error response needs errorCode and "
            "errorMessage)"
        )
    if not isinstance(label, str) or not label:
        raise InvalidResponse(f"'label' must be a non-empty string, found {_kind(label)}")
    fields: dict[str, Any] = {"label": label}
    value = out.get("value")
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InvalidResponse(f"'value' must be a number, found {_kind(value)}")
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


class _Context:
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


class _TimedOut(Exception):
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


class _Caller:
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
            raise _TimedOut from None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.jobs.put(None)
            self._worker = None


# --- results -------------------------------------------------------------------------------------------

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


def result_level(entry: dict) -> str:
    """The level of a result, read from its span context (spanId: TOOL_CALL, traceId: TRACE, else SESSION)."""
    ctx = entry.get("context", {}).get("spanContext", {})
    return "TOOL_CALL" if "spanId" in ctx else "TRACE" if "traceId" in ctx else "SESSION"


def results_frame(results: list[dict]) -> pd.DataFrame:
    """The result entries as a flat table (the columns of results.csv)."""
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


def passing(results: list[dict], threshold: float = 1.0) -> tuple[int, int]:
    """``(passing, total)``: results without an error whose numeric ``value`` is >= ``threshold``, of all.

    Errors and results without a value count against the rate: a gate must not pass because evaluators
    crashed or timed out.
    """
    passed = sum(
        1
        for r in results
        if "errorCode" not in r and isinstance(r.get("value"), (int, float)) and r["value"] >= threshold
    )
    return passed, len(results)
