"""Fault injection for ``ModelServer``: queued and random failures of chat-completions requests.

Why here: the faults a test asks for (``ModelServer.fail_next`` / ``fail_randomly``: an error status with
``Retry-After``, a malformed 200, a raw body, a hang) are kept apart from how requests are parsed and answered.
``Faults`` holds them, thread-safe, and hands the server the next one to apply; a ``Fault`` says which
``Reply`` it forces, or only how long to hang before a normal answer.
"""

from __future__ import annotations

import random
import threading
from collections import deque
from dataclasses import dataclass

from evalkit.testing.answers import Reply

__all__ = ["Fault", "Faults", "make_fault"]


@dataclass
class Fault:
    """A fault as given to ``fail_next`` / ``fail_randomly``."""

    status: int
    retry_after: float | None
    malformed: bool
    hang: float
    raw_body: bytes | str | None
    message: str | None

    def reply(self) -> Reply | None:
        """The Reply this fault forces, or None when it only delays a normal answer (``hang``)."""
        if self.raw_body is not None:
            return Reply(raw_body=self.raw_body, status=self.status, retry_after=self.retry_after)
        if self.status != 200:
            return Reply(content=self.message, status=self.status, retry_after=self.retry_after)
        if self.malformed:
            return Reply(
                content=self.message or "This is not JSON {score: five", retry_after=self.retry_after
            )
        return None


def make_fault(
    status=None, retry_after=None, malformed=False, hang=0.0, raw_body=None, message=None
) -> Fault:
    """The fault for ``fail_next`` keywords: ``status`` defaults to 500, or to 200 when malformed, raw_body or
    hang is given."""
    if status is None:
        status = 200 if (malformed or raw_body is not None or hang) else 500
    return Fault(int(status), retry_after, bool(malformed), float(hang), raw_body, message)


class Faults:
    """Queued faults (used first, in order) and a random fault drawn with a seeded RNG; thread-safe."""

    def __init__(self, seed: int = 0):
        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        self._queued: deque[Fault] = deque()
        self._random: tuple[float, Fault] | None = None

    def queue(self, n: int, fault: Fault) -> None:
        """Apply ``fault`` to the next ``n`` requests, after any fault queued earlier."""
        with self._lock:
            self._queued.extend(fault for _ in range(n))

    def set_random(self, probability: float, fault: Fault) -> None:
        """Apply ``fault`` to each request with ``probability``; 0 turns it off."""
        with self._lock:
            self._random = (probability, fault) if probability else None

    def next(self) -> Fault | None:
        """The fault for the request being answered, if any."""
        with self._lock:
            fault = self._queued.popleft() if self._queued else None
            if fault is None and self._random and self._rng.random() < self._random[0]:
                fault = self._random[1]
        return fault

    def clear(self) -> None:
        """Drop queued faults and the random fault (the RNG keeps its state)."""
        with self._lock:
            self._queued.clear()
            self._random = None
