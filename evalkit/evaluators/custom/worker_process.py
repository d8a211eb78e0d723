"""Code-only evaluators in a worker process: a runaway call is killed, a crash costs one row.

Where the process may fork safely (Linux, no other thread running: the command line, scripts, tests), each
code-only evaluator's rows are called in one forked worker process. The fork inherits the evaluator's
callables (ad-hoc lambdas included, nothing is pickled on the way in) and the input columns; the worker sends
results back in batches through a pipe, and before each call writes the row it is on into a shared memory
word that the parent watches. A row on which the worker stays longer than the time limit becomes an
``evaluatorTimeout`` error; the worker is killed (``SIGKILL``, so C loops, ``time.sleep`` and code that
catches every exception stop too) and a new worker carries on with the rows not yet reported. A worker that
dies (a segfault, ``os._exit``) turns the row it was on into an ``evaluatorError`` and is replaced the same way.
Workers die with the parent (``PR_SET_PDEATHSIG``).

Elsewhere (another OS, a Jupyter kernel or any process with threads, where forking is unsafe) the rows run in a
watched thread instead (:mod:`evalkit.evaluators.custom.time_limit`). What a call changes in the evaluator's own state
(counters, caches) stays in the worker: evaluators are called as functions of their inputs.
"""

from __future__ import annotations

import gc
import mmap
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time

import numpy as np

from evalkit.documents.files.folder_swap import die_with_parent
from evalkit.evaluators.custom.time_limit import (
    IN_WORKER_PROCESS,
    TIMEOUT_CODE,
    crash_message,
    row_name,
    timeout_message,
)

BATCH = 512  # rows per message from the worker; a killed worker loses at most this many finished rows
_HEADER = struct.Struct("<Q")


def can_fork() -> bool:
    """Forking is safe here: Linux, and no other thread whose locks the child could inherit held."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def run_in_workers(loop, order: list[int], outputs: tuple, limit: float, name: str, labels=None) -> None:
    """Run ``loop`` (see ``time_limit.run_with_time_limit``) over ``order`` in forked workers, at most
    ``limit`` seconds per row; ``labels[i]`` is the case-table index of row ``i`` (for crash messages)."""
    count = len(order)
    done = bytearray(count)
    scores, reasons, errors, codes = outputs
    shared = mmap.mmap(-1, 8)
    progress = memoryview(shared).cast("q")
    try:
        while True:
            ranges = _pending(done)
            if not ranges:
                return
            progress[0] = ranges[0][0]
            stuck, how = _one_worker(loop, ranges, outputs, progress, limit, done, order)
            if stuck is None:
                continue
            if done[stuck]:  # died between rows: blame the first row it had not reported
                stuck = done.find(0)
            i = order[stuck]
            done[stuck] = 1
            scores[i], reasons[i] = np.nan, None
            if how is None:
                errors[i], codes[i] = timeout_message(name, limit), TIMEOUT_CODE
            else:
                row = row_name(labels[i] if labels is not None else i)
                errors[i], codes[i] = crash_message(name, how, row), "evaluatorError"
    finally:
        progress.release()
        shared.close()


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


def _one_worker(loop, ranges, outputs, progress, limit, done, order):
    """Fork a worker for ``ranges`` and collect its results: ``(None, None)`` when it reported every row,
    else the row it got stuck or died on, with ``None`` for a timeout or how it died."""
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(read_end)
        _worker(loop, ranges, outputs, progress, write_end, parent, order)
    os.close(write_end)
    status = None
    try:
        stuck, ended = _collect(read_end, outputs, progress, limit, done, order)
        if not ended:  # stuck past the limit
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(read_end)
        if status is None:  # interrupted (Ctrl-C): the worker goes too
            _kill_and_reap(pid)
    if stuck is None or not ended:
        return stuck, None
    return stuck, _how_it_ended(status)


def _worker(loop, ranges, outputs, progress, fd, parent, order) -> None:
    code = 0
    try:
        # The parent's objects go to the permanent generation: the worker's collections then never walk
        # (and so never copy-on-write) the parent's heap.
        gc.freeze()
        die_with_parent(parent)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        IN_WORKER_PROCESS[0] = True
        scores, reasons, errors, codes = outputs
        stop = [False]
        for start, end in ranges:
            for first in range(start, end, BATCH):
                last = min(end, first + BATCH)
                loop(first, last, outputs, progress, stop)
                rows = order[first:last]
                # scores as plain floats: numpy scalars pickle 40 times slower
                batch = (first, last, scores[rows].tolist(), [reasons[i] for i in rows],
                         [errors[i] for i in rows], [codes[i] for i in rows])  # fmt: skip
                payload = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
                _write_all(fd, _HEADER.pack(len(payload)) + payload)
    except BaseException as exc:  # noqa: BLE001 - a failure of the loop itself: the parent raises it
        code = 70
        _send_failure(fd, exc)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _send_failure(fd: int, exc: BaseException) -> None:
    try:
        payload = pickle.dumps(("failure", exc), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that cannot be pickled: its text then
        payload = pickle.dumps(("failure", RuntimeError(f"{type(exc).__name__}: {exc}")))
    try:
        _write_all(fd, _HEADER.pack(len(payload)) + payload)
    except OSError:
        pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _collect(fd, outputs, progress, limit, done, order):
    """Read the worker's batches until it ends ``(row or None, True)`` or stays on one row past the limit
    ``(row, False)``."""
    scores, reasons, errors, codes = outputs
    poll = min(0.5, max(0.005, limit / 8))
    buffer = bytearray()
    seen, since = progress[0], time.monotonic()
    while True:
        ready, _, _ = select.select([fd], [], [], poll)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:  # the worker ended: all reported, or it died on the row it was on
                return (None if done.find(0) == -1 else progress[0]), True
            buffer += chunk
            while len(buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(buffer)
                if len(buffer) < _HEADER.size + size:
                    break
                message = pickle.loads(bytes(buffer[_HEADER.size : _HEADER.size + size]))
                del buffer[: _HEADER.size + size]
                if message[0] == "failure":  # as if the loop had run here
                    raise message[1]
                first, last, batch_scores, batch_reasons, batch_errors, batch_codes = message
                rows = order[first:last]
                scores[rows] = batch_scores
                for i, reason, error, code in zip(rows, batch_reasons, batch_errors, batch_codes):
                    reasons[i], errors[i], codes[i] = reason, error, code
                done[first:last] = b"\x01" * (last - first)
        now = time.monotonic()
        if progress[0] != seen:
            seen, since = progress[0], now
        elif now - since >= limit and not done[seen]:
            return seen, False


def _how_it_ended(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def _kill_and_reap(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
