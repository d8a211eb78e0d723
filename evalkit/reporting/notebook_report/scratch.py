"""The scratch folder of ``evalkit report``: removed in every path, ``kill -9`` included.

Everything the report's notebook run writes outside its two outputs goes into one folder,
``$TMPDIR/evalkit-report-<pid>-<random>/`` (:func:`tempfile.gettempdir`):

- ``report.ipynb``, the executed notebook (papermill saves it after every cell);
- ``kernel.json``, the kernel's connection file (with its HMAC key), instead of jupyter_client's default
  ``$TMPDIR/tmp*.json``;
- ``kernel-1`` ... ``kernel-5``, the kernel's IPC sockets (POSIX; elsewhere the kernel listens on localhost);
- ``kernel_log.json``, the kernel's log config (:mod:`evalkit.reporting.kernel_log`);
- ``out/``, the notebook's own output folder.

The folder is removed when the report ends, by the ``with`` block on success or error, and by a watchdog
process when evalkit is killed outright: the watchdog, in its own session so that signals sent to the
terminal's process group do not reach it, blocks on a pipe from evalkit and removes the folder when the pipe
closes, which the OS does when evalkit dies for any reason. The kernel, whose parent is gone, shuts itself
down (ipykernel's parent poller). Should the watchdog die too, the next ``evalkit report`` removes
scratch folders whose process is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

PREFIX = "evalkit-report-"
_NAME = re.compile(rf"^{PREFIX}(\d+)-\w+$")

# Runs in a separate interpreter: reads stdin to its end. Evalkit writes one byte before closing it when the
# report ended normally (the folder is gone already); an end without that byte means evalkit died: remove the
# folder, and once more a moment later, in case the orphaned kernel wrote a last file while shutting down.
_WATCHDOG = """
import shutil, sys, time
if not sys.stdin.buffer.read():
    for delay in (0, 2):
        time.sleep(delay)
        shutil.rmtree(sys.argv[1], ignore_errors=True)
"""


@contextlib.contextmanager
def scratch_folder() -> Iterator[Path]:
    """A fresh scratch folder, guarded by a watchdog; removed when the block ends or the process dies."""
    remove_stale()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    watchdog = _start_watchdog(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if watchdog is not None:
            with contextlib.suppress(OSError):
                watchdog.stdin.write(b".")  # "ended normally": the watchdog exits at once
                watchdog.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                watchdog.wait(timeout=5)


def _start_watchdog(folder: Path) -> subprocess.Popen | None:
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
        )
    except OSError:  # no watchdog: the next run still removes the folder
        return None


def remove_stale(root: str | os.PathLike | None = None) -> list[Path]:
    """Remove scratch folders left in ``root`` (the temp folder) by ``evalkit report`` processes that are
    gone; returns what was removed. Folders of live processes are left alone."""
    removed = []
    base = Path(root or tempfile.gettempdir())
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        match = _NAME.match(entry.name)
        if match and entry.is_dir(follow_symlinks=False) and not _alive(int(match.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
