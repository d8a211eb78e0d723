"""The AgentCore Lambda events evalkit would send a code-based evaluator, written out for ``spans invoke``.

``spans eval`` builds each call's event in ``payload`` and hands it to the handler; this module builds the same
events without calling anything, so that a user can keep one as a file, read it, and replay it through
``evalkit spans invoke NAME --event FILE`` on their own telemetry (``evalkit spans event``), and so that
``evalkit new NAME --span`` can put a real event beside the handler it writes.

The events are byte for byte what ``spans eval`` sends for the same spans, session, level and evaluator name:
the same ``payload.payload_head``/``payload_text`` assemble them (the evaluator id is derived from the name
and the level as ``SpanEvaluator`` derives it). One event per evaluation target: one for ``SESSION``, one per
trace for ``TRACE``, one per tool-call span for ``TOOL_CALL``.

May import ``evalkit.spans.reading``, ``evalkit.spans.lambdas.payload`` and ``span_evaluator``, and
``evalkit.errors``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.spans.lambdas.payload import (
    describe_target,
    payload_head,
    payload_text,
    reference_groups,
    session_groups,
)
from evalkit.spans.lambdas.span_evaluator import LEVELS, SpanEvaluator

#: The evaluator name an event carries when none is given (any valid AgentCore evaluator name works).
DEFAULT_NAME = "my_evaluator"


@dataclass(frozen=True)
class LambdaEvent:
    """One event as JSON text (``text``), and the target it evaluates (``trace_id``/``span_id``, None above
    that level)."""

    text: str
    session_id: str
    trace_id: str | None
    span_id: str | None


def lambda_events(
    spans,
    *,
    session: str,
    level: str = "SESSION",
    evaluator: str = DEFAULT_NAME,
    reference_inputs: list[dict] | None = None,
    session_attribute: str | None = None,
) -> list[LambdaEvent]:
    """The events ``spans eval`` would send evaluator ``evaluator`` at ``level`` for one session of ``spans``
    (a span frame from ``spans.load``, or a path to load), in the order it would send them.

    Raises ``EvalkitError`` for an unknown session (naming the sessions there are), an unknown level, a session
    with no target at that level (no trace, no tool call), or a payload over Lambda's 6 MB limit even after
    truncation."""
    import pandas as pd

    from evalkit.spans.reading.loading import load

    if level not in LEVELS:
        raise EvalkitError(
            f"level {level!r} is not an AgentCore evaluation level; use one of {', '.join(LEVELS)}"
        )
    named = SpanEvaluator(evaluator, _no_handler, level=level)
    if not isinstance(spans, pd.DataFrame):
        spans = load(Path(os.fspath(spans)), warn=False, session_attribute=session_attribute)
    (group,) = session_groups(spans, session)
    references = reference_groups(reference_inputs).get(group.id, "[]")
    head = payload_head(named)
    events = []
    for trace_id, span_id in group.targets(level):
        text, _, _ = payload_text(head, group, trace_id, span_id, references)
        if text is None:
            raise EvalkitError(
                f"the event for {describe_target(group.id, trace_id, span_id)} exceeds Lambda's 6 MB payload limit "
                "even with every span outside its target dropped"
            )
        events.append(LambdaEvent(text, group.id, trace_id, span_id))
    if not events:
        what = "trace" if level == "TRACE" else "tool-call span"
        raise EvalkitError(
            f"session {session!r} has no {what}, so a {level} evaluator is not called for it; "
            "choose --level SESSION or another session"
        )
    return events


def _no_handler(event, context):  # pragma: no cover - a SpanEvaluator needs a callable; nothing calls it
    raise AssertionError("lambda_events builds events; it calls no handler")
