"""Which sessions the online receiver evaluates, and when: durations, sampling by hash, filters, session ids.

A session is complete after ``session_timeout`` seconds without a new span (by received time; the store keeps
the clock). Sampling is decided by a hash of the session id, ``sha256(id) % 10000 < sampling * 100``, so every
process (and a restart) decides the same way for the same session. AgentCore's ranges are kept: sampling
0.01-100 % (``check_sampling``), session timeout 1-1440 minutes (``check_session_timeout``; the command line
applies both bounds, the Python API only the upper one, so tests and demos can use seconds). Filters are
AgentCore's ``Rule.filters`` (``Filter``: key, operator, value; at most five, ``parse_filters``) written as
text, each operator as ``Filter.OPERATORS`` maps it; each must be satisfied by at least one span of a session
for it to be evaluated. Session ids follow ``reading.session_ids``: a span without a session attribute joins
the session of its trace, also when the trace's other spans came in an earlier request, and a trace that
names none is its own session.

An event record (``reading/event_record``) joins a session as a span without a session attribute does
(``record_session_ids``): its own session id (``reading.session_ids``' attributes), else its span's, else
its trace's. A record whose span and trace are not known yet is stored without a session and joins one when
they arrive (``Store.session_documents`` gathers the records of a session's traces).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError
from evalkit.spans.reading.session_ids import assign_sessions, document_session

if TYPE_CHECKING:
    from evalkit.spans.online.store import Store

log = logging.getLogger(__name__)

#: AgentCore's ranges for an online evaluation configuration (``samplingPercentage``,
#: ``sessionTimeoutMinutes``).
SAMPLING_RANGE = (0.01, 100.0)
SESSION_TIMEOUT_MINUTES_RANGE = (1.0, 1440.0)

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*")
_UNITS = {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str | float) -> float:
    """Seconds from ``"15m"``, ``"1h"``, ``"0.5s"``, ``"250ms"``, ``"2d"`` or a plain number of seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        match = _DURATION.fullmatch(str(text))
        if not match:
            raise EvalkitError(f"{text!r} is not a duration: write 15m, 1h, 30s or 250ms")
        value = float(match.group(1)) * _UNITS[match.group(2)]
    if not value > 0:
        raise EvalkitError(f"{text!r}: a duration must be more than 0")
    return value


def check_sampling(percentage: float, option: str = "sampling") -> float:
    """``percentage`` when it is in AgentCore's sampling range 0.01-100 %; else an error naming the range."""
    low, high = SAMPLING_RANGE
    if (
        isinstance(percentage, bool)
        or not isinstance(percentage, (int, float))
        or not low <= percentage <= high
    ):
        raise EvalkitError(
            f"{option} {percentage!r}: AgentCore samples {low:g}-{high:g} % of sessions; "
            f"write a percentage from {low:g} to {high:g}"
        )
    return float(percentage)


def check_session_timeout(seconds: float, text: str | float, option: str = "session timeout") -> float:
    """``seconds`` when it is in AgentCore's session timeout range 1-1440 minutes; else an error naming it."""
    low, high = SESSION_TIMEOUT_MINUTES_RANGE
    if not low * 60 <= seconds <= high * 60:
        raise EvalkitError(
            f"{option} {text}: AgentCore's session timeout is {low:g}-{high:g} minutes "
            f"(got {seconds / 60:g}); write 1m to 1440m (24h)"
        )
    return seconds


def sampled(session_id: str, percentage: float) -> bool:
    """Whether a session is in a ``percentage`` (0-100) sample: stable across processes and restarts."""
    bucket = int.from_bytes(hashlib.sha256(session_id.encode("utf-8")).digest()[:8], "big") % 10_000
    return bucket < round(percentage * 100)


class Filter:
    """One span attribute condition: AgentCore's ``Filter`` (key, operator, value) written as text.

    =========================  =====================  ================================================
    written                    AgentCore operator     matches a span whose attribute ``KEY`` ...
    =========================  =====================  ================================================
    ``KEY=VALUE``              ``Equals``             is ``VALUE``
    ``KEY!=VALUE``             ``NotEquals``          is not ``VALUE`` (an absent attribute: no match)
    ``KEY~=VALUE``             ``Contains``           contains ``VALUE``
    ``KEY!~=VALUE``            ``NotContains``        does not contain ``VALUE`` (absent: no match)
    ``KEY>N`` / ``KEY<N``      ``GreaterThan`` / ``LessThan``                  is a number above / below N
    ``KEY>=N`` / ``KEY<=N``    ``GreaterThanOrEqual`` / ``LessThanOrEqual``    is a number at or above / below N
    =========================  =====================  ================================================

    Text comparisons read a non-string attribute as its JSON text, so ``true`` and ``3`` match booleans and
    numbers (AgentCore's ``booleanValue`` / ``doubleValue``). Keys follow AgentCore's pattern
    ``[a-zA-Z0-9._-]+``, at most 256 characters; values at most 1024.
    """

    _PATTERN = re.compile(r"([^=!~<>]+)(!~=|!=|~=|>=|<=|=|>|<)(.*)", re.S)
    _KEY = re.compile(r"[a-zA-Z0-9._-]{1,256}")
    OPERATORS = {
        "=": "Equals",
        "!=": "NotEquals",
        "~=": "Contains",
        "!~=": "NotContains",
        ">": "GreaterThan",
        "<": "LessThan",
        ">=": "GreaterThanOrEqual",
        "<=": "LessThanOrEqual",
    }
    _NUMERIC = (">", "<", ">=", "<=")
    SYNTAX = "KEY=VALUE, KEY!=VALUE, KEY~=VALUE, KEY!~=VALUE, KEY>N, KEY<N, KEY>=N or KEY<=N"

    def __init__(self, text: str):
        match = self._PATTERN.fullmatch(text) if isinstance(text, str) else None
        if not match or not match.group(1).strip():
            raise EvalkitError(f"filter {text!r}: write {self.SYNTAX}")
        self.key, self.op, self.value = match.group(1).strip(), match.group(2), match.group(3)
        if not self._KEY.fullmatch(self.key):
            raise EvalkitError(
                f"filter {text!r}: key {self.key!r} is not an AgentCore filter key (letters, digits, '.', '_' "
                "and '-', at most 256 characters)"
            )
        if not 1 <= len(self.value) <= 1024:
            raise EvalkitError(f"filter {text!r}: the value must be 1 to 1024 characters (AgentCore's limit)")
        self.operator = self.OPERATORS[self.op]
        self.number = None
        if self.op in self._NUMERIC:
            try:
                self.number = float(self.value)
            except ValueError:
                raise EvalkitError(
                    f"filter {text!r}: {self.operator} compares numbers; {self.value!r} is not a number"
                ) from None
        self.text = text

    def __repr__(self) -> str:
        return f"Filter({self.text!r})"

    def matches(self, doc: dict) -> bool:
        """Whether this span document satisfies the condition (an absent attribute satisfies none)."""
        attrs = doc.get("attributes") or {}
        value = attrs.get(self.key)
        if value is None:
            value = ((doc.get("resource") or {}).get("attributes") or {}).get(self.key)
        if value is None:
            return False
        if self.number is not None:
            try:  # an int is compared exactly (float() of a 4,000-digit intValue overflows)
                number = value if type(value) is int else float(value)
            except (TypeError, ValueError):
                return False
            return _COMPARE[self.op](number, self.number)
        text = value if isinstance(value, str) else json.dumps(value)
        if self.op == "=":
            return text == self.value
        if self.op == "!=":
            return text != self.value
        if self.op == "!~=":
            return self.value not in text
        return self.value in text


_COMPARE = {
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
}
#: AgentCore's limit on filters per online evaluation configuration (``Rule.filters``).
MAX_FILTERS = 5


def parse_filters(filters) -> list[Filter]:
    """``Filter`` objects of texts (or filters), at most ``MAX_FILTERS``, as AgentCore allows."""
    parsed = [f if isinstance(f, Filter) else Filter(f) for f in filters or ()]
    if len(parsed) > MAX_FILTERS:
        raise EvalkitError(
            f"{len(parsed)} filters given: AgentCore's online evaluation takes at most {MAX_FILTERS} "
            "(Rule.filters); drop some or sample instead"
        )
    return parsed


def session_matches(docs: list[dict], filters: list[Filter]) -> bool:
    """Every filter is satisfied by at least one span of the session (no filters: every session)."""
    return all(any(f.matches(d) for d in docs) for f in filters)


def session_ids(docs: list[dict], store: Store, attribute: str | None = None) -> list[str | None]:
    """Each document's session id (``reading.session_ids``): its own session attribute (or ``attribute``),
    else that of its trace in this request or in the store, else its trace id when the trace's root span is
    in this request (the trace is its own session); else None (the store joins it to its trace's session).
    """
    own = [document_session(d, attribute) for d in docs]
    missing = sorted({d["traceId"] for d, s in zip(docs, own) if s is None and d.get("traceId")})
    known = store.trace_sessions(missing) if missing else {}
    ids, own_traces = assign_sessions(docs, attribute, known, partial=True)
    if own_traces:
        log.debug("%d trace(s) without a session attribute: each is its own session", own_traces)
    return ids


def record_session_ids(records: list[dict], store: Store, attribute: str | None = None) -> list[str | None]:
    """Each event record's session id: its own (``document_session``: its session attribute, or
    ``attribute``), else that of its span (stored before, with its session), else that of its trace (a record
    of this request, a span or record stored: ``session_ids``); None when none is known yet.
    """
    own = [document_session(r, attribute) for r in records]
    traced = [i for i, record in enumerate(records) if record.get("traceId")]
    pending = [i for i in traced if own[i] is None]
    if not pending:
        return own
    spans = {i: (records[i]["traceId"], records[i].get("spanId") or "") for i in pending}
    by_span = store.span_sessions(sorted(set(spans.values())))
    out = list(own)
    for i in pending:
        out[i] = by_span.get(spans[i])
    rest = [i for i in pending if out[i] is None]
    if rest:  # the trace's, as a span's (with the records of this request that name theirs)
        asked = [i for i in traced if own[i] is not None] + rest
        for i, session in zip(asked, session_ids([records[i] for i in asked], store, attribute)):
            if out[i] is None:
                out[i] = session
    return out
