"""Owner-only files and folders, for what holds prompts and completions (the judge cache, the online store).

Why: a judge cache or a span store holds what the agent was asked and what it answered, which is often
confidential; on a shared machine the default permissions (0644 files, 0755 folders) let every user read
them. A folder evalkit creates for them is made ``0700``, and their database files are made ``0600`` before
SQLite first opens them: SQLite gives the ``-wal`` and ``-shm`` files beside a database the database file's
permissions, so those are owner-only too. A database file that already exists with wider permissions is
narrowed to ``0600`` when evalkit opens it (only when the current user owns it). A folder that already
exists is left as it is: it may be the user's own (``$EVALKIT_CACHE_DIR`` pointed at a project folder).
On Windows, where POSIX modes do not apply, nothing is changed.
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700
_POSIX = os.name == "posix"


def private_folder(path: str | os.PathLike) -> Path:
    """Create ``path`` (and missing parents) if need be; the folder itself is created ``0700``."""
    folder = Path(path)
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            pass  # made meanwhile by another process
        else:
            if _POSIX:
                os.chmod(folder, FOLDER_MODE)  # mkdir's mode is reduced by the umask; 0700 is what we want
    return folder


def private_file(path: str | os.PathLike) -> Path:
    """Make sure ``path`` exists and is ``0600`` (created so, or narrowed when the user owns it)."""
    target = Path(path)
    if _POSIX:
        fd = os.open(target, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            info = os.fstat(fd)
            if info.st_mode & 0o077 and info.st_uid == os.getuid():
                os.fchmod(fd, FILE_MODE)
        finally:
            os.close(fd)
        for suffix in ("-wal", "-shm", "-journal"):
            _narrow(Path(f"{target}{suffix}"))
    return target


def _narrow(path: Path) -> None:
    try:
        info = path.stat()
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(path, FILE_MODE)
    except OSError:
        pass
