"""The AgentCore payload of each evaluator call, per session, trace or tool call, within the 6 MB limit.

A payload is ``schemaVersion``, ``evaluatorId``, ``evaluatorName``, ``evaluationLevel``,
``evaluationInput.sessionSpans`` (every span document and event record of the session, in start order, as
AgentCore sends both),
``evaluationReferenceInputs`` (those of the session) and ``evaluationTarget`` (null for SESSION, the trace for
TRACE, the trace and the tool-call span for TOOL_CALL). It is assembled as JSON text from span documents
encoded once per session, then parsed back, as the Lambda runtime does: a handler gets its own copy and cannot
corrupt the spans the next call sees. When it exceeds Lambda's 6 MB limit, ``sessionSpans`` is truncated (the
latest spans outside the target go first) and the result says so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError
from evalkit.spans.lambdas.invocation import EXPLANATION_LIMIT
from evalkit.spans.reading.span_frame import is_tool_span

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.spans.lambdas.span_evaluator import SpanEvaluator

#: AWS Lambda's limit for a synchronous invocation payload.
PAYLOAD_LIMIT = 6 * 1024 * 1024
SCHEMA_VERSION = "1.0"

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class SessionSpans:
    """One session's spans (in start order), its traces and tool calls, and their JSON, made on first use."""

    __slots__ = ("id", "docs", "trace_ids", "traces", "tools", "_texts", "_sizes")

    def __init__(self, session_id: str, docs: list, trace_ids: list, tools: list):
        self.id = session_id
        self.docs = docs
        self.trace_ids = trace_ids
        self.traces = [t for t in dict.fromkeys(trace_ids) if t is not None]
        self.tools = tools
        self._texts: list[str] | None = None
        self._sizes: list[int] | None = None

    def targets(self, level: str) -> list[tuple[str | None, str | None]]:
        if level == "SESSION":
            return [(None, None)]
        if level == "TRACE":
            return [(t, None) for t in self.traces]
        return self.tools

    def texts(self) -> tuple[list[str], list[int]]:
        if self._texts is None:
            self._texts = [_dumps(d) for d in self.docs]
            self._sizes = [len(t) if t.isascii() else len(t.encode("utf-8")) for t in self._texts]
        return self._texts, self._sizes


def session_groups(spans: pd.DataFrame, wanted) -> list[SessionSpans]:
    """The sessions of a span frame (every one, or those named in ``wanted``), each with its spans in start order."""
    missing = [
        c for c in ("session_id", "trace_id", "span_id", "is_tool", "document") if c not in spans.columns
    ]
    if missing:
        raise EvalkitError(
            f"not a span frame from evalkit.spans.load: column(s) {', '.join(missing)} missing"
        )
    session_ids = spans["session_id"].tolist()
    trace_ids = spans["trace_id"].tolist()
    span_ids = spans["span_id"].tolist()
    tools = spans["is_tool"].tolist()
    docs = spans["document"].tolist()
    positions: dict[str, list[int]] = {}
    for i, s in enumerate(session_ids):
        if s is not None and s == s:
            positions.setdefault(s, []).append(i)
    if not spans["start_ns"].is_monotonic_increasing:  # a frame re-ordered or concatenated after load
        starts = spans["start_ns"].tolist()
        positions = {s: sorted(pos, key=starts.__getitem__) for s, pos in positions.items()}
    if not positions:
        raise EvalkitError(
            "no span carries a session id ('session.id' attribute): there is no session to evaluate"
        )
    if wanted is not None:
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        unknown = [n for n in names if n not in positions]
        if unknown:
            known = list(positions)
            shown = ", ".join(known[:5]) + (f" and {len(known) - 5} more" if len(known) > 5 else "")
            raise EvalkitError(
                f"session(s) {', '.join(map(repr, unknown))} not found in the spans; sessions: {shown}"
            )
        positions = {n: positions[n] for n in dict.fromkeys(names)}
    return [
        SessionSpans(
            s,
            [docs[i] for i in pos],
            [trace_ids[i] for i in pos],
            [(trace_ids[i], span_ids[i]) for i in pos if tools[i]],
        )
        for s, pos in positions.items()
    ]


def session_spans(session_id: str, docs: list[dict]) -> SessionSpans:
    """One session from its span documents alone, as ``session_groups`` gives it from their frame: spans in
    start order (ties in the given order), every span counted in the session (the online store hands over a
    session's spans and the spans of its traces that carry no session id). No frame is built: the online
    receiver evaluates thousands of small sessions a minute, and a pandas frame per session cost it more than
    the evaluator calls."""
    docs = sorted(docs, key=_start)
    return SessionSpans(
        session_id,
        docs,
        [d.get("traceId") for d in docs],
        [
            (d["traceId"], d["spanId"])
            for d in docs
            if "name" in d and "startTimeUnixNano" in d and is_tool_span(d["name"], d.get("attributes") or {})
        ],
    )


def _start(doc: dict) -> int:
    """A span's start, an event record's time: the order of ``sessionSpans``."""
    return doc["startTimeUnixNano"] if "startTimeUnixNano" in doc else doc["timeUnixNano"]


def reference_groups(reference_inputs) -> dict[str, str]:
    """Reference inputs grouped by session id, each group already as its JSON array."""
    if reference_inputs is None:
        return {}
    if not isinstance(reference_inputs, list):
        raise EvalkitError("reference_inputs must be a list of AgentCore reference inputs")
    grouped: dict[str, list] = {}
    for i, ref in enumerate(reference_inputs):
        ctx = ref.get("context") if isinstance(ref, dict) else None
        span_ctx = ctx.get("spanContext") if isinstance(ctx, dict) else None
        session_id = span_ctx.get("sessionId") if isinstance(span_ctx, dict) else None
        if not isinstance(session_id, str):
            raise EvalkitError(f"reference input [{i}] has no context.spanContext.sessionId")
        grouped.setdefault(session_id, []).append(ref)
    try:
        return {k: _dumps(v) for k, v in grouped.items()}
    except (TypeError, ValueError) as exc:
        raise EvalkitError(f"reference inputs are not JSON-serialisable: {exc}") from None


def payload_head(evaluator: SpanEvaluator) -> str:
    """The payload's JSON up to the first span: the same for every call of one evaluator."""
    return (
        f'{{"schemaVersion":{_dumps(SCHEMA_VERSION)},"evaluatorId":{_dumps(evaluator.evaluator_id)},'
        f'"evaluatorName":{_dumps(evaluator.name)},"evaluationLevel":{_dumps(evaluator.level)},'
        '"evaluationInput":{"sessionSpans":['
    )


def build_payload(
    head: str, group: SessionSpans, trace_id: str | None, span_id: str | None, refs: str
) -> tuple[dict | None, int, int]:
    """``(event, spans dropped, spans of the session)`` of one call; no event when even its target is too large."""
    text, dropped, total = payload_text(head, group, trace_id, span_id, refs)
    return (None if text is None else json.loads(text)), dropped, total


def payload_text(
    head: str, group: SessionSpans, trace_id: str | None, span_id: str | None, refs: str
) -> tuple[str | None, int, int]:
    """``build_payload`` as JSON text: what goes to an evaluator worker process, which parses it itself."""
    target = None if trace_id is None else {"traceIds": [trace_id]}
    if span_id is not None:
        target["spanIds"] = [span_id]
    tail = f']}},"evaluationReferenceInputs":{refs},"evaluationTarget":{_dumps(target)}}}'
    texts, sizes = group.texts()
    keep = spans_that_fit(group, sizes, trace_id, span_id, len(head.encode()) + len(tail.encode()))
    if keep is None:
        return None, 0, len(texts)
    dropped = len(texts) - len(keep)
    body = ",".join(texts) if not dropped else ",".join(texts[i] for i in keep)
    return head + body + tail, dropped, len(texts)


def spans_that_fit(
    group: SessionSpans, sizes: list[int], trace_id, span_id, envelope: int
) -> list[int] | None:
    """Positions of the spans that fit in the payload limit, in order; None when even the target does not fit.

    Nothing is dropped when everything fits. Otherwise spans outside the target trace go first, latest start
    first; for a tool call, then the other spans of its trace, latest first; the target itself is never
    dropped (for TRACE the whole trace, for TOOL_CALL the span).
    """
    n = len(sizes)
    total = envelope + sum(sizes) + max(n - 1, 0)
    if total <= PAYLOAD_LIMIT:
        return list(range(n))
    trace_ids = group.trace_ids
    outside = [i for i in range(n - 1, -1, -1) if trace_ids[i] != trace_id]
    order = outside
    if span_id is not None:
        spans_of_trace = [i for i in range(n - 1, -1, -1) if trace_ids[i] == trace_id]
        order = outside + [i for i in spans_of_trace if group.docs[i].get("spanId") != span_id]
    dropped: set[int] = set()
    for i in order:
        if total <= PAYLOAD_LIMIT:
            break
        dropped.add(i)
        total -= sizes[i] + 1
    if total > PAYLOAD_LIMIT or len(dropped) == n:
        return None
    return [i for i in range(n) if i not in dropped]


def note_truncation(entry: dict, dropped: int, total: int) -> dict:
    """Mark a result whose payload lost spans to the size limit, in ``truncated`` and in the text."""
    if not dropped:
        return entry
    entry["truncated"] = True
    note = (
        f" [evalkit: sessionSpans truncated to fit the {PAYLOAD_LIMIT // (1024 * 1024)} MB payload limit: "
        f"{dropped} of {total} spans dropped, latest first, the target's spans kept]"
    )
    if "errorCode" in entry:
        entry["errorMessage"] = entry["errorMessage"] + note
    else:
        text = entry.get("explanation") or ""
        entry["explanation"] = (text[: EXPLANATION_LIMIT - len(note)] + note).lstrip()
    return entry


def describe_target(session_id: str, trace_id: str | None, span_id: str | None) -> str:
    """What one call evaluates, for messages: ``session s-1``, ``trace t-1 of session s-1``, ..."""
    if span_id is not None:
        return f"span {span_id} of session {session_id}"
    if trace_id is not None:
        return f"trace {trace_id} of session {session_id}"
    return f"session {session_id}"
