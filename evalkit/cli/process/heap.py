"""Give the C heap's free memory back to the system (glibc's ``malloc_trim``), for the ``evalkit`` command.

Scoring a large table allocates and frees many arrays of a few hundred KB (each evaluator's result columns,
PartialMatch's token arrays). glibc serves such sizes by ``mmap`` at first, but raises that threshold each
time a mapped block is freed (up to 32 MB), after which it keeps freed blocks in its heap for reuse instead of
returning them: the process stays as large as its high-water mark. ``evalkit run`` then forks a writer that
shares everything the parent holds, and the run's peak is the larger of the two (issue 20).

:func:`give_back_free_memory` returns what the heap holds free once the scored table is all that is left,
before the fork. (Fixing the mmap threshold instead, with ``mallopt``, kept 6 MB less at 100,000 rows but cost
a second of system time in page faults, so it is not done.) Only for the command's own process: a library
should not reach into its host's allocator. Without glibc (macOS, Windows, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import functools


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None


def give_back_free_memory() -> None:
    """Return the heap's free pages to the system, when the C library can."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
