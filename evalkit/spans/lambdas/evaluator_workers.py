"""Code-based span evaluators in worker processes of the runner (``evalkit.usercode``), one per evaluator.

A Python thread cannot be stopped: a handler that hangs (``time.sleep(3600)``, ``7 ** (10**8)`` holding the
GIL) keeps its thread to the end of the process, and one that calls ``os._exit`` takes the whole process with
it: the ``spans eval`` run, or the online receiver and its intake. So each code-based evaluator loaded from a
file runs in a worker process of its own, as a Lambda function runs in its own sandbox:

* ``EvaluatorWorkers`` is a bounded pool (at most ``MAX_WORKERS`` processes, the least recently used one is
  closed beyond that), one worker per evaluator, reused call after call and session after session;
* a worker is a fresh interpreter (``usercode.Worker.spawn``: safe from a process with threads, the
  receiver's) that imports the evaluator's file once, then answers calls: the payload goes in as the JSON text
  the service would send, what the handler did comes back as data (``invocation.call_data``) and is checked
  against the response contract here (``invocation.data_fields``), where the handler cannot patch the check;
* a call that does not answer within its time limit raises ``invocation.TimedOut`` (the runner killed the
  worker's process group); a worker that dies (``os._exit``, ``sys.exit``, a segfault, the OOM killer) gives
  the call it was on an ``EvaluatorCrashed`` result. Either way the next call starts a new worker. Processes
  a handler starts are killed when its call ends.

What a handler prints is kept apart from its answers and passed on to this process's standard error, its
last 64 KiB per call (``usercode.output_tail``), redacted. The pool is used by one thread at a time (the run,
or the receiver's evaluation loop).

Evaluators without a file (a ``SpanEvaluator`` made from a function in a notebook) cannot be imported by a
new interpreter: they run in the calling process, on the watched thread of ``invocation.Caller``.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from collections import OrderedDict
from pathlib import Path

from evalkit.documents.redaction import redact
from evalkit.errors import EvaluatorCrashed
from evalkit.spans.lambdas.invocation import TimedOut, data_fields
from evalkit.spans.lambdas.results import CRASHED
from evalkit.usercode.worker import CallTimedOut, Worker

#: At most this many worker processes at once (AgentCore's limit on evaluators per configuration).
MAX_WORKERS = 10
#: How long a new worker may take to start and import its evaluator before the call fails.
STARTUP_LIMIT = 60.0

_TIMEOUT = struct.Struct("<d")  # the seconds the call may take, before the payload (for the Lambda context)


def can_isolate(evaluator) -> bool:
    """The evaluator can run in a worker process: it was loaded from a file, on a POSIX system."""
    return getattr(evaluator, "path", None) is not None and os.name == "posix" and bool(sys.executable)


def start_worker(evaluator) -> Worker:
    """A new worker process for ``evaluator`` (loaded from a file), importing it now."""
    return Worker.spawn(
        evaluator.name,
        "evalkit.spans.lambdas.evaluator_workers:load_handler",
        evaluator.name,
        str(evaluator.path),
        _function(evaluator),
    )


def call_in(worker: Worker, payload: str, timeout: float) -> dict:
    """What the handler in ``worker`` did with ``payload`` (``invocation.call_data``'s data). Raises
    ``usercode.worker.CallTimedOut`` and ``EvaluatorCrashed`` (the worker is then dead)."""
    worker.wait_ready(STARTUP_LIMIT)
    request = _TIMEOUT.pack(timeout) + payload.encode("utf-8", "surrogatepass")
    return worker.call(request, timeout)


class EvaluatorWorkers:
    """A bounded pool of worker processes, one per code-based span evaluator; ``close()`` ends them all."""

    def __init__(self, max_workers: int = MAX_WORKERS):
        self.max_workers = max_workers
        self._workers: OrderedDict[tuple[str, str, str], Worker] = OrderedDict()

    def start(self, evaluators) -> None:
        """Start the workers of ``evaluators`` now, side by side, rather than one at each first call."""
        for evaluator in evaluators:
            if can_isolate(evaluator) and len(self._workers) < self.max_workers:
                self._worker(evaluator)

    def call(self, evaluator, payload: str, timeout: float, what: str) -> dict:
        """The result fields of one call of ``evaluator`` with ``payload`` (JSON text) in its worker.

        Raises ``invocation.TimedOut`` when the call took longer than ``timeout`` (the worker is then killed);
        a worker that died gives an ``EvaluatorCrashed`` error entry naming ``what`` it was evaluating.
        """
        worker = self._worker(evaluator)
        try:
            worker.wait_ready(STARTUP_LIMIT)
            _pass_on(worker)  # what it printed while loading, on its own
            data = call_in(worker, payload, timeout)
        except CallTimedOut:
            self._drop(evaluator)
            raise TimedOut from None
        except EvaluatorCrashed as exc:
            self._drop(evaluator)
            return _crashed(exc, what)
        except BaseException:  # Ctrl-C while waiting: the worker may be mid-call, so it goes
            self._drop(evaluator)
            raise
        finally:
            _pass_on(worker)
        return data_fields(data, _function(evaluator))

    def close(self) -> None:
        """End every worker (those busy in a call are killed)."""
        while self._workers:
            _, worker = self._workers.popitem()
            worker.close()

    def __enter__(self) -> EvaluatorWorkers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _worker(self, evaluator) -> Worker:
        key = _key(evaluator)
        worker = self._workers.get(key)
        if worker is None:
            while len(self._workers) >= self.max_workers:
                _, oldest = self._workers.popitem(last=False)
                oldest.close()
            worker = self._workers[key] = start_worker(evaluator)
        self._workers.move_to_end(key)
        return worker

    def _drop(self, evaluator) -> None:
        worker = self._workers.pop(_key(evaluator), None)
        if worker is not None:
            worker.close()


def _crashed(exc: EvaluatorCrashed, what: str) -> dict:
    if exc.how is None:  # it did not load
        return {"errorCode": CRASHED, "errorMessage": f"{exc} (while evaluating {what})"}
    return {
        "errorCode": CRASHED,
        "errorMessage": f"evaluator process {exc.how} while evaluating {what}; the next call starts a new "
        "process (look for os._exit, sys.exit or native code in the evaluator)",
    }


def _pass_on(worker: Worker) -> None:
    """What the handler printed, to standard error (redacted), as it was before the runner kept it apart."""
    logs = worker.logs()
    if logs.text or logs.cut:
        sys.stderr.write(redact(logs.shown()))
        sys.stderr.flush()


def _function(evaluator) -> str:
    """The handler's function name, which the worker looks up in the module it imports."""
    return getattr(evaluator, "function", "lambda_handler")


def _key(evaluator) -> tuple[str, str, str]:
    return (evaluator.name, str(evaluator.path), _function(evaluator))


# --- the worker side -------------------------------------------------------------------------------------


def load_handler(name: str, path: str, function: str = "lambda_handler"):
    """In the worker: import evaluator ``name`` from ``path``; the runner's request handler that calls its
    ``function`` (a request is the time limit, then the payload's JSON text)."""
    from evalkit.spans.lambdas.invocation import LambdaContext, call_data
    from evalkit.spans.lambdas.span_evaluator import import_evaluator

    source = Path(path)
    handler = getattr(import_evaluator(name, source), function)

    def handle(request: bytes) -> dict:
        (timeout,) = _TIMEOUT.unpack_from(request)
        event = json.loads(request[_TIMEOUT.size :].decode("utf-8", "surrogatepass"))
        return call_data(handler, event, LambdaContext(name, timeout), source)

    return handle
