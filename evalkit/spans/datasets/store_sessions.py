"""Sessions and online results read back from the online evaluation store (``evalkit spans serve --store``).

The store is opened read-only, so a dataset can be made while the receiver keeps writing. Each session comes
with the documents ``Store.session_documents`` gives the evaluators (its spans and event records, and those
of its traces stored without a session id), in start order; ``failed_targets`` reads which sessions (and
which of their traces) an online evaluator failed, by the stored ``passed`` (the passing rule the receiver
applied: ``lambdas.passing_rule``; an error result never passes).
"""

from __future__ import annotations

import os
import sqlite3

from evalkit.errors import EvalkitError
from evalkit.spans.lambdas.payload import SessionSpans, session_spans
from evalkit.spans.online.store import Store


def _open(folder: str | os.PathLike) -> Store:
    try:
        return Store(folder, readonly=True)
    except FileNotFoundError:
        raise EvalkitError(
            f"{folder}: no online evaluation store here (store.sqlite3 is missing); pass the folder given to "
            "evalkit spans serve --store"
        ) from None


def store_sessions(folder: str | os.PathLike) -> list[SessionSpans]:
    """Every session of the store, in order of first arrival, each with its documents in start order."""
    store = _open(folder)
    try:
        with store.lock:
            ids = [r[0] for r in store.db.execute("SELECT id FROM sessions ORDER BY first_received, id")]
        return [session_spans(session_id, store.session_documents(session_id)) for session_id in ids]
    except sqlite3.DatabaseError as exc:  # damage past the header shows only when the pages are read
        raise store.unreadable(exc) from None
    finally:
        store.close()


def failed_targets(folder: str | os.PathLike, evaluator: str) -> dict[str, set[str] | None]:
    """``{session id: the trace ids failed, or None for the whole session}`` of the results of ``evaluator``
    that did not pass. A session-level result (no trace id) that failed stands for every trace of it."""
    store = _open(folder)
    try:
        with store.lock:
            names = [r[0] for r in store.db.execute("SELECT DISTINCT evaluator FROM results ORDER BY 1")]
            rows = store.db.execute(
                "SELECT session_id, trace_id FROM results WHERE evaluator = ? AND passed = 0 ORDER BY seq",
                (evaluator,),
            ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise store.unreadable(exc) from None
    finally:
        store.close()
    if evaluator not in names:
        shown = ", ".join(names) if names else "none yet"
        raise EvalkitError(
            f"--where-failed {evaluator}: the store {folder} holds no result of that evaluator (evaluators "
            f"with results: {shown})"
        )
    failed: dict[str, set[str] | None] = {}
    for session_id, trace_id in rows:
        if trace_id is None or failed.get(session_id, set()) is None:
            failed[session_id] = None
        else:
            failed.setdefault(session_id, set()).add(trace_id)
    return failed
