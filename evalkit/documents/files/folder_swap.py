"""Replace a run's files as one set: write them into a staging folder beside the target, then swap folders.

A run writes several files that belong together (``results.json``, ``results.csv``, ``report.html`` and, with
an agent, ``spans.jsonl``). Replacing them one by one leaves a mix of two runs when the process is killed
between two renames. :func:`replaced_folder` gives the writer a fresh staging folder beside the target
(``.<name>.evalkit-<pid>-<random>``, same file system); once every file is complete it exchanges the staging
folder with the target in **one** ``renameat2(RENAME_EXCHANGE)`` call (Linux 3.15+, the common local file
systems: ext4, xfs, btrfs, tmpfs). A reader, or a process killed with ``kill -9`` at any moment, therefore
sees the complete old set or the complete new set, never a mix. After the exchange the staging name holds the
old folder, which is then removed.

Why this design rather than a symlink to a versioned folder: ``--out`` stays a real folder (no surprise for
``rm -r``, ``shutil.rmtree``, sync tools or Windows shares), and a folder that exists already needs no
non-atomic first conversion into a symlink.

A results folder that is a mount point (a container volume) cannot be renamed at all: there the files are
staged inside the folder and renamed in one by one, with a warning that a kill can then leave a mix.

Where ``RENAME_EXCHANGE`` is not available (another OS, or a file system that refuses it), the swap is two
renames: the target moves aside to ``.<name>.evalkit-<pid>-old``, then the staging folder takes its name. A
kill between the two leaves no target folder for a moment; the next :func:`replaced_folder` on that target
(the next run) moves the old folder back first, so it again holds one complete set.

What the staging folder does not hold, the target's other entries (files evalkit does not write, say notes
or a rendered notebook), is carried over into the staging folder (hard links, or copies across devices)
just before the swap, so only the run's own files change. Staging folders whose process is gone, left by a
killed run, are removed by the next run on the same target; folders of live processes are left alone.

``EVALKIT_TEST_KILL_AT=<point>`` makes the process ``SIGKILL`` itself at a named point (``staged``: every
file written, before the swap; ``swapped``: after the exchange, before the old folder is removed); the
crash tests use it to kill a real ``evalkit run`` at exact moments; ``EVALKIT_NO_RENAME_EXCHANGE=1`` forces
the two-rename swap, so its recovery is tested on Linux too.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import re
import secrets
import shutil
import signal
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from evalkit.documents.files.output_paths import refuse_dangling_links

log = logging.getLogger("evalkit.folder_swap")

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_KILL_ENV = "EVALKIT_TEST_KILL_AT"


def kill_point(name: str) -> None:
    """SIGKILL this process when ``EVALKIT_TEST_KILL_AT`` names this point (crash tests only)."""
    if os.environ.get(_KILL_ENV) == name:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def staging_pattern(name: str) -> re.Pattern:
    """Names of the staging (and moved-aside) folders of target ``name``, with the pid that made them."""
    return re.compile(rf"^\.{re.escape(name)}\.evalkit-(\d+)-(\w+)$")


@contextlib.contextmanager
def replaced_folder(target: str | os.PathLike, owned: Iterable[str] = ()) -> Iterator[Path]:
    """Yield an empty staging folder; when the block ends without an exception, it replaces ``target``.

    ``owned`` names the files the caller writes: the target's other entries are carried over, while owned
    names missing from the staging folder are dropped (a ``spans.jsonl`` of an earlier run with an agent
    does not survive a run without one). On an exception the staging folder is removed and ``target`` is
    left as it was. A symlinked target keeps its link: the folder it points to is replaced; a dangling link
    (or one among the folders on the way) is refused (``EvalkitError``), never followed.
    """
    refuse_dangling_links(target)  # realpath would follow it, and mkdir create its missing folders
    target = Path(os.path.realpath(target))
    if os.path.lexists(target) and not target.is_dir():
        raise NotADirectoryError(
            errno.ENOTDIR, "it is a file, not a folder: remove it or write the results elsewhere", str(target)
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    if _is_mount_point(target):
        with _replaced_in_place(target, set(owned)) as staging:
            yield staging
        return
    recover(target)
    staging = target.parent / f".{target.name}.evalkit-{os.getpid()}-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        os.chmod(staging, _folder_mode(target))
        yield staging
        _carry_over(target, staging, set(owned))
        _fsync_tree(staging)
        kill_point("staged")
        _swap(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _is_mount_point(target: Path) -> bool:
    """A folder that is a mount point (a Docker volume, say) cannot be renamed: its files are replaced."""
    return target.is_dir() and os.path.ismount(target)


@contextlib.contextmanager
def _replaced_in_place(target: Path, owned: set[str]) -> Iterator[Path]:
    """The fallback for a mount point: stage inside the folder, then rename the files in one by one.

    Each file is still replaced atomically and no temporary file stays behind, but a crash between two
    renames leaves files of two runs: a warning says so.
    """
    log.warning(
        "%s is a mount point, which cannot be swapped as a whole: its files are replaced one by one, so a run "
        "killed while replacing them can leave files of two runs. Write to a folder inside the mount for a "
        "replacement as one set.",
        target,
    )
    pattern = re.compile(r"^\.evalkit-staging-(\d+)-\w+$")
    for entry in list(os.scandir(target)):
        match = pattern.match(entry.name)
        if match and not _alive(int(match.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
    staging = target / f".evalkit-staging-{os.getpid()}-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        yield staging
        _fsync_tree(staging)
        written = {entry.name for entry in os.scandir(staging)}
        for name in sorted(written):
            os.replace(staging / name, target / name)
        for name in owned - written:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def recover(target: Path) -> None:
    """Undo what a killed run left beside ``target``: put a moved-aside folder back, remove stale staging."""
    pattern = staging_pattern(target.name)
    try:
        entries = list(os.scandir(target.parent))
    except FileNotFoundError:
        return
    for entry in entries:
        match = pattern.match(entry.name)
        if not match or _alive(int(match.group(1))):
            continue
        path = Path(entry.path)
        if match.group(2) == "old" and not os.path.lexists(target):
            log.warning("restoring %s from %s, left by a killed run", target, path.name)
            os.rename(path, target)
            continue
        log.debug("removing %s, left by a killed run", path)
        shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _folder_mode(target: Path) -> int:
    """The target's permissions, or what a plain ``mkdir`` would give (mkdtemp-style names start at 0700)."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o777 & ~mask


def _carry_over(target: Path, staging: Path, owned: set[str]) -> None:
    """Link (or copy) the target's entries that the run neither wrote nor owns into the staging folder."""
    try:
        entries = list(os.scandir(target))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if entry.name in owned or os.path.lexists(staging / entry.name):
            continue
        destination = staging / entry.name
        if entry.is_dir(follow_symlinks=False):
            shutil.copytree(entry.path, destination, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(entry.path, destination)


def _link_or_copy(source: str, destination: str | Path) -> None:
    if os.path.islink(source):
        os.symlink(os.readlink(source), destination)
        return
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)


def _fsync_tree(folder: Path) -> None:
    """Flush the staged files and the folder itself, so the swap never exposes files still in the cache."""
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False):
            _fsync_path(entry.path, os.O_RDONLY)
    _fsync_path(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def _fsync_path(path: str | Path, flags: int) -> None:
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _swap(staging: Path, target: Path) -> None:
    """Put the staging folder at ``target`` and remove the old folder; atomic where the OS allows it."""
    cwd = _cwd_inside(target)
    if not os.path.lexists(target):
        try:
            os.rename(staging, target)
        except OSError as exc:  # created meanwhile by someone else: exchange with it below
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
        else:
            _after_swap(target, None, cwd)
            return
    old = staging  # after an exchange, the staging name holds the old folder
    if not _exchange(staging, target):
        old = target.parent / f".{target.name}.evalkit-{os.getpid()}-old"
        os.rename(target, old)
        kill_point("moved-aside")
        try:
            os.rename(staging, target)
        except BaseException:
            os.rename(old, target)
            raise
    kill_point("swapped")
    _after_swap(target, old, cwd)


def _after_swap(target: Path, old: Path | None, cwd: str | None) -> None:
    _fsync_path(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    if cwd is not None:
        # The process's current directory was inside the old folder: follow its path into the new one.
        with contextlib.suppress(OSError):
            os.chdir(cwd if os.path.isdir(cwd) else target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _cwd_inside(target: Path) -> str | None:
    try:
        cwd = os.getcwd()
    except FileNotFoundError:
        return None
    inside = cwd == str(target) or cwd.startswith(str(target) + os.sep)
    return cwd if inside else None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one system call; False when this OS or file system cannot."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        log.debug("renameat2(RENAME_EXCHANGE) unsupported here (%s): two renames", os.strerror(code))
        return False
    raise OSError(code, os.strerror(code), str(b))


_LIBC: list = []


def _renameat2():
    """libc's ``renameat2`` (glibc 2.28+, musl 1.2.2+), or None elsewhere."""
    if os.environ.get("EVALKIT_NO_RENAME_EXCHANGE") or not sys.platform.startswith("linux"):
        return None
    if not _LIBC:
        try:
            function = ctypes.CDLL(None, use_errno=True).renameat2
            function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            function.restype = ctypes.c_int
        except (OSError, AttributeError):
            function = None
        _LIBC.append(function)
    return _LIBC[0]


def die_with_parent(parent: int) -> None:
    """In a forked child: be killed when the parent dies (Linux ``PR_SET_PDEATHSIG``), so a killed run
    leaves no writer behind; exit at once if the parent is already gone."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)
