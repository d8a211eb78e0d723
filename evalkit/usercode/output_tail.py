"""What user code prints, kept apart from its answers and bounded: the last ``LIMIT`` bytes are kept.

As Lambda keeps a function's logs apart from its payload, a worker's standard output and standard error go to
a pipe of their own that the parent reads while it waits for an answer; a handler printing megabytes can
neither bury nor corrupt its response, and costs the parent at most ``LIMIT`` bytes per call.

May import nothing of evalkit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

#: Bytes of output kept per call (the tail: the end of a log says most about how a call ended).
LIMIT = 64 * 1024


@dataclass(frozen=True)
class Logs:
    """What one call printed: ``text`` (its last ``LIMIT`` bytes, decoded) and ``cut`` (bytes dropped before)."""

    text: str = ""
    cut: int = 0

    def shown(self) -> str:
        """The text with a first line saying how much was cut, if anything was."""
        if not self.cut:
            return self.text
        return f"[{self.cut:,} bytes of output cut; the last {LIMIT:,} bytes follow]\n{self.text}"


class OutputTail:
    """Reads a worker's output pipe, keeping the last ``limit`` bytes since the last ``take``."""

    def __init__(self, fd: int, limit: int = LIMIT):
        self.fd = fd
        self.limit = limit
        self._buffer = bytearray()
        self._cut = 0
        self.closed = False

    def read(self) -> None:
        """Read what is there now (call when ``fd`` is readable)."""
        try:
            chunk = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self.closed = True
            return
        self._buffer += chunk
        over = len(self._buffer) - self.limit
        if over > 0:
            del self._buffer[:over]
            self._cut += over

    def drain(self) -> None:
        """Read everything already written (the fd is non-blocking)."""
        while not self.closed:
            before = len(self._buffer) + self._cut
            self.read()
            if len(self._buffer) + self._cut == before:
                return

    def take(self) -> Logs:
        logs = Logs(self._buffer.decode("utf-8", "replace"), self._cut)
        self._buffer = bytearray()
        self._cut = 0
        return logs
