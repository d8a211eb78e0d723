"""The worker's side of the runner: load the user code once, then answer requests until the pipe closes.

``serve(load, requests, answers)`` calls ``load()`` (which imports the user code and returns the function
that answers one request: bytes in, JSON-ready data out, or a generator of JSON-ready parts for a streamed
answer: ``{"part": ...}`` frames, then ``{"end": true}``), says it is ready, then answers one request at a
time. Before writing an answer it flushes what the user code printed (standard output and standard error go
to the output pipe, never to ``answers``), so the parent, reading the answer, finds the call's output already
in its pipe. A ``SystemExit`` out of the user code ends the worker with that code, as it ends a Lambda
runtime: the parent reports it as a crash. Ctrl-C is the parent's (SIGINT is ignored here; the parent kills
its workers).

May import ``documents`` (``die_with_parent``) and the rest of ``usercode``.
"""

from __future__ import annotations

import faulthandler
import gc
import json
import os
import signal
import struct
import sys
import types
from collections.abc import Callable
from typing import Any

from evalkit.documents.files.folder_swap import die_with_parent
from evalkit.usercode.process_tree import become_subreaper

FRAME = struct.Struct("<I")

Handle = Callable[[bytes], Any]


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def encode(value: Any) -> bytes:
    """JSON text of ``value``: raw characters (lone surrogates included, as the user code returned them)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def serve(load: Callable[[], Handle], requests: int, answers: int, parent: int) -> None:
    """The worker's loop; never returns (the process ends with ``os._exit``)."""
    code = 0
    try:
        die_with_parent(parent)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        become_subreaper()
        try:
            handle = load()
        except BaseException as exc:  # noqa: BLE001 - the user code failed to load: the parent says so
            _answer(answers, {"failed": str(exc) or type(exc).__name__})
            return
        _answer(answers, {"ready": True})
        while True:
            header = read_exactly(requests, FRAME.size)
            request = read_exactly(requests, FRAME.unpack(header)[0]) if header else None
            if request is None:
                return
            _reap()
            try:
                value = handle(request)
                if isinstance(value, types.GeneratorType):  # a streamed answer: each part, then the end
                    for part in value:
                        _answer(answers, {"part": part})
                    value = {"end": True}
            except SystemExit as exc:
                code = _exit_code(exc)
                return
            _answer(answers, value)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _answer(fd: int, value: Any) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    data = encode(value)
    write_all(fd, FRAME.pack(len(data)) + data)


def _reap() -> None:
    """Collect the zombies of processes the user code started (the parent killed them after the last call)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _exit_code(exc: SystemExit) -> int:
    """The status ``sys.exit(arg)`` gives a process: 0 for None, the int, else 1 (the text goes to stderr)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def main() -> None:
    """A spawned worker: ``argv`` = home, requests fd, answers fd, parent pid, ``module:function``, args...;
    ``function(*args)`` loads the user code and returns the request handler."""
    import importlib

    _, requests, answers, parent, target, *args = sys.argv[1:]
    module, function = target.split(":")

    def load() -> Handle:
        return getattr(importlib.import_module(module), function)(*args)

    serve(load, int(requests), int(answers), int(parent))


def in_fork(load: Callable[[], Handle], requests: int, answers: int, logs: int, parent: int) -> None:
    """A forked worker: a process group of its own, output to ``logs``, then ``serve``."""
    try:
        os.setpgid(0, 0)
        gc.freeze()  # the parent's objects: the worker's collections never walk (and copy) them
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(logs, 1)
        os.dup2(logs, 2)
        # the parent's sys.stdout may be no file at all (a notebook's, pytest's capture): the worker's are fds 1, 2
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        if faulthandler.is_enabled():  # a crash's traceback goes to the worker's output, not the terminal
            faulthandler.enable(file=sys.stderr)
        serve(load, requests, answers, parent)
    finally:
        os._exit(70)
