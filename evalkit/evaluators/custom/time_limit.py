"""A time limit per row for code-only evaluators (``--evaluator-timeout``, ``evaluate(evaluator_timeout=)``).

Where forking is safe, the rows run in a worker process that is killed when a row takes too long
(:mod:`evalkit.evaluators.custom.worker_process`). Where it is not (another OS than Linux, a Jupyter kernel or any
process with other threads), this module's watched thread runs them:

The evaluator's row loop runs in a worker thread while the calling thread watches its progress: the loop
writes the index of the row it is on before each call (one list store, so a timed run costs about as much as
an untimed one), and the watcher wakes a few times per limit. A row whose index has not moved for the limit
becomes an error result with code ``evaluatorTimeout``; the worker is abandoned and a new worker carries on
from the next row, so the run goes on and ends.

The abandoned worker is stopped as far as CPython allows: it is told to stop before its next row, and an
exception is raised asynchronously in it, which ends a call busy in Python code (``while True: ...``) at its
next bytecode. A call blocked in C (``time.sleep(3600)``, a socket read) ends only when that C call returns;
the worker is a daemon thread, so it never keeps the process alive, and what it writes after being abandoned
goes to its own buffers, which nobody reads. A call that holds the GIL inside C forever cannot be stopped in
a thread at all: only the worker process can.

Anything an evaluator call raises is that row's error result (``own_failure``): ``BaseException``
subclasses, ``SystemExit``, and ``KeyboardInterrupt``, which can be a real Ctrl-C only in the main thread.
``os._exit`` called in a worker thread raises ``ProcessExitCalled`` instead of ending evalkit with nothing
written (``guard_process_exit``). What this path cannot contain: a segfault, and C code that never returns
(the worker process contains both).

Each worker writes into buffers of its own; the watcher copies the rows a worker finished into the result, so
a late write of an abandoned worker can never reach a result.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable

import numpy as np

TIMEOUT_CODE = "evaluatorTimeout"

#: The default limit per row, in seconds (``--evaluator-timeout``).
DEFAULT_TIMEOUT = 60.0


#: Set in a forked worker process (``worker_process``), which ignores SIGINT: no KeyboardInterrupt there is a
#: real Ctrl-C.
IN_WORKER_PROCESS = [False]


class Abandoned(BaseException):
    """Raised asynchronously in a worker that ran out of time; a BaseException so ``except Exception`` in the
    evaluator does not swallow it."""


class ProcessExitCalled(BaseException):
    """Raised instead of ending the process when an evaluator calls ``os._exit`` in a worker thread."""

    def __init__(self, code, name: str):
        super().__init__(
            f"evaluator '{name}' called os._exit({code}) on this row, which in a worker thread would end "
            "evalkit itself with nothing written; the call was stopped instead"
        )


_REAL_EXIT = os._exit
#: Worker threads in which ``os._exit`` raises ``ProcessExitCalled`` (their ``threading.get_ident()``).
_GUARDED: set[int] = set()
_GUARD_PID = [0]


def _guarded_exit(code) -> None:
    # Only in this process: a child forked by an evaluator (multiprocessing's fork start method) ends with
    # os._exit from the same thread, and must end.
    if threading.get_ident() in _GUARDED and os.getpid() == _GUARD_PID[0]:
        raise ProcessExitCalled(code, threading.current_thread().name.removeprefix("evalkit-"))
    _REAL_EXIT(code)


def guard_process_exit() -> None:
    """Make ``os._exit`` raise ``ProcessExitCalled`` in the worker threads of this module (everywhere else it
    ends the process as usual). Installed on the first watched run and left in place, so an abandoned worker
    that wakes up later is still guarded."""
    _GUARD_PID[0] = os.getpid()
    if os._exit is not _guarded_exit:
        os._exit = _guarded_exit


def own_failure(exc: BaseException) -> bool:
    """Whether ``exc``, raised out of an evaluator call, is the evaluator's own failure (an error result for
    that row) rather than the run being stopped.

    Every exception is the evaluator's (``BaseException`` subclasses, ``SystemExit`` from ``sys.exit``,
    ``KeyboardInterrupt`` raised by its code) except ``Abandoned`` (the watcher stopping a worker thread) and a
    ``KeyboardInterrupt`` in the main thread, which may be the user's Ctrl-C. A real Ctrl-C never reaches a
    worker thread (Python delivers signals to the main thread) nor a worker process (it ignores SIGINT; the
    parent handles it), so there a ``KeyboardInterrupt`` can only come from the evaluator.
    """
    if isinstance(exc, Abandoned):
        return False
    if isinstance(exc, KeyboardInterrupt):
        return IN_WORKER_PROCESS[0] or threading.current_thread() is not threading.main_thread()
    return True


def timeout_message(name: str, limit: float) -> str:
    return (
        f"evaluator '{name}' ran longer than the limit of {limit:g} s on this row and was stopped; make it "
        "faster, or raise the limit with --evaluator-timeout SECONDS (evaluate(..., evaluator_timeout=))"
    )


def crash_message(name: str, how: str, row: str) -> str:
    """``how`` the worker process ended (``exited with code 0``, ``was killed by SIGSEGV``) on ``row``."""
    return (
        f"evaluator '{name}' crashed: evaluator process {how} while scoring {row}; the other rows ran in a new "
        "worker process. Look for os._exit or native code (a C extension) in the evaluator"
    )


def row_name(label) -> str:
    """A case-table row for a message: ``row 3`` for index 2 (rows count from 1, as in results.csv)."""
    try:
        return f"row {int(label) + 1}"
    except (TypeError, ValueError):
        return f"row {label!r}"


Loop = Callable[[int, int, tuple, list, list], None]


def run_with_time_limit(loop: Loop, positions: list[int], outputs: tuple, limit: float, name: str) -> int:
    """Run ``loop`` over ``positions`` with at most ``limit`` seconds per row; returns how many rows timed out.

    ``loop(start, end, buffers, progress, stop)`` runs rows ``positions[start:end]`` writing ``buffers``
    (shaped like ``outputs``: scores array, reasons, errors, codes lists), sets ``progress[0] = k`` before row
    ``k`` and returns when done or when ``stop[0]`` is true.
    """
    scores, reasons, errors, codes = outputs
    guard_process_exit()
    poll = min(0.5, max(0.005, limit / 8))
    count, start, timed_out = len(positions), 0, 0
    while start < count:
        buffers = (
            np.full(len(scores), np.nan),
            [None] * len(reasons),
            [None] * len(errors),
            [None] * len(codes),
        )
        progress, stop, done, failure = [start], [False], threading.Event(), []
        worker = threading.Thread(
            target=_work,
            args=(loop, start, count, buffers, progress, stop, done, failure),
            name=f"evalkit-{name}",
            daemon=True,
        )
        worker.start()
        seen, since = start, time.monotonic()
        try:
            while not done.wait(poll):
                now = time.monotonic()
                if progress[0] != seen:
                    seen, since = progress[0], now
                elif now - since >= limit:
                    break
        except BaseException:  # Ctrl-C while waiting: stop the worker too
            abandon(worker, stop)
            raise
        if failure:  # a failure of the loop itself (not of the evaluator): as if it had run here
            raise failure[0]
        finished = count if done.is_set() else seen
        if finished == count:
            worker.join()  # gone for good: a later fork (the CSV/HTML writer) checks that no thread runs
        _copy(buffers, outputs, positions[start:finished])
        if finished == count:
            break
        abandon(worker, stop)
        stuck = positions[finished]
        errors[stuck], codes[stuck] = timeout_message(name, limit), TIMEOUT_CODE
        timed_out += 1
        start = finished + 1
    return timed_out


def _work(loop: Loop, start, end, buffers, progress, stop, done: threading.Event, failure: list) -> None:
    ident = threading.get_ident()
    _GUARDED.add(ident)
    try:
        loop(start, end, buffers, progress, stop)
    except Abandoned:
        return
    except BaseException as exc:  # noqa: BLE001 - handed to the watching thread, which raises it
        failure.append(exc)
    finally:
        _GUARDED.discard(ident)
        done.set()


def _copy(buffers: tuple, outputs: tuple, rows: list[int]) -> None:
    if not rows:
        return
    index = np.asarray(rows)
    outputs[0][index] = buffers[0][index]
    for source, target in zip(buffers[1:], outputs[1:]):
        for i in rows:
            target[i] = source[i]


def abandon(worker: threading.Thread, stop: list) -> None:
    """Tell the worker to stop and raise ``Abandoned`` in it (delivered at its next Python bytecode)."""
    stop[0] = True
    if worker.ident is not None and worker.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(Abandoned))
