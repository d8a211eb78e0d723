"""Keep the C heap from holding freed memory (glibc's ``mallopt`` and ``malloc_trim``), for the ``evalkit``
command.

Scoring a large table allocates and frees many arrays of a few hundred KB (each evaluator's result columns,
PartialMatch's token arrays). glibc serves such sizes by ``mmap`` at first, but raises that threshold each
time a mapped block is freed (up to 32 MB), after which it keeps freed blocks in its heap for reuse instead of
returning them: the process stays as large as its high-water mark. ``evalkit run`` then forks a writer that
shares everything the parent holds, and the run's peak is the larger of the two (issue 20).

:func:`map_large_blocks` fixes the threshold at glibc's initial 128 KiB, so a large block goes back to the
system when it is freed; :func:`give_back_free_memory` returns what the heap still holds free once the scored
table is all that is left, before the fork. Only for the command's own process (a library should not reach
into its host's allocator). Without glibc (macOS, Windows, musl) both do nothing.
"""

from __future__ import annotations

import ctypes
import functools

#: glibc's ``M_MMAP_THRESHOLD`` parameter of ``mallopt``, and the value it starts from.
_M_MMAP_THRESHOLD = -3
LARGE_BLOCK = 128 * 1024


@functools.lru_cache(maxsize=1)
def _libc():
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt, libc.malloc_trim  # noqa: B018 - glibc has both; elsewhere this raises
    except (OSError, AttributeError, TypeError):
        return None
    return libc


def map_large_blocks() -> None:
    """Serve blocks of :data:`LARGE_BLOCK` bytes and more by ``mmap`` for good, so freeing one returns it."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, LARGE_BLOCK)


def give_back_free_memory() -> None:
    """Return the heap's free pages to the system, when the C library can."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
