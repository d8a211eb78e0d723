"""Large tables scored on several cores: the built-in deterministic evaluators over parts of the rows, each part
in a forked child, while this process scores the first part.

Why: a 100,000-row run spends about a second in ExactMatch, PartialMatch and Citations, all on one core
(issue 20's speed goal). These evaluators score each row from that row alone and keep no state, so splitting
the rows changes no result, only the time. Custom code evaluators (which may count calls, hold connections or
have a time limit per row) and LLM judges (threads, a shared pool and cache) are always scored here, whole.

How: after the fork each child holds the table as it was (copy-on-write: nothing is copied or sent to it).
Child ``i`` scores rows ``cuts[i]:cuts[i + 1]`` of every split evaluator in the run's order and writes each
evaluator's result frames to its pipe (pickled, about 1.5 MB per evaluator and 50,000 rows) as soon as they
are ready; this process scores its own part of the same evaluator, then reads the children's, so results are
attached in the usual order and at most one evaluator's frames are in flight. A child dies with this process;
when one fails (or cannot be read), this process scores that child's rows itself, so a failure costs time,
never results. Forking is skipped below ``SPLIT_ROWS`` rows and when it is not safe (no ``os.fork``, other
threads running).

May import: evalkit.engine.rows, evalkit.documents.files.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import struct
import threading
from typing import Any

import numpy as np
import pandas as pd

from evalkit.documents.files.folder_swap import die_with_parent
from evalkit.engine.rows import CaseRows, score_one

log = logging.getLogger("evalkit.engine")

#: Fewer rows than this are scored in one process: forking and pickling would cost more than they save.
SPLIT_ROWS = 20_000
_HEADER = struct.Struct("<Q")  # the byte length of the pickled frames that follow


def splittable(evaluator: Any) -> bool:
    """Whether ``evaluator`` may score parts of the rows in forked children: evalkit's built-in deterministic
    evaluators, whose result for a row depends on that row alone."""
    return type(evaluator).__module__.startswith("evalkit.evaluators.deterministic.")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the platform says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class _Child:
    """One forked scorer: its rows, its pipe, how many evaluators' frames it has sent, whether it failed."""

    def __init__(self, pid: int, stream, rows: CaseRows, start: int, stop: int):
        self.pid, self.stream, self.rows, self.start, self.stop = pid, stream, rows, start, stop
        self.received = 0
        self.failed = False
        self.done = False

    def receive(self, name: str) -> list[pd.DataFrame] | None:
        """The child's frames for evaluator ``name``; None once it has failed (its rows are then scored here)."""
        if self.failed:
            return None
        try:
            header = self.stream.read(_HEADER.size)
            if len(header) < _HEADER.size:
                raise EOFError("the forked scorer stopped")
            frames = pickle.loads(self.stream.read(_HEADER.unpack(header)[0]))
        except Exception as exc:  # noqa: BLE001 - a lost child costs time, never results
            log.debug("forked scorer %d failed before %s (%s): its rows are scored here", self.pid, name, exc)
            self.failed = True
            self.end(kill=True)
            return None
        self.received += 1
        return frames

    def end(self, *, kill: bool) -> None:
        """Close the pipe and reap the child, killing it first when it may still be working."""
        if self.done:
            return
        self.done = True
        self.stream.close()
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


class ForkedParts:
    """Children scoring the later parts of the rows; this process scores ``own``, the first part.

    Use ``start`` (None when the rows are not split), ``score`` once per split evaluator in order, ``close``.
    """

    def __init__(self, rows: CaseRows, names: list[str], cuts: list[int]):
        self.names = names
        self.own = rows.part(cuts[0], cuts[1])
        self._children: list[_Child] = []

    @classmethod
    def start(
        cls, rows: CaseRows, evaluators: dict[str, Any], work: dict[str, np.ndarray], processes: int
    ) -> ForkedParts | None:
        """Fork ``processes - 1`` children for the split evaluators of ``evaluators`` (name -> evaluator, in the
        run's order), or return None: one process, too few rows, nothing to split, or forking not safe."""
        n = len(rows.inputs)
        names = [name for name, ev in evaluators.items() if splittable(ev) and work[name].any()]
        processes = min(processes, n // (SPLIT_ROWS // 2) or 1)
        if processes < 2 or n < SPLIT_ROWS or not names:
            return None
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return None
        cuts = np.linspace(0, n, processes + 1).round().astype(int).tolist()
        forked = cls(rows, names, cuts)
        parent = os.getpid()
        for start, stop in zip(cuts[1:-1], cuts[2:], strict=True):
            part = rows.part(start, stop)
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: score, send, exit (never back into the caller's code)
                os.close(read)
                _score_in_child(
                    parent, write, part, [(evaluators[name], work[name][start:stop]) for name in names]
                )
            os.close(write)
            forked._children.append(_Child(pid, os.fdopen(read, "rb"), part, start, stop))
        return forked

    def score(self, name: str, evaluator: Any, mask: np.ndarray) -> list[pd.DataFrame]:
        """All of ``evaluator``'s result frames: this process's part, then each child's."""
        cut = len(self.own.inputs)
        parts = score_one(evaluator, self.own, mask[:cut], adhoc=False)
        for child in self._children:
            received = child.receive(name)
            if received is None:
                received = score_one(evaluator, child.rows, mask[child.start : child.stop], adhoc=False)
            parts.extend(received)
        if name == self.names[-1]:
            self.close()
        return parts

    def close(self) -> None:
        """Reap the children; one that has not sent every evaluator (the run stopped early) is killed."""
        for child in self._children:
            child.end(kill=child.received < len(self.names))


def _score_in_child(parent: int, fd: int, rows: CaseRows, jobs: list) -> None:
    code = 1
    try:
        die_with_parent(parent)
        with os.fdopen(fd, "wb") as out:
            for evaluator, mask in jobs:
                payload = pickle.dumps(score_one(evaluator, rows, mask, adhoc=False), protocol=5)
                out.write(_HEADER.pack(len(payload)))
                out.write(payload)
                out.flush()
        code = 0
    except BaseException:  # noqa: BLE001 - the parent scores these rows itself
        log.debug("forked scorer failed", exc_info=True)
    finally:
        os._exit(code)
