"""One receiver per store folder: an exclusive ``flock`` on ``DIR/receiver.lock``, naming its holder.

Two receivers on the same store would both complete and evaluate the same sessions (evaluator calls doubled)
and both append to ``results.jsonl`` (lines duplicated). The lock is taken before the store is opened and held
until ``release()``; the kernel drops it when the process dies, even by ``kill -9``, so a crash never leaves a
stale lock behind. The holder writes its pid, host name and URL into the file, so the refusal names the
receiver that is running. On a system without ``fcntl`` (Windows) there is no lock.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from evalkit.documents.files.private import private_folder
from evalkit.documents.json_input import parse_json_text
from evalkit.errors import EvalkitError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

FILENAME = "receiver.lock"


class StoreLock:
    """The single-instance lock of a store folder; ``acquire()`` raises ``EvalkitError`` when it is held."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.path = self.folder / FILENAME
        self._fd: int | None = None

    def acquire(self) -> StoreLock:
        if fcntl is None:
            return self
        try:
            private_folder(self.folder)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise EvalkitError(
                f"{self.folder}: cannot be used as the store folder ({exc.strerror or exc}); "
                "pass --store a folder evalkit may create or write to"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _describe(os.pread(fd, 4096, 0))
            os.close(fd)
            raise EvalkitError(
                f"{self.folder} is in use by another receiver ({holder}): stop that one first, or pass "
                "--store another folder (two receivers on one store would evaluate every session twice)"
            ) from None
        self._fd = fd
        self.update()
        return self

    def update(self, url: str | None = None) -> None:
        """Write this process's pid, host name, start time and (once bound) URL into the lock file."""
        if self._fd is None:
            return
        info = {"pid": os.getpid(), "host": socket.gethostname(), "url": url, "since": time.time()}
        data = json.dumps(info).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _describe(data: bytes) -> str:
    """The holder as a phrase: ``pid 123 on host h, listening on URL, since TIME``."""
    try:
        info = parse_json_text(data)
        parts = [f"pid {int(info['pid'])} on host {info['host']}"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return "its pid is not written yet"
    if info.get("url"):
        parts.append(f"listening on {info['url']}")
    if isinstance(info.get("since"), (int, float)):
        parts.append("since " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["since"])))
    return ", ".join(parts)
