"""Code-based span evaluators in worker processes: a call that overruns is killed, a crash costs one result.

A Python thread cannot be stopped: a handler that hangs (``time.sleep(3600)``, a C loop) keeps its thread
and its CPU to the end of the process, and one that calls ``os._exit`` or segfaults takes the whole process
with it: the ``spans eval`` run, or the online receiver and its intake. So each code-based evaluator loaded
from a file runs in a worker process of its own, as a Lambda function runs in its own sandbox:

* ``EvaluatorWorkers`` is a bounded pool (at most ``MAX_WORKERS`` processes, the least recently used one is
  closed beyond that), one worker per evaluator, reused call after call and session after session;
* a worker is a fresh interpreter (``sys.executable``, started with ``subprocess``, so it is safe to start
  from a process with threads: the receiver's), imports the evaluator's file once, then answers calls: the
  payload goes in as the JSON text the service would send, the result fields come back as JSON;
* a call that does not answer within its time limit gets a ``Timeout`` result and its worker is killed
  (``SIGKILL``); a worker that dies (``os._exit``, a segfault, the OOM killer) gives the call it was on an
  ``EvaluatorCrashed`` result. Either way the next call starts a new worker.

Workers die with their parent (``PR_SET_PDEATHSIG``) and end when their request pipe closes. What a handler
prints goes to the parent's standard error (the worker's standard output carries the answers). The pool is
used by one thread at a time (the run, or the receiver's evaluation loop).

Evaluators without a file (a ``SpanEvaluator`` made from a function in a notebook) cannot be imported by a
new interpreter: they run in the calling process, on the watched thread of ``invocation.Caller``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import subprocess
import sys
import time
from collections import OrderedDict
from pathlib import Path

from evalkit.spans.lambdas.invocation import TimedOut
from evalkit.spans.lambdas.results import CRASHED

#: At most this many worker processes at once (AgentCore's limit on evaluators per configuration).
MAX_WORKERS = 10
#: How long a new worker may take to start and import its evaluator before the call fails.
STARTUP_LIMIT = 60.0

_REQUEST = struct.Struct("<Id")  # payload length, seconds the call may take
_REPLY = struct.Struct("<I")  # answer length
# evalkit's folder goes last on the path: importable as in this process, shadowing nothing installed
_BOOT = (
    "import sys; sys.path.append(sys.argv[3]); "
    "from evalkit.spans.lambdas.evaluator_workers import serve; serve(sys.argv[1], sys.argv[2], sys.argv[4])"
)


class _Ended(Exception):
    """The worker's answer pipe closed: it died."""


def can_isolate(evaluator) -> bool:
    """The evaluator can run in a worker process: it was loaded from a file, on a POSIX system."""
    return getattr(evaluator, "path", None) is not None and os.name == "posix" and bool(sys.executable)


class EvaluatorWorkers:
    """A bounded pool of worker processes, one per code-based span evaluator; ``close()`` ends them all."""

    def __init__(self, max_workers: int = MAX_WORKERS):
        self.max_workers = max_workers
        self._workers: OrderedDict[tuple[str, str, str], _Worker] = OrderedDict()

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
            problem = worker.wait_ready()
            if problem is not None:
                return self._crashed(evaluator, worker, f"{problem} while evaluating {what}")
            fields = worker.call(payload, timeout)
        except _Ended:
            return self._crashed(evaluator, worker, f"{worker.ending()} while evaluating {what}")
        except BaseException:  # Ctrl-C while waiting: the worker may be mid-call, so it goes
            self._drop(evaluator, kill=True)
            raise
        if fields is None:
            self._drop(evaluator, kill=True)
            raise TimedOut
        return fields

    def close(self) -> None:
        """End every worker (those busy in a call are killed)."""
        while self._workers:
            _, worker = self._workers.popitem()
            worker.close()

    def __enter__(self) -> EvaluatorWorkers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _worker(self, evaluator) -> _Worker:
        key = _key(evaluator)
        worker = self._workers.get(key)
        if worker is None:
            while len(self._workers) >= self.max_workers:
                _, oldest = self._workers.popitem(last=False)
                oldest.close()
            worker = self._workers[key] = _Worker(evaluator.name, evaluator.path, _function(evaluator))
        self._workers.move_to_end(key)
        return worker

    def _drop(self, evaluator, *, kill: bool) -> None:
        worker = self._workers.pop(_key(evaluator), None)
        if worker is not None:
            worker.close(kill=kill)

    def _crashed(self, evaluator, worker: _Worker, what: str) -> dict:
        self._drop(evaluator, kill=True)
        return {
            "errorCode": CRASHED,
            "errorMessage": f"evaluator process {what}; the next call starts a new process (look for "
            "os._exit, sys.exit in a thread or native code in the evaluator)",
        }


def _function(evaluator) -> str:
    """The handler's function name, which the worker looks up in the module it imports."""
    return getattr(evaluator, "function", "lambda_handler")


def _key(evaluator) -> tuple[str, str, str]:
    return (evaluator.name, str(evaluator.path), _function(evaluator))


class _Worker:
    """One worker process and the parent's end of its pipes."""

    def __init__(self, name: str, path: Path, function: str):
        home = str(Path(__file__).resolve().parents[2])
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, name, str(path), home, function],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._in = self.process.stdin.fileno()
        self._out = self.process.stdout.fileno()
        self._buffer = bytearray()
        self._ready = False
        self._busy = False

    def wait_ready(self) -> str | None:
        """Wait for the worker to have imported its evaluator; what went wrong, or None."""
        if self._ready:
            return None
        if self._frame(time.monotonic() + STARTUP_LIMIT) is None:
            return f"did not start within {STARTUP_LIMIT:g} s"
        self._ready = True
        return None

    def call(self, payload: str, timeout: float) -> dict | None:
        """The answer to one call, or None when it took longer than ``timeout``."""
        data = payload.encode("utf-8", "surrogatepass")
        self._busy = True
        try:
            _write_all(self._in, _REQUEST.pack(len(data), timeout) + data)
        except BrokenPipeError:
            raise _Ended from None
        answer = self._frame(time.monotonic() + timeout)
        if answer is None:
            return None
        self._busy = False
        return json.loads(answer)

    def ending(self) -> str:
        """How the (dead) worker ended: ``exited with code N`` or ``was killed by SIGSEGV``."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "closed its answer pipe"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def close(self, *, kill: bool = False) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass
        if kill or self._busy:
            self.process.kill()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()

    def _frame(self, deadline: float) -> bytes | None:
        buffer = self._buffer
        while True:
            if len(buffer) >= _REPLY.size:
                (size,) = _REPLY.unpack_from(buffer)
                end = _REPLY.size + size
                if len(buffer) >= end:
                    frame = bytes(buffer[_REPLY.size : end])
                    del buffer[:end]
                    return frame
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._out], [], [], left)
            if ready:
                chunk = os.read(self._out, 1 << 16)
                if not chunk:
                    raise _Ended
                buffer += chunk


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# --- the worker side -------------------------------------------------------------------------------------


def serve(name: str, path: str, function: str = "lambda_handler") -> None:
    """The worker process: import evaluator ``name`` from ``path`` and answer calls of its ``function``
    until the pipe closes."""
    from evalkit.documents.files.folder_swap import die_with_parent
    from evalkit.spans.lambdas.invocation import LambdaContext, call_fields
    from evalkit.spans.lambdas.span_evaluator import import_evaluator

    requests, answers = os.dup(0), os.dup(1)
    os.dup2(2, 1)  # what the handler prints goes to standard error: standard output carries the answers
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    die_with_parent(os.getppid())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it kills its workers
    source = Path(path)
    handler = getattr(import_evaluator(name, source), function)
    _write_all(answers, _REPLY.pack(0))  # ready
    while True:
        header = _read_exactly(requests, _REQUEST.size)
        if header is None:
            return
        size, timeout = _REQUEST.unpack(header)
        payload = _read_exactly(requests, size)
        if payload is None:
            return
        event = json.loads(payload)
        fields = call_fields(handler, event, LambdaContext(name, timeout), source, function)
        # raw characters, lone surrogates included: the parent reads exactly the strings the handler returned
        answer = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )
        _write_all(answers, _REPLY.pack(len(answer)) + answer)
