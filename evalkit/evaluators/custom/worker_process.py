"""Code-only evaluators in a worker process of the runner (``evalkit.usercode``): a runaway call is killed, a
crash costs one row.

Where the process may fork safely (Linux, no other thread running: the command line, scripts, tests), each
code-only evaluator's rows are called in a forked worker (``usercode.Worker.fork``): it inherits the
evaluator's callables (ad-hoc lambdas included, nothing is pickled on the way in) and the input columns. The
rows go in as ranges of ``BATCH`` positions, one call each; the worker writes the row it is on into the
runner's ``Progress`` word before each call of the evaluator and answers each range with its results as JSON
data. A row on which the worker stays longer than the time limit becomes an ``evaluatorTimeout`` error (the
runner killed the worker's process group: C loops, ``time.sleep`` and code that catches every exception stop
too); a worker that dies (a segfault, ``os._exit``) turns the row it was on into an ``evaluatorError``. A new
worker then carries on with the rows not yet answered (at most one range's finished rows are run again).
Processes an evaluator starts are killed after each range; what it prints goes to standard error, the last
64 KiB per range (``usercode.output_tail``), redacted.

Elsewhere (another OS, a Jupyter kernel or any process with threads, where forking is unsafe) the rows run in a
watched thread instead (:mod:`evalkit.evaluators.custom.time_limit`). What a call changes in the evaluator's own
state (counters, caches) stays in the worker: evaluators are called as functions of their inputs.
"""

from __future__ import annotations

import builtins
import struct
import sys
import threading

import numpy as np

from evalkit.documents.redaction import redact
from evalkit.errors import EvaluatorCrashed
from evalkit.evaluators.custom.time_limit import (
    IN_WORKER_PROCESS,
    TIMEOUT_CODE,
    crash_message,
    row_name,
    timeout_message,
)
from evalkit.usercode.worker import CallTimedOut, Progress, Worker

BATCH = 512  # rows per call of the worker; a killed worker loses at most this many finished rows
_RANGE = struct.Struct("<qq")


def can_fork() -> bool:
    """Forking is safe here: Linux, and no other thread whose locks the child could inherit held."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def run_in_workers(loop, order: list[int], outputs: tuple, limit: float, name: str, labels=None) -> None:
    """Run ``loop`` (see ``time_limit.run_with_time_limit``) over ``order`` in forked workers, at most
    ``limit`` seconds per row; ``labels[i]`` is the case-table index of row ``i`` (for crash messages)."""
    done = bytearray(len(order))
    scores, reasons, errors, codes = outputs
    progress = Progress()
    worker: Worker | None = None
    try:
        while True:
            ranges = _pending(done)
            if not ranges:
                return
            start, end = ranges[0]
            last = min(end, start + BATCH)
            if worker is None:
                worker = Worker.fork(name, _loader(loop, order, outputs, progress), progress)
            progress.value = start
            try:
                answer = worker.call(_RANGE.pack(start, last), limit)
            except (CallTimedOut, EvaluatorCrashed) as exc:
                _pass_on(worker)
                worker = None
                stuck = exc.progress if exc.progress is not None and start <= exc.progress < last else start
                how = getattr(exc, "how", None)
                i = order[stuck]
                done[stuck] = 1
                scores[i], reasons[i] = np.nan, None
                if how is None:
                    errors[i], codes[i] = timeout_message(name, limit), TIMEOUT_CODE
                else:
                    row = row_name(labels[i] if labels is not None else i)
                    errors[i], codes[i] = crash_message(name, how, row), "evaluatorError"
                continue
            _pass_on(worker)
            if "failure" in answer:  # a failure of the loop itself (not of the evaluator): as if it ran here
                raise _failure(*answer["failure"])
            rows = order[start:last]
            scores[rows] = [np.nan if s is None else s for s in answer["scores"]]
            for i, reason, error, code in zip(rows, answer["reasons"], answer["errors"], answer["codes"]):
                reasons[i], errors[i], codes[i] = reason, error, code
            done[start:last] = b"\x01" * (last - start)
    finally:
        if worker is not None:
            worker.close()
        progress.close()


def _loader(loop, order, outputs, progress: Progress):
    """The worker's request handler (run in the fork): rows ``order[start:last]`` through ``loop``."""

    def load():
        IN_WORKER_PROCESS[0] = True
        scores, reasons, errors, codes = outputs
        stop = [False]

        def handle(request: bytes) -> dict:
            start, last = _RANGE.unpack(request)
            try:
                loop(start, last, outputs, progress.word, stop)
            except Exception as exc:  # noqa: BLE001 - a failure of the loop itself: the parent raises it
                return {"failure": [type(exc).__name__, str(exc)]}
            rows = order[start:last]
            return {
                "scores": [None if s != s else s for s in scores[rows].tolist()],
                "reasons": [reasons[i] for i in rows],
                "errors": [errors[i] for i in rows],
                "codes": [codes[i] for i in rows],
            }

        return handle

    return load


def _failure(kind: str, message: str) -> BaseException:
    """The loop's own failure, raised again here: the same built-in exception where there is one."""
    cls = getattr(builtins, kind, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 - a constructor that wants other arguments
            pass
    return RuntimeError(f"{kind}: {message}")


def _pass_on(worker: Worker) -> None:
    logs = worker.logs()
    if logs.text or logs.cut:
        sys.stderr.write(redact(logs.shown()))
        sys.stderr.flush()


def _pending(done: bytearray) -> list[tuple[int, int]]:
    """The runs of rows not reported yet, as ``(start, end)`` pairs."""
    ranges, start = [], done.find(0)
    while start != -1:
        end = done.find(1, start)
        if end == -1:
            end = len(done)
        ranges.append((start, end))
        start = done.find(0, end)
    return ranges
