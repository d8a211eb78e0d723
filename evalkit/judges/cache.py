"""A content-addressed cache of LLM-judge results, so that judge calls are never paid for twice.

A result is stored under :func:`cache_key`, the sha256 of everything that decides it: the evaluator's identity
(its name and version, or the hash of a custom evaluator's ``.py`` and ``.prompty``), the judge model and its
parameters, the inputs, and the sample number. A re-run of an unchanged run therefore makes no model calls,
editing one ``.prompty`` changes only that judge's keys, and a run stopped by Ctrl-C or ``kill -9`` resumes
without repeating the calls it completed, because every :meth:`JudgeCache.put` commits at once.

Secrets never reach the database: :func:`cache_key` drops secret-named model fields (``api_key``, ``token``,
``Authorization`` ...) before hashing, so rotating a key keeps the cache valid, and only the hash is stored.
Values are stored as given (a judge's score and reason); a caller that records the model in a value passes it
through :func:`redact_secrets` first.

The store is one SQLite file in WAL mode (:func:`cache_dir` / ``judge-cache.sqlite3``). A cache must never be
the reason a run fails: a database that cannot be opened or read (corrupt, not SQLite, unwritable, made by a
newer evalkit) logs one warning and the run goes on with a disabled cache that stores nothing. The file is
left as it is for the user to inspect or delete; ``evalkit cache info`` reports why it is unusable.

The cache holds prompts' inputs and the judges' answers, so it is owner-only: its folder is created ``0700``
and the database (with its ``-wal`` and ``-shm`` files) is ``0600`` (``evalkit.documents.files.private``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalkit.documents.files.private import private_file, private_folder
from evalkit.documents.redaction import is_secret_name, redact_secrets

__all__ = ["JudgeCache", "NullCache", "cache_dir", "cache_key", "is_secret_name", "redact_secrets"]

log = logging.getLogger(__name__)

#: Bumped when the meaning of a key changes, so old entries are simply never found again.
KEY_VERSION = 1
#: ``PRAGMA user_version`` of the database layout this module writes; a newer layout is not touched.
SCHEMA_VERSION = 1
DEFAULT_FILENAME = "judge-cache.sqlite3"
#: Keys per ``IN (...)`` query: under SQLite's variable limit (999 before 3.32, 32766 since).
CHUNK = 500
#: Seconds a connection waits for another writer (another thread or another evalkit process).
BUSY_TIMEOUT = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_cache (
    key TEXT PRIMARY KEY,
    evaluator TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
)
"""
_COLUMNS = ["key", "evaluator", "value", "created", "hits"]
_UPSERT = (
    "INSERT INTO judge_cache (key, evaluator, value, created, hits) VALUES (?, ?, ?, ?, 0) "
    "ON CONFLICT(key) DO UPDATE SET evaluator = excluded.evaluator, value = excluded.value, "
    "created = excluded.created"
)


def cache_dir() -> Path:
    """The folder for evalkit's caches: ``$EVALKIT_CACHE_DIR``, else the platform's user cache folder.

    Linux and other Unix: ``$XDG_CACHE_HOME/evalkit`` (when set to an absolute path) or ``~/.cache/evalkit``;
    macOS: ``~/Library/Caches/evalkit``; Windows: ``%LOCALAPPDATA%\\evalkit\\Cache``. The folder is not
    created here; :class:`JudgeCache` creates it when it opens its database.
    """
    override = os.environ.get("EVALKIT_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        base = Path(local) if local else Path.home() / "AppData" / "Local"
        return base / "evalkit" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "evalkit"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "evalkit"


def _json_default(obj: Any) -> Any:
    # numpy scalars and arrays come out of DataFrames; their Python values hash and store the same way.
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON-serialisable")


def canonical_json(obj: Any) -> str:
    """One spelling for one value: sorted keys, no whitespace, non-ASCII kept, floats as ``repr``.

    ``1`` and ``1.0`` are different values (as they are to a judge prompt); NaN is spelled ``NaN``.
    """
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True, default=_json_default
    )


def cache_key(*, evaluator: str, model: dict, inputs: dict, sample: int = 0) -> str:
    """The sha256 hex that a judge result is stored under.

    ``evaluator`` is the identity the caller builds (``"builtin:Relevance@azure-ai-evaluation==1.18.10"``,
    ``"custom:tone@<sha256 of .py + .prompty>"``), ``model`` the judge model and its parameters (secret fields
    are dropped here, so a key rotation keeps the cache and no key is hashed), ``inputs`` what the judge sees,
    ``sample`` the index of a repeated judgement of the same inputs.
    """
    if not isinstance(evaluator, str) or not evaluator:
        raise TypeError("evaluator must be a non-empty identity string")
    if not isinstance(model, dict) or not isinstance(inputs, dict):
        raise TypeError("model and inputs must be dicts")
    if isinstance(sample, bool) or not isinstance(sample, int):
        raise TypeError("sample must be an int")
    payload = {
        "v": KEY_VERSION,
        "evaluator": evaluator,
        "model": redact_secrets(model),
        "inputs": inputs,
        "sample": sample,
    }
    # surrogatepass: a lone surrogate from a JSON document ("\ud800") still hashes instead of crashing.
    return hashlib.sha256(canonical_json(payload).encode("utf-8", "surrogatepass")).hexdigest()


def is_error_result(value: dict) -> bool:
    """Whether ``value`` records a failure (``result``/``status`` "error", or a non-empty ``error``).

    Failures are transient (a timeout, a rate limit), so they are never cached: a re-run tries again. An
    ``error`` field that is None, "" or NaN is the empty column of a successful result row, not an error.
    """
    if value.get("result") == "error" or value.get("status") == "error":
        return True
    error = value.get("error")
    return not (error is None or error == "" or (isinstance(error, float) and math.isnan(error)))


class NullCache:
    """The cache of ``--no-cache``: the interface of :class:`JudgeCache`, storing and finding nothing."""

    enabled = False
    path: Path | None = None
    reason = "caching is turned off"

    def get(self, key: str) -> dict | None:
        return None

    def get_many(self, keys: Iterable[str]) -> dict[str, dict]:
        return {}

    def put(self, key: str, evaluator: str, value: dict) -> bool:
        _serialise(value)  # the same TypeError as a real cache, so --no-cache hides no bug
        return False

    def info(self) -> dict:
        return {
            "path": None if self.path is None else str(self.path),
            "enabled": False,
            "reason": self.reason,
            "entries": 0,
            "size_bytes": 0,
            "hits": 0,
            "evaluators": {},
        }

    def clear(self, evaluator: str | None = None) -> int:
        return 0

    def stats(self) -> dict[str, int]:
        return {"hits": 0, "misses": 0, "stored": 0, "refused": 0}

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _serialise(value: dict) -> str:
    if not isinstance(value, dict):
        raise TypeError(f"a cached judge result is a dict, not {type(value).__name__}")
    return json.dumps(value, ensure_ascii=False, allow_nan=True, default=_json_default)


class JudgeCache:
    """Judge results in a SQLite file, keyed by :func:`cache_key`, safe to share by threads and processes.

    Threads share one connection behind a lock: measured against one connection per thread (10,000 puts or
    gets from 32 threads, median of 15 runs on 2 CPUs), the lock was faster and far steadier: puts 0.44 s
    against 0.56-0.64 s, gets 0.43 s against 0.48-1.1 s. Separate connections contend for SQLite's write lock
    and wait in its sleeping busy handler; a lock hands the one connection over at once.

    WAL mode lets another evalkit process read while this one writes, and a writer waits up to
    ``BUSY_TIMEOUT`` seconds for another's write lock. Every ``put`` is its own transaction, committed before
    it returns, so ``kill -9`` loses at most the calls in flight.

    Database failures never raise out of the methods: a file that cannot be opened gives a disabled cache
    (one warning), a later error disables it (one warning), a writer that stays busy costs one miss or one
    unstored result.
    """

    def __init__(self, path: Path | str | None = None):
        self._setup(path, reason=None)
        try:
            private_folder(self.path.parent)
            private_file(self.path)
            self._db = self._open()
        except (sqlite3.Error, OSError) as exc:
            self._disable(f"cannot open {self.path}: {exc}")
        else:
            self.enabled = True

    @classmethod
    def disabled(cls, path: Path | str | None = None, reason: str = "disabled") -> JudgeCache:
        """A cache that stores and finds nothing, for when the database cannot be used."""
        cache = cls.__new__(cls)
        cache._setup(path, reason=reason)
        return cache

    def _setup(self, path: Path | str | None, reason: str | None) -> None:
        self.path = Path(path) if path is not None else cache_dir() / DEFAULT_FILENAME
        self.enabled = False
        self.reason = reason
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._counts = {"hits": 0, "misses": 0, "stored": 0, "refused": 0}

    def _open(self) -> sqlite3.Connection:
        """Open, check and if need be create the database; raises sqlite3.Error when it is unusable."""
        # isolation_level=None: each statement commits on its own. check_same_thread=False: the connection is
        # shared by the threads of a pool, always under self._lock.
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
        try:
            # The first statement that reads the file: "file is not a database" surfaces here.
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"cannot switch to WAL mode (journal mode is {mode})")
            conn.execute("PRAGMA synchronous=NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"made by a newer evalkit (layout {version} > {SCHEMA_VERSION})")
            conn.execute(_SCHEMA)
            columns = [row[1] for row in conn.execute("PRAGMA table_info(judge_cache)")]
            if columns != _COLUMNS:
                raise sqlite3.DatabaseError(f"table judge_cache has columns {columns}, expected {_COLUMNS}")
            if version < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _disable(self, reason: str) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self.enabled = False
            self.reason = reason
        log.warning("judge cache disabled, results will not be cached: %s", reason)

    def _failed(self, action: str, exc: sqlite3.Error) -> None:
        """A database error in use: a busy writer costs this one call; anything else disables the cache."""
        message = str(exc).lower()
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in message or "busy" in message):
            log.warning("judge cache %s skipped: %s", action, exc)
        else:
            self._disable(f"{action} failed on {self.path}: {exc}")

    # -- the interface ------------------------------------------------------------------------------------

    def get(self, key: str) -> dict | None:
        """The value stored under ``key`` (and one more hit for it), or None."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, dict]:
        """``{key: value}`` for the stored keys, one query per ``CHUNK`` keys; each key found is a hit."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict] = {}
        with self._lock:
            if self.enabled:
                try:
                    for chunk in _chunks(wanted):
                        marks = ",".join("?" * len(chunk))
                        rows = self._db.execute(
                            f"SELECT key, value FROM judge_cache WHERE key IN ({marks})", chunk
                        )
                        for key, text in rows:
                            try:
                                value = json.loads(text)  # evalkit's own rows (tests/test_one_parser.py)
                            except (ValueError, RecursionError):
                                continue  # a damaged row is a miss: the result is computed and stored again
                            if isinstance(value, dict):
                                found[key] = value
                except sqlite3.Error as exc:
                    self._failed("read", exc)
                    found = {}
                if found:
                    self._add_hits(list(found))
            self._counts["hits"] += len(found)
            self._counts["misses"] += len(wanted) - len(found)
        return found

    def _add_hits(self, keys: list[str]) -> None:
        # Hit counts are statistics: failing to write one must not lose the value that was read.
        try:
            for chunk in _chunks(keys):
                marks = ",".join("?" * len(chunk))
                self._db.execute(f"UPDATE judge_cache SET hits = hits + 1 WHERE key IN ({marks})", chunk)
        except sqlite3.Error as exc:
            log.debug("judge cache hit count not updated: %s", exc)

    def put(self, key: str, evaluator: str, value: dict) -> bool:
        """Store ``value`` under ``key`` and commit; False when it is not stored (an error result, no cache).

        Raises TypeError when ``value`` is not a JSON-serialisable dict, whether or not the cache is enabled.
        """
        text = _serialise(value)
        with self._lock:
            if is_error_result(value):
                self._counts["refused"] += 1
                return False
            if not self.enabled:
                return False
            try:
                self._db.execute(_UPSERT, (key, evaluator, text, time.time()))
            except sqlite3.Error as exc:
                self._failed("write", exc)
                return False
            self._counts["stored"] += 1
            return True

    def stats(self) -> dict[str, int]:
        """What this object did since it was opened: hits, misses, stored and refused (error) results."""
        with self._lock:
            return dict(self._counts)

    def info(self) -> dict:
        """Path, whether enabled (and why not), entries, size on disk, total hits, entries per evaluator."""
        with self._lock:
            rows = []
            if self.enabled:
                try:
                    rows = self._db.execute(
                        "SELECT evaluator, count(*), total(hits) FROM judge_cache "
                        "GROUP BY evaluator ORDER BY evaluator"
                    ).fetchall()
                except sqlite3.Error as exc:
                    self._failed("info", exc)
                    rows = []
            return {
                "path": str(self.path),
                "enabled": self.enabled,
                "reason": self.reason,
                "entries": sum(count for _, count, _ in rows),
                "size_bytes": self.size_bytes(),
                "hits": int(sum(hits for _, _, hits in rows)),
                "evaluators": {evaluator: count for evaluator, count, _ in rows},
            }

    def size_bytes(self) -> int:
        """Bytes on disk of the database and its ``-wal`` and ``-shm`` files."""
        total = 0
        for suffix in ("", "-wal", "-shm"):
            try:
                total += os.stat(f"{self.path}{suffix}").st_size
            except OSError:
                pass
        return total

    def clear(self, evaluator: str | None = None) -> int:
        """Remove every entry, or those whose evaluator identity starts with ``evaluator``; return how many.

        The prefix is compared case-sensitively and literally (``%`` and ``_`` are not wildcards). The file is
        compacted afterwards so that ``info`` shows the space given back.
        """
        with self._lock:
            if not self.enabled:
                return 0
            try:
                if evaluator:
                    cursor = self._db.execute(
                        "DELETE FROM judge_cache WHERE substr(evaluator, 1, ?) = ?",
                        (len(evaluator), evaluator),
                    )
                else:
                    cursor = self._db.execute("DELETE FROM judge_cache")
                removed = cursor.rowcount
            except sqlite3.Error as exc:
                self._failed("clear", exc)
                return 0
            if removed:
                try:
                    self._db.execute("VACUUM")
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error as exc:  # another process is reading: the space is reused later instead
                    log.debug("judge cache not compacted: %s", exc)
            return removed

    def close(self) -> None:
        """Close the database; later calls find nothing and store nothing."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self.enabled:
                self.enabled = False
                self.reason = "closed"

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "enabled" if self.enabled else f"disabled: {self.reason}"
        return f"JudgeCache({str(self.path)!r}, {state})"


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]
