"""A document read in a forked child while this process does something else: ``evalkit run`` imports pandas and
its machinery meanwhile (issue 20: at 100,000 items each took about 0.7 s on one core, one after the other).

``LoadAhead.start(path)`` forks; the child reads, upgrades and validates the document into its cells
(``case_cells``, which imports neither pandas nor numpy) and pickles them, with the warnings the reading gave,
into a file in memory (``memfd``) shared with this process, then sends the payload's length down a pipe (26 MB
at 100,000 items: a pipe took 0.15 s to carry them, memory takes a few milliseconds). ``table()`` returns
exactly what ``case_table.load(path)`` returns: it repeats the warnings here, raises the child's error for a
document with a mistake (the same ``EvalkitError`` that loading here would raise), or builds the table from the
cells. Fork before pandas is imported: the child then starts small (a millisecond to fork) and the two
processes share no work.

A child that dies, or sends something that cannot be read, costs time and never the run: ``table()`` then loads
the document here, which also gives an unexpected error its usual traceback. ``close()`` reaps the child,
killing it when the table was never asked for (the command stopped on another mistake first); the child also
dies with this process. Nothing is forked when forking is not safe (no ``os.fork``, other threads running):
``start`` returns None and the caller loads as usual.

May import: evalkit.documents (case_cells; case_table in ``table``), evalkit.documents.files, evalkit.errors.
"""

from __future__ import annotations

import io
import logging
import mmap
import os
import pickle
import signal
import struct
import tempfile
import threading
import warnings
from pathlib import Path

from evalkit.documents.files.folder_swap import die_with_parent
from evalkit.errors import EvalkitError

log = logging.getLogger(__name__)
_LENGTHS = struct.Struct("<QQ")  # the byte lengths of the two pickles in the shared file
#: Columns of strings (or None), one object per cell, nothing shared: pickled without pickle's memo, which is
#: two thirds of the time of pickling them (0.03 s instead of 0.1 s at 100,000 items).
_TEXT_COLUMNS = ("prompt", "expected_response", "context", "response")


class LoadAhead:
    """One document being read in a forked child; ``table()`` once, then (or instead) ``close()``."""

    def __init__(self, path: Path, pid: int, pipe: int, shared: int):
        self.path, self.pid, self.pipe, self.shared = path, pid, pipe, shared
        self._reaped = False

    @classmethod
    def start(cls, path: str | os.PathLike) -> LoadAhead | None:
        """Fork a child reading ``path``; None when forking is not safe here."""
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return None
        path = Path(path)
        parent = os.getpid()
        shared = _shared_file()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: read, send, exit (never back into the caller's code)
            os.close(read)
            _read_in_child(parent, write, shared, path)
        os.close(write)
        return cls(path, pid, read, shared)

    def table(self):
        """The document's case table (``pd.DataFrame``); raises the document's ``EvalkitError`` if it has one."""
        from evalkit.documents.case_table import load, table_from_cells

        try:
            kind, value, warned = self._received()
        except Exception as exc:  # noqa: BLE001 - a lost child costs time, never the run
            log.debug("the forked reader of %s failed (%s): reading it here", self.path, exc)
            self.close()
            return load(self.path)
        self._reap(kill=False)  # it has sent everything: it is exiting
        for message, category, filename, lineno in warned:
            warnings.warn_explicit(message, category, filename, lineno)
        if kind == "error":
            raise value
        return table_from_cells(value)

    def _received(self) -> tuple:
        """``(kind, cells or error, warnings)`` from the shared file, once the child says how long its two
        pickles are (EOFError when it died first)."""
        header = os.read(self.pipe, _LENGTHS.size)  # the child writes these few bytes at once, or dies
        if len(header) < _LENGTHS.size:
            raise EOFError("the forked reader stopped before sending the document")
        first, second = _LENGTHS.unpack(header)
        with (
            mmap.mmap(self.shared, first + second, access=mmap.ACCESS_READ) as shared,
            memoryview(shared) as view,
        ):
            kind, value, warned = pickle.loads(view[:first])  # read in place: no copy of the bytes
            if kind == "cells":
                value.columns.update(pickle.loads(view[first:]))
        return kind, value, warned

    def close(self) -> None:
        """Reap the child, killing it first: its result, if it has not sent it, is no longer wanted."""
        self._reap(kill=True)

    def _reap(self, *, kill: bool) -> None:
        if self._reaped:
            return
        self._reaped = True
        os.close(self.pipe)
        os.close(self.shared)
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def _shared_file() -> int:
    """A file descriptor of an anonymous file: in memory (``memfd``) on Linux, a deleted temporary file elsewhere."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("evalkit-document", os.MFD_CLOEXEC)
    handle = tempfile.TemporaryFile()
    fd = os.dup(handle.fileno())
    handle.close()
    return fd


def _pickled_without_memo(value) -> bytes:
    """``pickle.dumps(value)`` with the pickler's fast mode (no memo: objects met twice are pickled twice)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True
    pickler.dump(value)
    return buffer.getvalue()


def _read_in_child(parent: int, pipe: int, shared: int, path: Path) -> None:
    code = 1
    try:
        die_with_parent(parent)
        from evalkit.documents.case_cells import read_cells  # here: the parent does not wait for its imports

        with warnings.catch_warnings(record=True) as caught:
            try:
                result = ("cells", read_cells(path).listed())
            except EvalkitError as exc:  # a mistake in the document: the parent raises it
                result = ("error", exc)
        warned = [(w.message, w.category, w.filename, w.lineno) for w in caught]
        texts = {}
        if result[0] == "cells":  # the text columns apart, their places kept in the cells' column order
            columns = result[1].columns
            texts = {name: columns[name] for name in _TEXT_COLUMNS}
            columns.update(dict.fromkeys(_TEXT_COLUMNS))
        first, second = pickle.dumps((*result, warned), protocol=5), _pickled_without_memo(texts)
        with open(shared, "wb", closefd=False) as out:
            out.write(first)
            out.write(second)
        os.write(pipe, _LENGTHS.pack(len(first), len(second)))
        code = 0
    except BaseException:  # noqa: BLE001 - the parent reads the document itself
        log.debug("forked reader failed", exc_info=True)
    finally:
        os._exit(code)
