"""A selected trace as a single-turn item, a selected session as a multi-turn thread.

Each item (or turn) holds what the spans say happened (``llm_judges.conversation``: agent spans first, then
root spans; the earliest prompt, the latest-ending answer):

* ``prompt``: the user's prompt; ``response``: the agent's final answer, recorded (absent when the trace holds
  none: ``evalkit run --agent`` still replays the prompt);
* ``diagnostics.tool_calls``: the upstream evidence object (``reading.tool_calls``: identities and statuses
  of the trace's tool spans, ``{"selected_functions": [], "executions": []}`` when it called none, null lists
  when the trace has event records but no span), which
  ToolCallSelection / ToolCallExecution judge; ``diagnostics.retrieval_executions`` where the spans carry
  retrieval hits (``retrieval``);
* ``extensions["dev.evalkit.spans"]``: ``session_id``, ``trace_id``, the trace's ``start`` (ISO 8601, UTC) and
  each tool call's ``name``, ``arguments``, ``result`` and ``call_id``, so a result links back to its trace.

A thread's ``conversation_id`` is the session id, with ``extensions["dev.evalkit.spans"]`` holding the
session id; its turns follow the session's traces in order. The schema takes at most 20 turns per thread, so a
longer session becomes consecutive threads (``conversation_id`` ``<session> (part 2)``, ...), said in a note.
A trace with no user prompt cannot be an item: it is left out, with a note naming it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from evalkit.spans.datasets.retrieval import retriever_execution, tool_execution
from evalkit.spans.datasets.selection import Unit, trace_docs
from evalkit.spans.llm_judges.conversation import Conversation, Turn, conversation
from evalkit.spans.reading.event_record import is_record
from evalkit.spans.reading.tool_calls import tool_calls_from_spans

EXTENSION = "dev.evalkit.spans"
MAX_TURNS = 20  # the schema's MultiTurnThread.turns maxItems


def build_items(units: list[Unit], by: str, notes: list[str]) -> list[dict]:
    """The document's items for the selected units (notes collects what was left out or split)."""
    conversations: dict[str, Conversation] = {}
    items: list[dict] = []
    for unit in units:
        group = unit.session
        conv = conversations.get(group.id)
        if conv is None:
            conv = conversations[group.id] = conversation(group.id, group.docs)
        docs = trace_docs(group)
        turns = []
        for trace_id in unit.traces:
            entry = _entry(conv, trace_id, docs.get(trace_id, []), notes)
            if entry is not None:
                turns.append(entry)
        if by == "trace":
            items.extend(turns)
        elif turns:
            items.extend(_threads(group.id, turns, notes))
    return items


def _entry(conv: Conversation, trace_id: str, docs: list[dict], notes: list[str]) -> dict | None:
    try:
        _, turn = conv.turn(trace_id)
    except KeyError:
        turn = Turn(trace_id)
    if not turn.user_prompt or not turn.user_prompt.strip():
        notes.append(
            f"trace {trace_id} (session {conv.session_id}) has no user prompt in its spans; left out"
        )
        return None
    entry: dict[str, Any] = {"prompt": turn.user_prompt}
    if turn.assistant_output is not None:
        entry["response"] = turn.assistant_output
    else:
        notes.append(
            f"trace {trace_id} (session {conv.session_id}) has no answer in its spans; its item has no "
            "response (run it with --agent)"
        )
    spans = [d for d in docs if not is_record(d)]
    diagnostics: dict[str, Any] = {"tool_calls": tool_calls_from_spans(spans) if spans else _no_calls()}
    retrieval = _retrieval(turn, spans)
    if retrieval:
        diagnostics["retrieval_executions"] = retrieval
    entry["diagnostics"] = diagnostics
    entry["extensions"] = {EXTENSION: _links(conv.session_id, trace_id, docs, turn)}
    return entry


def _no_calls() -> dict:
    """A trace of event records only: its tool spans are unknown, so the evidence is unavailable (null), not
    an authoritative "no calls"."""
    return {"selected_functions": None, "executions": None}


def _retrieval(turn: Turn, spans: list[dict]) -> list[dict]:
    found = [e for e in map(retriever_execution, spans) if e is not None]
    found += [e for c in turn.tool_calls if (e := tool_execution(c.name, c.arguments, c.result)) is not None]
    return found


def _links(session_id: str, trace_id: str, docs: list[dict], turn: Turn) -> dict:
    link: dict[str, Any] = {"session_id": session_id, "trace_id": trace_id}
    starts = [d.get("startTimeUnixNano", d.get("timeUnixNano")) for d in docs]
    starts = [s for s in starts if isinstance(s, int) and s > 0]
    if starts:
        link["start"] = (
            datetime.fromtimestamp(min(starts) / 1e9, tz=timezone.utc).isoformat().replace("+00:00", "Z")
        )
    link["tool_calls"] = [
        {"name": c.name, "arguments": c.arguments, "result": c.result, "call_id": c.call_id}
        for c in turn.tool_calls
    ]
    return link


def _threads(session_id: str, turns: list[dict], notes: list[str]) -> list[dict]:
    parts = [turns[i : i + MAX_TURNS] for i in range(0, len(turns), MAX_TURNS)]
    if len(parts) > 1:
        notes.append(
            f"session {session_id} has {len(turns)} turns; the schema takes {MAX_TURNS} per thread, so it "
            f"became {len(parts)} threads"
        )
    threads = []
    for index, part in enumerate(parts, start=1):
        name = session_id if index == 1 else f"{session_id} (part {index})"
        threads.append(
            {"conversation_id": name, "turns": part, "extensions": {EXTENSION: {"session_id": session_id}}}
        )
    return threads
