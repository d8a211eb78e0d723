"""Opening a user's input file: a regular file only, and never a wait on a pipe, a device or a socket.

Every document, span file, results file, labels file and recorded event evalkit reads goes through
:func:`open_input`. A named pipe with no writer blocks ``open`` forever, and a device (``/dev/zero``,
``/dev/tty``) or a socket is no file a user meant to evaluate, so anything that is not a regular file is refused
with a ``DocumentError`` naming it: checked with ``stat`` before opening (a device is never opened), then again
with ``fstat`` on the opened descriptor, which is opened non-blocking, so a regular file swapped for a pipe
between the two checks cannot hang the process either.

May import: ``evalkit.errors`` only.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import BinaryIO

from evalkit.errors import DocumentError, shown

__all__ = ["check_input", "open_input"]

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _refusal(path: object, mode: int, what: str) -> str | None:
    """The message refusing a file of ``mode``, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"{shown(path)}: is a directory, not a JSON {what}"
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return (
        f"{shown(path)}: is {kind}, not a regular file; evalkit reads only regular files: save the data to a "
        "file and give that"
    )


def check_input(path: str | os.PathLike, what: str = "file") -> None:
    """Raise ``DocumentError`` unless ``path`` is an existing regular file (symbolic links are followed)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise DocumentError(f"{shown(path)}: no such file") from None
    except OSError as exc:
        raise DocumentError(f"{shown(path)}: cannot be read ({exc.strerror or exc})") from None
    problem = _refusal(path, mode, what)
    if problem:
        raise DocumentError(problem)


def open_input(path: str | os.PathLike, what: str = "file") -> BinaryIO:
    """``path`` opened for reading in binary, refused (``DocumentError``) unless it is a regular file.

    ``what`` names the kind of file in messages (``document``, ``span file``).
    """
    check_input(path, what)
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise DocumentError(f"{shown(path)}: no such file") from None
    except OSError as exc:
        raise DocumentError(f"{shown(path)}: cannot be read ({exc.strerror or exc})") from None
    problem = _refusal(path, os.fstat(fd).st_mode, what)
    if problem:
        os.close(fd)
        raise DocumentError(problem)
    with contextlib.suppress(OSError, AttributeError):
        os.set_blocking(fd, True)  # a regular file: reads never block anyway; leave the descriptor ordinary
    return os.fdopen(fd, "rb")
