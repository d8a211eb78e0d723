"""A worker's process tree: what user code started is found and killed, and how a worker ended is told.

A worker makes itself a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): a process its user code starts
and then orphans (a daemonised ``subprocess.Popen``, a double fork, ``start_new_session=True``) is re-parented
to the worker instead of to init, so every process the user code started stays a descendant of the worker,
found from ``/proc/<pid>/task/*/children`` whichever process group it moved to. ``kill_descendants`` kills
them (after every call); ``kill_tree`` kills the worker's group and its descendants (a timeout, or a worker
retired). Elsewhere than Linux only the process group is killed.

May import nothing of evalkit.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

_LINUX = sys.platform.startswith("linux")
_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """In the worker: orphaned descendants are re-parented to this process (Linux; elsewhere a no-op)."""
    if _LINUX:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (every thread's), from /proc; [] where there is no /proc."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:  # os.open, not open(): this runs after every call, and the io stack costs 3 times more
        try:
            fd = os.open(f"/proc/{pid}/task/{task}/children", os.O_RDONLY)
        except OSError:
            continue
        try:
            found.extend(int(child) for child in os.read(fd, 1 << 16).split())
        except (OSError, ValueError):
            pass
        finally:
            os.close(fd)
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children first)."""
    found, pending = [], children(pid)
    while pending:
        child = pending.pop()
        found.append(child)
        pending.extend(children(child))
    return found


def kill_descendants(pid: int) -> int:
    """SIGKILL every process below ``pid`` until none is left (killing a parent can orphan its children to
    ``pid``, the subreaper); returns how many were killed. Their zombies are ``pid``'s to reap."""
    killed = 0
    for _ in range(100):  # a fork bomb cannot keep this loop going: each round kills what it finds
        found = [p for p in descendants(pid) if _alive(p)]
        if not found:
            break
        for child in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
                killed += 1
    return killed


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid``'s process group (``pid`` leads it) and every descendant that left the group."""
    below = descendants(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for child in below:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Not yet dead: a zombie (``Z``) is dead and waits for its parent only."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def how_it_ended(code: int) -> str:
    """A process's exit, as ``subprocess`` reports it (negative: the signal), for messages."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
