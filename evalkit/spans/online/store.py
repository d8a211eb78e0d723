"""The durable store of the online evaluation receiver: one SQLite database in WAL mode.

``DIR/store.sqlite3`` holds four tables:

* ``spans``: one row per received span (``UNIQUE (trace_id, span_id)``, so a re-sent span is ignored), with
  its session id, the time it was received and its flat span document as JSON;
* ``records``: one row per received event record (an OTel log record of a span, ``POST /v1/logs``), keyed by
  ``event_record.record_key`` (``UNIQUE (trace_id, span_id, digest)``: a record has no id of its own, an
  exporter's retry sends it again whole), with its session id (None until its span or trace is known: it
  then joins through its trace, see ``session_documents``), received time and canonical document. A table of
  its own because a record shares its span's ids (the spans table's key), and because a store made before
  records existed gains it with ``CREATE TABLE IF NOT EXISTS``, where a new key on ``spans`` would have
  needed the table rebuilt;
* ``sessions``: one row per session id, its last received time, its state and whether it is sampled. States
  go ``open`` -> ``complete`` (no span for the session timeout) -> ``evaluated`` (results stored) or
  ``skipped`` (not sampled, or no span matched the filters);
* ``results``: the evaluator results, one row per result entry, each with a sequence number (the row id) that
  the JSONL exports carry so they can be resumed after a crash without repeating or losing a line.

Why this shape: a span is committed (``synchronous=FULL``) before the receiver answers 200, so an
acknowledged span survives a crash; a session is marked ``evaluated`` in the same transaction that stores its
results, so a crash either keeps both or neither, and a session is never evaluated twice nor forgotten. That
transaction does not wait for the disk (intake waits for the store's lock meanwhile): a killed process keeps it,
and only a power cut in the moments before the next span commit could make a session be evaluated again.

Spans hold prompts and completions, so the folder is created ``0700`` and the database files are ``0600``
(``evalkit.documents.files.private``); span documents, records and results are stored redacted as parsed
values (``evalkit.documents.redaction.redact_value``: strings only, so no number is ever rewritten), so a key
quoted in a span attribute, a secret-named attribute (``api_key``, a ``x-api-key`` header) or an evaluator's
error is not kept. Ids (session, trace and span ids) are kept as they are unless they hold a key; such an id
is stored as ``***`` and a digest of it (``redact_id``), the same in every table and in the documents, and
the lookups by trace and span id (``trace_sessions``, ``span_sessions``) redact the ids they are given the
same way, so sessions, traces and their records still join and two such ids never merge.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from evalkit.documents.files.private import private_file, private_folder
from evalkit.documents.json_input import parse_json_text
from evalkit.documents.redaction import redact_ids, redact_value, redacted_json
from evalkit.errors import EvalkitError
from evalkit.spans.reading.event_record import keyed_text

FILENAME = "store.sqlite3"
STATES = ("open", "complete", "evaluated", "skipped")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spans (
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    session_id TEXT,
    received REAL NOT NULL,
    document TEXT NOT NULL,
    UNIQUE (trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS spans_session ON spans (session_id);
CREATE TABLE IF NOT EXISTS records (
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    session_id TEXT,
    received REAL NOT NULL,
    document TEXT NOT NULL,
    UNIQUE (trace_id, span_id, digest)
);
CREATE INDEX IF NOT EXISTS records_session ON records (session_id);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    first_received REAL NOT NULL,
    last_received REAL NOT NULL,
    state TEXT NOT NULL DEFAULT 'open',
    sampled INTEGER NOT NULL,
    completed REAL,
    finished REAL
);
CREATE INDEX IF NOT EXISTS sessions_state ON sessions (state, last_received);
CREATE TABLE IF NOT EXISTS results (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    evaluator TEXT NOT NULL,
    trace_id TEXT,
    span_id TEXT,
    label TEXT,
    value REAL,
    explanation TEXT,
    error_code TEXT,
    passed INTEGER NOT NULL,
    service TEXT,
    timestamp REAL NOT NULL,
    entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS results_time ON results (evaluator, timestamp);
"""

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
#: A session's documents: its traces are those of its spans and records; then every span and record stored
#: with its id or, without one, in one of its traces.
_SESSION_DOCUMENTS = """
WITH traces AS (
    SELECT trace_id FROM spans WHERE session_id = :s
    UNION SELECT trace_id FROM records WHERE session_id = :s AND trace_id != ''
)
SELECT document FROM spans WHERE session_id = :s OR (session_id IS NULL AND trace_id IN traces)
UNION ALL
SELECT document FROM records WHERE session_id = :s OR (session_id IS NULL AND trace_id IN traces)
"""


_INSERT = {
    "spans": "INSERT OR IGNORE INTO spans (trace_id, span_id, session_id, received, document) "
    "VALUES (?, ?, ?, ?, ?)",
    "records": "INSERT OR IGNORE INTO records (trace_id, span_id, digest, session_id, received, document) "
    "VALUES (?, ?, ?, ?, ?, ?)",
}
#: Where the session id sits in a row of each table.
_SESSION = {"spans": 2, "records": 3}


class _Batch:
    """The spans (or records) of one ``add_spans`` (``add_records``) call waiting for a commit, then its
    outcome."""

    __slots__ = ("table", "rows", "now", "sampled", "added", "error", "done")

    def __init__(self, table: str, rows: list[tuple], now: float, sampled):
        self.table, self.rows, self.now, self.sampled = table, rows, now, sampled
        self.added, self.error, self.done = 0, None, False


class Store:
    """The SQLite store, shared by the receiver threads and the evaluation loop (one connection, one lock).

    SQLite allows one writer at a time anyway; a single connection behind a lock keeps transactions from
    interleaving across threads and avoids ``database is locked`` retries.
    """

    def __init__(self, folder: str | os.PathLike, *, readonly: bool = False):
        self.folder = Path(folder)
        self.path = self.folder / FILENAME
        self.lock = threading.RLock()
        self._queue: list[_Batch] = []  # span batches waiting for the next group commit
        self._queue_lock = threading.Lock()
        if readonly and not self.path.exists():
            raise FileNotFoundError(self.path)
        try:
            self._open(readonly)
        except sqlite3.DatabaseError as exc:
            raise self.unreadable(exc) from None

    def _open(self, readonly: bool) -> None:
        """Connect and prove the file is an SQLite database with evalkit's tables (``DatabaseError`` if not).

        The writer also runs ``PRAGMA quick_check`` (one pass over the file): writing on into a damaged
        database could lose what is still readable.
        """
        if readonly:
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            tables = {
                row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            missing = {"spans", "sessions", "results"} - tables
            if missing:
                raise sqlite3.DatabaseError(f"no {', '.join(sorted(missing))} table; not an evalkit store")
            self.has_records = "records" in tables  # a store from before records: read as having none
            return
        self.has_records = True
        try:
            # Spans hold prompts and completions: owner-only folder and files (-wal and -shm follow the db).
            private_folder(self.folder)
            private_file(self.path)
        except OSError as exc:  # not an OSError to the caller: that would read as "cannot listen"
            raise EvalkitError(
                f"{self.folder}: cannot be used as the store folder ({exc.strerror or exc}); "
                "pass --store a folder evalkit may create or write to"
            ) from None
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit is on disk before the receiver acknowledges it (NORMAL would survive a killed
        # process but not a power loss).
        self.db.execute("PRAGMA synchronous=FULL")
        problems = [row[0] for row in self.db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise sqlite3.DatabaseError(f"damaged: {problems[0]}")
        self.db.executescript(_SCHEMA)

    def unreadable(self, exc: Exception) -> EvalkitError:
        """The error for a store file SQLite cannot read: what is wrong, and the two ways out."""
        return EvalkitError(
            f"{self.path}: cannot be read as an evalkit store ({exc}); move it aside (e.g. rename it to "
            f"{FILENAME}.broken) to start a new store, or restore it from a backup"
        )

    def close(self) -> None:
        with self.lock:
            self.db.close()

    # --- ingest ---------------------------------------------------------------------------------------

    def add_spans(
        self, docs: list[dict], sessions: list[str | None], sampled, now: float | None = None
    ) -> int:
        """Store spans and touch their sessions in one committed transaction; returns how many were new.

        Calls that arrive from other threads while a commit is under way share the next transaction (group
        commit): the receiver's connections then pay one fsync between them, and each call still returns
        only once its spans are on disk.

        ``sessions`` holds each span's session id (None when unknown: the span is kept but never evaluated);
        ``sampled(session_id) -> bool`` decides a new session's sampling. A span already stored is ignored and
        does not reopen its session. A span for a ``complete`` session reopens it; one for an ``evaluated``
        or ``skipped`` session is stored but does not trigger a second evaluation.
        """
        now = time.time() if now is None else now
        # Spans may quote keys (an HTTP span's URL with credentials, a header): stored redacted.
        redacted = redacted_json(docs, _dumps)
        rows = [
            (d["traceId"], d["spanId"], s, now, text)
            for (d, text), s in zip(redacted, redact_ids(sessions), strict=True)
        ]
        return self._add(_Batch("spans", rows, now, sampled))

    def add_records(
        self, docs: list[dict], sessions: list[str | None], sampled, now: float | None = None
    ) -> int:
        """Store event records and touch their sessions, committed, as ``add_spans`` stores spans (the same
        group commit, the same reopening of a complete session); returns how many were new.

        A record is identified by ``record_key`` (a retry's copy is ignored); ``sessions`` holds each one's
        session id, None when neither it nor its span or trace has one yet (``record_session_ids``).
        """
        now = time.time() if now is None else now
        # the key's digest and the stored text from one serialisation, of the redacted record
        keyed = [keyed for _, keyed in redacted_json(docs, keyed_text, text=lambda keyed: keyed[1])]
        rows = [(*key, s, now, text) for (key, text), s in zip(keyed, redact_ids(sessions), strict=True)]
        return self._add(_Batch("records", rows, now, sampled))

    def _add(self, batch: _Batch) -> int:
        """Queue ``batch``, commit it (with every batch waiting) unless another thread did, return its count."""
        with self._queue_lock:
            self._queue.append(batch)
        with self.lock:
            if not batch.done:  # no other thread committed it meanwhile: commit every batch waiting
                with self._queue_lock:
                    waiting, self._queue = self._queue, []
                self._commit(waiting)
        if batch.error is not None:
            raise batch.error
        return batch.added

    def _commit(self, batches: list[_Batch]) -> None:
        """Store ``batches`` in one transaction (group commit: one fsync for all the requests that waited
        while the previous commit was on its way to disk); each batch gets its count, or the error."""
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                for batch in batches:
                    before = db.total_changes
                    touched = set()
                    insert, at = _INSERT[batch.table], _SESSION[batch.table]
                    for row in batch.rows:
                        cursor = db.execute(insert, row)
                        if cursor.rowcount and row[at] is not None:
                            touched.add(row[at])
                    batch.added = db.total_changes - before
                    db.executemany(
                        "INSERT INTO sessions (id, first_received, last_received, state, sampled) "
                        "VALUES (?, ?, ?, 'open', ?) ON CONFLICT (id) DO UPDATE SET "
                        "last_received = excluded.last_received, "
                        "state = CASE WHEN state = 'complete' THEN 'open' ELSE state END",
                        [(s, batch.now, batch.now, int(batch.sampled(s))) for s in touched],
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except BaseException as exc:
            for batch in batches:
                batch.error = exc
        for batch in batches:
            batch.done = True

    def trace_sessions(self, trace_ids: list[str]) -> dict[str, str]:
        """The session id already known for each of these traces (for spans and records that carry none
        themselves): that of a stored span of the trace, else of a stored record."""
        if not trace_ids:
            return {}
        found: dict[str, str] = {}
        stored = redact_ids(trace_ids)  # as stored: an id that holds a key is stored redacted (``redact_id``)
        with self.lock:
            for given, trace in zip(trace_ids, stored, strict=True):
                for table in ("spans", "records"):
                    row = self.db.execute(
                        f"SELECT session_id FROM {table} WHERE trace_id = ? AND session_id IS NOT NULL LIMIT 1",
                        (trace,),
                    ).fetchone()
                    if row:
                        found[given] = row[0]
                        break
        return found

    def span_sessions(self, spans: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The session id of each of these stored spans ``(trace id, span id)`` that has one (a record's):
        one query per 400 spans."""
        found: dict[tuple[str, str], str] = {}
        # as stored: an id that holds a key is stored redacted (``redact_id``)
        keys = list(zip(redact_ids([t for t, _ in spans]), redact_ids([s for _, s in spans]), strict=True))
        given = dict(zip(keys, spans, strict=True))
        with self.lock:
            for start in range(0, len(keys), 400):
                chunk = keys[start : start + 400]
                values = ", ".join("(?, ?)" for _ in chunk)
                rows = self.db.execute(  # CROSS JOIN: the given spans drive, each found by the spans key
                    f"SELECT s.trace_id, s.span_id, s.session_id FROM (VALUES {values}) AS v CROSS JOIN spans AS s "
                    "ON s.trace_id = v.column1 AND s.span_id = v.column2 WHERE s.session_id IS NOT NULL",
                    [part for key in chunk for part in key],
                ).fetchall()
                found.update({given[(trace, span)]: session for trace, span, session in rows})
        return found

    # --- the evaluation loop ------------------------------------------------------------------------------

    def complete_idle(self, timeout: float, now: float | None = None) -> int:
        """Mark ``open`` sessions with no span for ``timeout`` seconds ``complete``; returns how many."""
        now = time.time() if now is None else now
        with self.lock:
            cursor = self.db.execute(
                "UPDATE sessions SET state = 'complete', completed = ? "
                "WHERE state = 'open' AND last_received <= ?",
                (now, now - timeout),
            )
            return cursor.rowcount

    def complete_sessions(self, limit: int = 100) -> list[tuple[str, bool, float]]:
        """``(session id, sampled, last received)`` of complete sessions, oldest first."""
        with self.lock:
            rows = self.db.execute(
                "SELECT id, sampled, last_received FROM sessions WHERE state = 'complete' "
                "ORDER BY last_received LIMIT ?",
                (limit,),
            ).fetchall()
        return [(r[0], bool(r[1]), r[2]) for r in rows]

    def session_documents(self, session_id: str) -> list[dict]:
        """The span and record documents of one session (what ``payload.session_spans`` turns into
        ``sessionSpans``): those stored with its id, and those of its traces stored without one (a span
        without ``session.id``, a record that came before its span); spans first, then records."""
        with self.lock:
            rows = self.db.execute(_SESSION_DOCUMENTS, {"s": session_id}).fetchall()
        where = f"a stored document of session {session_id!r}"
        return [parse_json_text(r[0], where=where, limit=None) for r in rows]

    def finish(self, session_id: str, state: str, results: list[dict], now: float | None = None) -> bool:
        """Store a session's results and mark it ``state`` in one transaction.

        Only a session still ``complete`` is finished: one reopened by a late span meanwhile is left for the
        next pass (its results are dropped, it is evaluated again with all its spans). Returns whether the
        session was finished.

        Intake waits for the store's lock, so little happens under it: the rows are built (serialised,
        redacted) before, and the commit does not wait for the disk (``synchronous=NORMAL`` for this
        transaction; spans keep ``FULL``). A killed process keeps the commit (it is in the WAL, which the
        operating system writes); only a power cut before the next span commit's fsync, which writes it too,
        could undo it, and the session would then be evaluated again: results are never lost, and the spans
        they judge are durable either way.
        """
        now = time.time() if now is None else now
        (session_id,), results = redact_ids([session_id]), redact_value(results)
        rows = [
            (
                session_id,
                r["evaluatorName"],
                r["context"]["spanContext"].get("traceId"),
                r["context"]["spanContext"].get("spanId"),
                r.get("label"),
                r.get("value"),
                r.get("explanation"),
                r.get("errorCode"),
                int(r["passed"]),
                r.get("service"),
                now,
                _dumps(r),  # redacted above: an evaluator's errorMessage may quote a key
            )
            for r in results
        ]
        with self.lock:
            db = self.db
            db.execute("PRAGMA synchronous=NORMAL")
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    cursor = db.execute(
                        "UPDATE sessions SET state = ?, finished = ? WHERE id = ? AND state = 'complete'",
                        (state, now, session_id),
                    )
                    if cursor.rowcount != 1:
                        db.execute("ROLLBACK")
                        return False
                    db.executemany(
                        "INSERT INTO results (session_id, evaluator, trace_id, span_id, label, value, "
                        "explanation, error_code, passed, service, timestamp, entry) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        rows,
                    )
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            finally:
                db.execute("PRAGMA synchronous=FULL")
        return True

    def results_after(self, seq: int) -> list[tuple]:
        """``(seq, timestamp, entry)`` of the results stored after sequence number ``seq``, in order."""
        with self.lock:
            return self.db.execute(
                "SELECT seq, timestamp, entry FROM results WHERE seq > ? ORDER BY seq", (seq,)
            ).fetchall()

    # --- reading --------------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Sessions per state (every state present, 0 when none) and the numbers of stored spans and records."""
        with self.lock:
            rows = self.db.execute("SELECT state, COUNT(*) FROM sessions GROUP BY state").fetchall()
            spans = self.db.execute("SELECT COUNT(*) FROM spans").fetchone()[0]
            records = self.db.execute("SELECT COUNT(*) FROM records").fetchone()[0] if self.has_records else 0
        out = dict.fromkeys(STATES, 0)
        out.update(dict(rows))
        out["spans"] = spans
        out["records"] = records
        return out

    def pass_rates(self, since: float) -> dict[str, tuple[int, int]]:
        """``{evaluator: (passed, total)}`` over the results stored at or after ``since``."""
        with self.lock:
            rows = self.db.execute(
                "SELECT evaluator, SUM(passed), COUNT(*) FROM results WHERE timestamp >= ? GROUP BY evaluator",
                (since,),
            ).fetchall()
        return {name: (int(passed), int(total)) for name, passed, total in rows}

    def results_rows(self) -> list[tuple]:
        """Every result as a row of the online results frame."""
        with self.lock:
            return self.db.execute(
                "SELECT seq, timestamp, session_id, evaluator, trace_id, span_id, label, value, explanation, "
                "error_code, passed, service FROM results ORDER BY seq"
            ).fetchall()
