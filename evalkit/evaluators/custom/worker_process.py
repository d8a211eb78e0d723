"""Code-only evaluators in a worker process of the runner (``evalkit.usercode``): a runaway call is killed, a
crash costs one row.

Where the process may fork safely (Linux, no other thread running: the command line, scripts, tests), each
code-only evaluator's rows are called in a forked worker (``usercode.Worker.fork``): it inherits the
evaluator's callables (ad-hoc lambdas included, nothing is pickled on the way in) and the input columns. One
call asks for every row not scored yet; the worker writes the row it is on into the runner's ``Progress`` word
before each call of the evaluator and streams its results back as JSON data, ``BATCH`` rows at a time (it goes
on scoring while evalkit stores them). A row on which the worker stays longer than the time limit becomes an ``evaluatorTimeout`` error (the
runner killed the worker's process group: C loops, ``time.sleep`` and code that catches every exception stop
too); a worker that dies (a segfault, ``os._exit``) turns the row it was on into an ``evaluatorError``. A new
worker then carries on with the rows not yet answered (at most one batch's finished rows are run again).
Processes an evaluator starts are killed when the call ends (the worker is retired, or has scored every row),
and by the group kill of a timeout; what it prints goes to standard error, the last 64 KiB per batch
(``usercode.output_tail``), redacted.

Elsewhere (another OS, a Jupyter kernel or any process with threads, where forking is unsafe) the rows run in a
watched thread instead (:mod:`evalkit.evaluators.custom.time_limit`). What a call changes in the evaluator's own
state (counters, caches) stays in the worker: evaluators are called as functions of their inputs.
"""

from __future__ import annotations

import builtins
import json
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

BATCH = 512  # rows per streamed part; a killed worker loses at most this many finished rows


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
            if worker is None:
                worker = Worker.fork(name, _loader(loop, order, outputs, progress), progress)
            progress.value = ranges[0][0]
            try:
                for answer in worker.stream(json.dumps(ranges).encode(), limit):
                    if "failure" in answer:  # a failure of the loop itself (not of the evaluator): as if here
                        raise _failure(*answer["failure"])
                    _store(answer, order, outputs, done)
                    _pass_on(worker)
            except (CallTimedOut, EvaluatorCrashed) as exc:
                _pass_on(worker)
                worker = None
                stuck = exc.progress
                if stuck is None or not 0 <= stuck < len(done) or done[stuck]:  # died between rows
                    stuck = done.find(0)
                how = getattr(exc, "how", None)
                i = order[stuck]
                done[stuck] = 1
                scores[i], reasons[i] = np.nan, None
                if how is None:
                    errors[i], codes[i] = timeout_message(name, limit), TIMEOUT_CODE
                else:
                    row = row_name(labels[i] if labels is not None else i)
                    errors[i], codes[i] = crash_message(name, how, row), "evaluatorError"
    finally:
        if worker is not None:
            worker.close()
        progress.close()


def _store(answer: dict, order, outputs, done: bytearray) -> None:
    """One batch of results from the worker into the outputs; its rows are done."""
    scores, reasons, errors, codes = outputs
    first, last = answer["first"], answer["last"]
    rows = order[first:last]
    scores[rows] = [np.nan if s is None else s for s in answer["scores"]]
    for i, reason, error, code in zip(rows, answer["reasons"], answer["errors"], answer["codes"]):
        reasons[i], errors[i], codes[i] = reason, error, code
    done[first:last] = b"\x01" * (last - first)


def _loader(loop, order, outputs, progress: Progress):
    """The worker's request handler (run in the fork): the ranges of positions asked for, through ``loop``, in
    batches of ``BATCH`` rows, each streamed back as soon as it is scored."""

    def load():
        IN_WORKER_PROCESS[0] = True
        scores, reasons, errors, codes = outputs
        stop = [False]

        def handle(request: bytes):
            for start, end in json.loads(request):
                for first in range(start, end, BATCH):
                    last = min(end, first + BATCH)
                    try:
                        loop(first, last, outputs, progress.word, stop)
                    except Exception as exc:  # noqa: BLE001 - a failure of the loop itself: the parent raises it
                        yield {"failure": [type(exc).__name__, str(exc)]}
                        return
                    rows = order[first:last]
                    yield {
                        "first": first,
                        "last": last,
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
