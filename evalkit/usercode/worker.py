"""The parent's side of the runner: one worker process, its time limit, its crashes and its output.

A ``Worker`` is a child process leading a process group of its own (so a terminal's Ctrl-C reaches evalkit
only, which then kills its workers), started either as a fresh interpreter (``Worker.spawn``, for user code
loaded from a file; safe in a process with threads) or forked (``Worker.fork``, for callables that exist only
in this process; Linux, and only where no other thread runs). Either way:

* ``call(request, timeout)`` sends bytes and returns the JSON answer parsed by ``parse_json`` (data only: no
  object of the worker's reaches evalkit, and evalkit's checks of an answer run here, where the user code
  cannot patch them);
* the time limit is kept from here: a call that does not answer within ``timeout`` seconds (with a
  ``Progress`` word: without moving to its next item for ``timeout`` seconds) gets SIGKILL for the whole
  group and every descendant, which stops code holding the GIL, C loops and sleeps alike: ``CallTimedOut``;
* a worker that ends during a call (``os._exit``, ``sys.exit``, a signal, the OOM killer) raises
  ``errors.EvaluatorCrashed`` naming the evaluator and how it ended;
* every process the call started is killed when the call ends (``process_tree``): nothing the user code
  starts outlives its call, and ``close()`` kills whatever is left of the worker;
* what the user code prints is read into an ``OutputTail``; ``logs()`` takes the current call's.

A worker that timed out or crashed is dead: the caller starts a new one. Workers die with evalkit
(``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalkit.documents.json_input import JsonInputError, parse_json
from evalkit.errors import EvaluatorCrashed
from evalkit.usercode.child import FRAME, in_fork, write_all
from evalkit.usercode.output_tail import Logs, OutputTail
from evalkit.usercode.process_tree import how_it_ended, kill_descendants, kill_tree

# evalkit's folder goes last on the path: importable as in this process, shadowing nothing installed
_BOOT = "import sys; sys.path.append(sys.argv[1]); from evalkit.usercode.child import main; main()"
_HOME = str(Path(__file__).resolve().parents[2])
#: How long a new worker may take to start and load its user code (unless the call's own limit is longer).
STARTUP_LIMIT = 60.0


class CallTimedOut(Exception):
    """The call did not answer in time; the worker was killed. ``progress``: the item it was on."""

    def __init__(self, progress: int | None):
        super().__init__("the call ran out of time")
        self.progress = progress


class Progress:
    """A word shared with a forked worker: the user code's adapter writes the item it is on, the parent
    watches it, and the time limit counts from its last change (per item, for calls over many items)."""

    def __init__(self):
        self._map = mmap.mmap(-1, 8)
        self._word = memoryview(self._map).cast("q")

    @property
    def word(self) -> memoryview:
        """The word itself (``word[0] = item``), for code that writes it per item."""
        return self._word

    @property
    def value(self) -> int:
        return self._word[0]

    @value.setter
    def value(self, item: int) -> None:
        self._word[0] = item

    def close(self) -> None:
        self._word.release()
        self._map.close()


class Worker:
    """One worker process and the parent's ends of its pipes; see the module docstring."""

    def __init__(
        self, name: str, pid: int, requests: int, answers: int, logs: int, popen=None, progress=None
    ):
        self.name = name
        self.pid = pid
        self.progress: Progress | None = progress
        self._popen = popen
        self._requests = requests
        self._answers = answers
        self._tail = OutputTail(logs)
        fcntl.fcntl(logs, fcntl.F_SETFL, fcntl.fcntl(logs, fcntl.F_GETFL) | os.O_NONBLOCK)
        self._buffer = bytearray()
        self._ready: str | None = None
        self._status: int | None = None
        self.closed = False

    @classmethod
    def spawn(cls, name: str, target: str, *args: str) -> Worker:
        """A fresh interpreter whose ``target`` (``"module:function"``) called with ``args`` loads the user
        code and returns its request handler."""
        requests_in, requests = os.pipe()
        answers, answers_out = os.pipe()
        logs, logs_out = os.pipe()
        try:
            popen = subprocess.Popen(
                [sys.executable, "-c", _BOOT, _HOME, str(requests_in), str(answers_out), str(os.getpid()),
                 target, *args],
                stdin=subprocess.DEVNULL, stdout=logs_out, stderr=logs_out,
                pass_fds=(requests_in, answers_out), process_group=0,
            )  # fmt: skip
        except BaseException:
            for fd in (requests, answers, logs):
                os.close(fd)
            raise
        finally:
            for fd in (requests_in, answers_out, logs_out):
                os.close(fd)
        return cls(name, popen.pid, requests, answers, logs, popen=popen)

    @classmethod
    def fork(cls, name: str, load, progress: Progress | None = None) -> Worker:
        """A forked child; ``load()``, run there, returns the request handler. Only where forking is safe."""
        requests_in, requests = os.pipe()
        answers, answers_out = os.pipe()
        logs, logs_out = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            for fd in (requests, answers, logs):
                os.close(fd)
            in_fork(load, requests_in, answers_out, logs_out, parent)
        with contextlib.suppress(OSError):  # the child does the same: whichever runs first
            os.setpgid(pid, pid)
        for fd in (requests_in, answers_out, logs_out):
            os.close(fd)
        return cls(name, pid, requests, answers, logs, progress=progress)

    # --- calls -----------------------------------------------------------------------------------------

    def wait_ready(self, limit: float) -> None:
        """Wait until the user code is loaded: ``EvaluatorCrashed`` when it failed to load, took longer than
        ``limit`` or the worker died."""
        if self._ready is not None:
            return
        try:
            answer = self._answer(limit, "while loading")
        except CallTimedOut:
            raise EvaluatorCrashed(f"evaluator '{self.name}' did not load within {limit:g} s") from None
        if "failed" in answer:
            self.close()
            raise EvaluatorCrashed(
                f"evaluator '{self.name}' could not be loaded: {answer['failed']}", how=None
            )
        self._ready = "ready"

    def call(self, request: bytes, timeout: float) -> Any:
        """The worker's answer to ``request`` (parsed JSON); see the module docstring for what it raises.
        Loading the user code first, if it is not loaded yet, may take up to ``STARTUP_LIMIT`` seconds."""
        self._send(request, timeout)
        try:
            return self._answer(timeout, "during the call")
        finally:
            if not self.closed:
                kill_descendants(self.pid)

    def stream(self, request: bytes, timeout: float) -> Iterator[Any]:
        """The parts of a streamed answer (the worker's handler returned a generator), as they come: the worker
        carries on while the caller stores each part. Raises as ``call`` does, between parts; the call ends
        (and what it started is killed) after the last part."""
        self._send(request, timeout)
        finished = False
        try:
            while True:
                answer = self._answer(timeout, "during the call")
                if not isinstance(answer, dict) or "part" not in answer:
                    finished = True
                    return
                yield answer["part"]
        finally:
            if self.closed:
                pass
            elif finished:
                kill_descendants(self.pid)
            else:  # the caller stopped reading mid-answer: the worker's pipe holds parts nobody will read
                self.close()

    def _send(self, request: bytes, timeout: float) -> None:
        self.wait_ready(max(timeout, STARTUP_LIMIT))
        try:
            write_all(self._requests, FRAME.pack(len(request)) + request)
        except BrokenPipeError:
            self._crashed("before the call")

    def logs(self) -> Logs:
        """What the user code printed since the last ``logs()`` (its tail; see ``output_tail``)."""
        self._tail.drain()
        return self._tail.take()

    def close(self) -> None:
        """Kill the worker, its group and its descendants, and reap it."""
        if self.closed:
            return
        self.closed = True
        self._tail.drain()
        kill_tree(self.pid)
        self._reap()
        for fd in (self._requests, self._answers, self._tail.fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._tail.closed = True

    def _answer(self, timeout: float, when: str) -> Any:
        progress = self.progress
        seen = progress.value if progress is not None else None
        poll = min(0.5, max(0.005, timeout / 8)) if progress is not None else None
        since = time.monotonic()
        while True:
            frame = self._frame()
            if frame is not None:
                try:
                    return parse_json(frame.decode("utf-8", "surrogatepass"))
                except (JsonInputError, UnicodeDecodeError) as exc:  # not evalkit's child's answer
                    self.close()
                    raise EvaluatorCrashed(
                        f"evaluator '{self.name}' crashed: its worker answered what is not JSON ({exc})",
                        how=None,
                    ) from None
            now = time.monotonic()
            if progress is not None and progress.value != seen:
                seen, since = progress.value, now
            left = since + timeout - now
            if left <= 0:
                self._tail.drain()
                self.close()
                raise CallTimedOut(seen)
            watched = [self._answers] if self._tail.closed else [self._answers, self._tail.fd]
            ready, _, _ = select.select(watched, [], [], left if poll is None else min(left, poll))
            if self._tail.fd in ready:
                self._tail.read()
            if self._answers in ready:
                chunk = os.read(self._answers, 1 << 20)
                if not chunk:
                    self._crashed(when)
                self._buffer += chunk

    def _frame(self) -> bytes | None:
        buffer = self._buffer
        if len(buffer) < FRAME.size:
            return None
        (size,) = FRAME.unpack_from(buffer)
        end = FRAME.size + size
        if len(buffer) < end:
            return None
        frame = bytes(buffer[FRAME.size : end])
        del buffer[:end]
        return frame

    def _crashed(self, when: str):
        """The worker is gone: raise ``EvaluatorCrashed`` saying how it ended."""
        self._tail.drain()
        progress = self.progress.value if self.progress is not None else None
        self.close()
        how = how_it_ended(os.waitstatus_to_exitcode(self._status)) if self._status is not None else "ended"
        raise EvaluatorCrashed(
            f"evaluator '{self.name}' crashed: its process {how} {when} (os._exit, sys.exit or a signal in "
            "the evaluator's code)",
            how=how,
            progress=progress,
        )

    def _reap(self) -> None:
        if self._status is not None:
            return
        try:
            if self._popen is not None:
                code = self._popen.wait()
                self._status = _status_of(code)
            else:
                _, self._status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            self._status = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _status_of(code: int) -> int:
    """A wait status from ``Popen.returncode`` (negative: the signal)."""
    return -code if code < 0 else code << 8
