"""``evalkit.spans.to_document``: traces (a span file, a span frame or the online store) as an eval document
that ``evalkit run`` scores as recorded and ``evalkit run --agent`` replays against a new agent version.

    from evalkit import spans
    doc = spans.to_document("traces/otlp.json", evaluators=["Citations"], out="regression.json")
    doc = spans.to_document(store="online-store", where_failed="pii_leak", by="session", sample=50, seed=1)

The spans are read by ``evalkit.spans.load`` (every shape and event-record form it reads) or from the store
(``store_sessions``); ``selection`` picks the traces or sessions, ``items`` builds the items. The document (its
root, evaluators and first ``CHECKED_ITEMS`` items: the items are all built by the same code) is checked
against evalkit's schema (the upstream one, with the seeds' differences) before it is returned or written;
what was left out (a trace with no prompt) or split (a session of more than 20 turns) is said in one
``EvalkitWarning`` each. Secrets in the spans' text (configured keys, ``sk-...``, bearer tokens, URL
credentials) are masked, as the store and ``spans.jsonl`` keep them.
"""

from __future__ import annotations

import json
import os
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.documents.files.atomic import atomic_write
from evalkit.documents.redaction import redact_ids, redact_value
from evalkit.documents.validation import schema_problems
from evalkit.documents.versions import LATEST_VERSION, EvalkitWarning
from evalkit.errors import EvalkitError
from evalkit.spans.datasets.items import EXTENSION, build_items
from evalkit.spans.datasets.selection import select
from evalkit.spans.datasets.store_sessions import failed_targets, store_sessions
from evalkit.spans.lambdas.payload import session_groups

if TYPE_CHECKING:
    import pandas as pd

#: How many of the items are checked against the schema with the document's root (see ``to_document``).
CHECKED_ITEMS = 20


def to_document(
    spans: pd.DataFrame | str | os.PathLike | None = None,
    *,
    store: str | os.PathLike | None = None,
    by: str = "trace",
    session=None,
    since=None,
    filters=(),
    where_failed: str | None = None,
    sample: int | None = None,
    seed: int = 0,
    evaluators: list[str] | dict | None = None,
    session_attribute: str | None = None,
    out: str | os.PathLike | None = None,
) -> dict:
    """An eval document made from traces: one item per trace (``by="trace"``) or one thread per session
    (``by="session"``).

    ``spans`` is a span file or folder (or a frame from ``load``); ``store`` an online evaluation store
    folder instead. Selection (``selection``): ``session`` (an id or ids), ``since`` (a datetime, an ISO time
    or a duration back such as ``"24h"``), ``filters`` (``"KEY=VALUE"`` and the other operators of ``spans
    serve --filter``), ``where_failed`` (the sessions, by trace the traces, that this online evaluator failed;
    needs ``store``), ``sample`` units drawn with ``seed``. ``evaluators`` becomes ``default_evaluators``:
    names (each with no options) or an evaluator map; without it the document has none (the upstream
    default, Relevance and Coherence, then applies). ``out`` writes the document (atomically).
    """
    if (spans is None) == (store is None):
        raise EvalkitError("give either a span file (SPANS) or --store DIR, not both or neither")
    if where_failed is not None and store is None:
        raise EvalkitError(
            "--where-failed reads the results of online evaluation: give --store DIR (the folder of "
            "evalkit spans serve)"
        )
    source = str(store if store is not None else spans if not _is_frame(spans) else "<span frame>")
    groups = _groups(spans, store, session_attribute)
    failed = failed_targets(store, where_failed) if where_failed is not None else None
    if store is not None and session is not None:  # the store keeps an id holding a key masked (redact_id)
        session = redact_ids([session] if isinstance(session, str) else list(session))
    units = select(
        groups, by=by, sessions=session, failed=failed, since=since, filters=filters, sample=sample, seed=seed
    )
    chosen = {"by": by, "session": session, "where_failed": where_failed, "since": since, "filters": filters}
    selection = _describe({**chosen, "sample": sample, "seed": seed})
    if not units:
        raise EvalkitError(f"{source}: no {by} matches the selection ({selection}); nothing to write")
    notes: list[str] = []
    items = build_items(units, by, notes)
    for note in notes:
        warnings.warn(f"{source}: {note}", EvalkitWarning, stacklevel=2)
    if not items:
        raise EvalkitError(
            f"{source}: none of the {len(units)} selected {by}(s) has a user prompt in its spans; nothing to write"
        )
    # a key an agent quoted in a prompt, a tool argument or an answer does not reach the document (as the store
    # and spans.jsonl keep spans: ``documents.redaction``)
    document = _document(redact_value(items), source, by, evaluators, selection)
    # Every item is built by the same code, so the root (with the evaluators the caller named) and the
    # first items are checked: jsonschema takes about 5 ms an item, a minute for 10,000 traces.
    problems = schema_problems({**document, "items": items[:CHECKED_ITEMS]})
    given = [p for p in problems if p.startswith("default_evaluators")]
    if given:  # the caller's evaluators, not the spans
        raise EvalkitError(f"--evaluator: {given[0]}")
    if problems:
        raise EvalkitError(f"{source}: the document made from the spans is not valid: {problems[0]}")
    if out is not None:
        write_document(document, out)
    return document


def _is_frame(value: Any) -> bool:
    return hasattr(value, "columns") and hasattr(value, "attrs")


def _groups(spans, store, session_attribute):
    if store is not None:
        return store_sessions(store)
    if not _is_frame(spans):
        from evalkit.spans.reading.loading import load

        spans = load(spans, session_attribute=session_attribute)
    return session_groups(spans, None)


def _describe(given: dict) -> str:
    """The selection in words, for messages and the document's metadata."""
    parts = []
    if given.get("session") is not None:
        ids = [given["session"]] if isinstance(given["session"], str) else list(given["session"])
        parts.append(f"session {', '.join(ids)}")
    if given.get("where_failed"):
        parts.append(f"failed by {given['where_failed']}")
    if given.get("since") is not None:
        parts.append(f"since {given['since']}")
    parts.extend(f"filter {f}" for f in given.get("filters") or ())
    if given.get("sample") is not None:
        parts.append(f"sample {given['sample']} (seed {given['seed']})")
    return "; ".join(parts) or "every " + given["by"]


def _evaluator_map(evaluators) -> dict | None:
    if evaluators is None:
        return None
    if isinstance(evaluators, dict):
        return evaluators
    names = [evaluators] if isinstance(evaluators, str) else list(evaluators)
    return {name: {} for name in names}


def _document(items: list[dict], source: str, by: str, evaluators, selection: str) -> dict:
    now = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    traces = sum(len(i["turns"]) if "turns" in i else 1 for i in items)
    document: dict[str, Any] = {
        "schemaVersion": LATEST_VERSION,
        "metadata": {
            "name": f"Traces from {Path(source).name or source}",
            "description": f"Made by evalkit spans to-document from {source} ({selection}): the prompts and "
            "recorded answers of production traces, to score as recorded or replay with --agent.",
            "createdAt": now,
            "createdBy": "evalkit spans to-document",
            "extensions": {EXTENSION: {"source": source, "by": by, "selection": selection, "traces": traces}},
        },
    }
    default = _evaluator_map(evaluators)
    if default is not None:
        document["default_evaluators"] = default
    document["items"] = items
    return document


def write_document(document: dict, out: str | os.PathLike) -> Path:
    """Write the document as indented JSON, atomically (a reader never sees half a file)."""
    path = Path(out)
    try:
        with atomic_write(path) as handle:
            json.dump(document, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
    except OSError as exc:
        raise EvalkitError(f"cannot write the document to {path}: {exc.strerror or exc}") from None
    return path
