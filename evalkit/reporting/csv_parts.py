"""results.csv of a large run written in numbered parts by two processes, then joined into the one file.

Why: the CLI writes results.json here and report.html in a forked writer at the same time; results.csv used to
go whole to whichever finished first, so one process sat idle while the other wrote it (about 0.3 s of a
100,000-row run, issue 20). Now both take parts of it from a shared pile as soon as they are free.

How: the rows are cut into ``count`` ranges. ``PartClaims`` is a pipe holding the part numbers, made before the
fork: each read takes the next number, so every part goes to exactly one process and neither waits for the
other. A process writes a part to its own file beside results.csv (written under a temporary name, renamed
when complete). ``CsvParts.join`` then writes, here, any part that no process completed (a failed forked
writer costs time, never rows) and joins the header and the parts, in order, into results.csv (copied inside
the kernel), and removes the part files. Each part's text is :func:`csv_file.write_csv_rows` of its range, so
the file is byte for byte what :func:`csv_file.write_csv` writes.

May import: evalkit.documents.files, evalkit.reporting.csv_file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
from pathlib import Path

import pandas as pd

from evalkit.documents.files.atomic import atomic_write
from evalkit.reporting.csv_file import write_csv_rows

#: Rows per part: about 2 MB of CSV at 100,000 rows of ~20-word texts, small enough to share the tail of the
#: work evenly, large enough that claiming and joining cost nothing measurable.
PART_ROWS = 5_000
#: Parts at most: their numbers must fit in the pipe at once (4 bytes each, 64 KiB on Linux).
MAX_PARTS = 4_096
_NUMBER = struct.Struct("<I")


class PartClaims:
    """The part numbers ``0 .. count - 1`` in a pipe shared with a forked process; ``take`` claims the next.

    Reads of one 4-byte number are atomic (the kernel serialises a pipe's readers), so no number is taken
    twice. Made before the fork; each process closes its end with ``close``.
    """

    def __init__(self, count: int):
        self._read, write = os.pipe()
        os.write(write, b"".join(_NUMBER.pack(number) for number in range(count)))
        os.close(write)
        os.set_blocking(self._read, False)

    def take(self) -> int | None:
        """The next unclaimed part, or None when all are taken."""
        try:
            data = os.read(self._read, _NUMBER.size)
        except (BlockingIOError, OSError):
            return None
        return _NUMBER.unpack(data)[0] if len(data) == _NUMBER.size else None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._read)


class CsvParts:
    """results.csv of ``df`` at ``path`` as numbered parts: ``write_claimed`` in any process, ``join`` here."""

    def __init__(self, df: pd.DataFrame, path: Path):
        self.df, self.path = df, Path(path)
        rows = len(df)
        self.part_rows = max(PART_ROWS, -(-rows // MAX_PARTS))
        self.count = max(1, -(-rows // self.part_rows))

    def part_path(self, number: int) -> Path:
        return self.path.with_name(f".{self.path.name}.part-{number:05d}")

    def write_part(self, number: int) -> None:
        """Write part ``number`` (rows ``number * part_rows`` on) to its file, renamed into place when done."""
        start = number * self.part_rows
        final = self.part_path(number)
        partial = final.with_name(final.name + ".tmp")
        with open(partial, "w", encoding="utf-8", newline="") as handle:
            write_csv_rows(self.df, handle, start, start + self.part_rows, header=False)
        os.replace(partial, final)

    def write_claimed(self, claims: PartClaims) -> int:
        """Write parts while ``claims`` has any left; the number written."""
        written = 0
        while (number := claims.take()) is not None:
            self.write_part(number)
            written += 1
        return written

    def join(self) -> int:
        """Write the parts no process completed, join header and parts into results.csv (atomically) and
        remove the part files; the number of parts written here."""
        missing = [number for number in range(self.count) if not self.part_path(number).exists()]
        for number in missing:
            self.write_part(number)
        try:
            with atomic_write(self.path, "w", encoding="utf-8", newline="") as handle:
                write_csv_rows(self.df, handle, 0, 0)  # the header line alone
                handle.flush()
                for number in range(self.count):
                    with open(self.part_path(number), "rb") as part:
                        _copy(part.fileno(), handle.fileno())
        finally:
            self.remove_parts()
        return len(missing)

    def remove_parts(self) -> None:
        for number in range(self.count):
            final = self.part_path(number)
            for path in (final, final.with_name(final.name + ".tmp")):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()


def _copy(source: int, target: int) -> None:
    """Append all of file ``source`` to file ``target`` (both descriptors at their positions)."""
    size = os.fstat(source).st_size
    if hasattr(os, "copy_file_range"):
        try:
            while size > 0:
                copied = os.copy_file_range(source, target, size)
                if copied == 0:
                    break
                size -= copied
            return
        except OSError:  # a file system or kernel without it: copy through this process
            pass
    with os.fdopen(os.dup(source), "rb") as reading, os.fdopen(os.dup(target), "ab") as writing:
        shutil.copyfileobj(reading, writing)
