"""Which sessions and traces become items: session ids, a start time, span attribute filters, the sessions an
online evaluator failed, and a seeded sample, applied in that order.

A unit is a trace (``--by trace``, the default) or a session (``--by session``, one thread per session):

* ``sessions``: only these session ids (an unknown one is an error naming the sessions there are);
* ``failed``: only the sessions an online evaluator failed (``store_sessions.failed_targets``); by trace,
  only the traces a trace- or tool-level result failed (a session-level failure keeps all its traces);
* ``since``: a trace is kept when it started at or after the time; a session when one of its traces did
  (the whole session is kept: a thread needs its earlier turns);
* ``filters``: ``online.session_tracking.Filter`` conditions (the operators of ``spans serve --filter``),
  each satisfied by an attribute of at least one span, record or resource of the unit (the trace, or the
  session);
* ``sample``: ``sample`` units drawn with ``random.Random(seed)``, kept in their order; the same seed and
  spans give the same sample.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from evalkit.documents.json_input import quote
from evalkit.errors import EvalkitError
from evalkit.spans.lambdas.payload import SessionSpans
from evalkit.spans.online.session_tracking import Filter, parse_duration, session_matches


@dataclass
class Unit:
    """One session and the traces of it that are selected (all of them by session)."""

    session: SessionSpans
    traces: list[str] = field(default_factory=list)


def trace_docs(group: SessionSpans) -> dict[str, list[dict]]:
    """The session's documents by trace, in start order (records without a trace id are left out)."""
    by_trace: dict[str, list[dict]] = {}
    for doc in group.docs:
        if doc.get("traceId"):
            by_trace.setdefault(doc["traceId"], []).append(doc)
    return by_trace


def _start(doc: dict) -> int:
    return doc["startTimeUnixNano"] if "startTimeUnixNano" in doc else doc.get("timeUnixNano") or 0


def parse_since(value) -> int:
    """Nanoseconds since the epoch from a datetime, an ISO 8601 time (``2026-12-01T09:00:00Z``; no zone
    means UTC) or a duration back from now (``24h``, ``30m``, ``7d``)."""
    if isinstance(value, datetime):
        moment = value
    else:
        text = str(value).strip()
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            try:
                return int((time.time() - parse_duration(text)) * 1e9)
            except (EvalkitError, OverflowError):  # OverflowError: a duration of 400 digits is infinite
                raise EvalkitError(
                    f"--since {quote(text)}: write a time (2026-12-01T09:00:00Z) or a duration back from now "
                    "(24h, 30m, 7d)"
                ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1e9)


def select(
    groups: list[SessionSpans],
    *,
    by: str = "trace",
    sessions=None,
    failed: dict[str, set[str] | None] | None = None,
    since=None,
    filters=(),
    sample: int | None = None,
    seed: int = 0,
) -> list[Unit]:
    """The units to turn into items, by the rules of the module docstring."""
    if by not in ("trace", "session"):
        raise EvalkitError(f"by {by!r}: write trace (one item per trace) or session (one thread per session)")
    if sessions is not None:
        groups = _named(groups, [sessions] if isinstance(sessions, str) else list(sessions))
    parsed = [f if isinstance(f, Filter) else Filter(f) for f in filters or ()]
    since_ns = parse_since(since) if since is not None else None
    units = []
    for group in groups:
        if failed is not None and group.id not in failed:
            continue
        by_trace = trace_docs(group)
        traces = list(by_trace)
        if failed is not None and by == "trace" and failed[group.id] is not None:
            traces = [t for t in traces if t in failed[group.id]]
        if since_ns is not None:
            recent = [t for t in traces if min(map(_start, by_trace[t])) >= since_ns]
            traces = recent if by == "trace" else (traces if recent else [])
        if by == "trace":
            traces = [t for t in traces if session_matches(by_trace[t], parsed)]
            units.extend(Unit(group, [t]) for t in traces)
        elif traces and session_matches(group.docs, parsed):
            units.append(Unit(group, traces))
    if sample is not None:
        units = _sample(units, sample, seed)
    return units


def _named(groups: list[SessionSpans], names: list[str]) -> list[SessionSpans]:
    known = {g.id: g for g in groups}
    unknown = [n for n in dict.fromkeys(names) if n not in known]
    if unknown:
        ids = list(known)
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        raise EvalkitError(
            f"session(s) {', '.join(map(repr, unknown))} not found in the spans; sessions: {shown or 'none'}"
        )
    return [known[n] for n in dict.fromkeys(names)]


def _sample(units: list[Unit], size: int, seed: int) -> list[Unit]:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise EvalkitError(f"sample {size!r}: write a whole number of items, 1 or more")
    if size >= len(units):
        return units
    chosen = sorted(random.Random(seed).sample(range(len(units)), size))
    return [units[i] for i in chosen]
