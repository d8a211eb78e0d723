"""WorkflowContract: an Amazon Bedrock AgentCore code-based evaluator (SESSION level) for tool-call order.

Deploy it with ``evalkit spans package workflow_contract --out workflow_contract.zip`` (handler
``workflow_contract.lambda_handler``; the zip adds the shared span reader ``agentcore_spans`` from
``custom-evaluators/_shared/``): standard library only, no file writes. The market-intelligence agent must
identify the broker before it touches the broker's profile, and only then fetch market data or news; this
evaluator rebuilds the session's tool calls and checks that contract deterministically.

Tool calls: every tool span of the session (name starts with ``execute_tool ``, or ``gen_ai.tool.name``,
or ``traceloop.span.kind == "tool"``), ordered by ``startTimeUnixNano`` (then end time, then position in
the payload; a span without a start time sorts first). Tool name: the first of ``gen_ai.tool.name``,
``tool.name``, ``traceloop.entity.name``, else the span name without ``execute_tool ``. A namespaced name
such as ``market-tools___get_stock_data`` (AgentCore Gateway) also matches ``get_stock_data``.

Contract: ordered groups of tools (``DEFAULT_GROUPS``), overridable with the environment variable
``WORKFLOW_GROUPS`` holding a JSON list of lists of tool names (a bare string is a one-tool group). A group
is satisfied when any of its tools was called. Order: the first call of each satisfied group must come
after the first call of the previous satisfied group (a missing group is reported as missing, not as an
order violation of the groups around it). Because the check runs against the latest first call of all
earlier satisfied groups, market data fetched before the broker was identified is a violation even when the
profile step in between was itself out of order.

Labels and values: ``PASS`` 1.0 (all groups, in order); ``OUT_OF_ORDER`` 0.0 (at least one order
violation, whether or not a group is missing: a broken contract is a failed contract, so its value can pass
no gate, however many groups were called); ``PARTIAL`` satisfied groups / groups (some groups missing, no
violation); ``FAIL`` 0.0 (no group satisfied, including sessions without tool calls). The explanation says
how many groups were satisfied and how many in order, lists the missing groups, every order violation (which
calls, which spans) and the call sequence. ``PASSING_LABELS`` (``PASS``) tells evalkit which labels count as
passing. Event records in ``sessionSpans`` are not tool calls (their spans are). A malformed event gives
``InvalidInput``, a bad ``WORKFLOW_GROUPS`` gives ``InvalidConfiguration``; the handler never raises.
"""

from __future__ import annotations

import json
import os
import re

from agentcore_spans import attributes, is_record, is_tool_span, tool_name
from agentcore_spans import read_session_event as _read_event

EVALUATION_LEVEL = "SESSION"
#: The labels that count as passing (evalkit's ``--fail-under``, ``spans status``, alarms and reports read it).
PASSING_LABELS = ("PASS",)

MAX_EXPLANATION = 2048
DEFAULT_GROUPS: list[list[str]] = [
    ["identify_broker"],
    [
        "get_broker_profile",
        "update_broker_profile",
        "get_broker_financial_profile",
        "update_broker_financial_interests",
    ],
    ["get_stock_data", "search_news", "get_market_overview", "get_sector_data"],
]
NAMESPACE_SEPARATOR = re.compile(r"^.*(?:___|/|:)")


def lambda_handler(event, context):
    """AgentCore entry point: check the session's tool calls against the ordered workflow groups."""
    try:
        return _evaluate(event)
    except Exception as exc:  # never raise: AgentCore records an error result instead
        return {"errorCode": "InternalError", "errorMessage": f"{type(exc).__name__}: {exc}"[:1024]}


def workflow_groups() -> list[list[str]]:
    """The contract: ``$WORKFLOW_GROUPS`` (JSON list of lists of tool names) or ``DEFAULT_GROUPS``."""
    raw = os.environ.get("WORKFLOW_GROUPS", "").strip()
    if not raw:
        return [list(group) for group in DEFAULT_GROUPS]
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"WORKFLOW_GROUPS is not valid JSON: {exc}") from None
    if not isinstance(data, list) or not data:
        raise ValueError("WORKFLOW_GROUPS must be a non-empty JSON list of lists of tool names")
    groups = []
    for i, group in enumerate(data, start=1):
        members = [group] if isinstance(group, str) else group
        if (
            not isinstance(members, list)
            or not members
            or not all(isinstance(name, str) and name.strip() for name in members)
        ):
            raise ValueError(
                f"WORKFLOW_GROUPS group {i} must be a non-empty list of tool names, got {group!r}"
            )
        groups.append([name.strip() for name in members])
    return groups


def _evaluate(event) -> dict:
    spans, problem = _read_event(event)
    if problem:
        return {"errorCode": "InvalidInput", "errorMessage": problem}
    try:
        groups = workflow_groups()
    except ValueError as exc:
        return {"errorCode": "InvalidConfiguration", "errorMessage": str(exc)}
    calls = tool_calls(spans)
    return score(groups, calls)


def tool_calls(spans: list[dict]) -> list[tuple[str, str]]:
    """(tool name, span id) of every tool span, in start-time order."""
    keyed = []
    for index, span in enumerate(spans):
        attrs = attributes(span)
        if not is_record(span) and is_tool_span(span, attrs):
            start = _as_int(span.get("startTimeUnixNano"))
            end = _as_int(span.get("endTimeUnixNano"))
            order = (start if start is not None else -1, end if end is not None else -1, index)
            keyed.append((order, tool_name(span, attrs), str(span.get("spanId") or "?")))
    keyed.sort(key=lambda item: item[0])
    return [(name, span_id) for _, name, span_id in keyed]


def score(groups: list[list[str]], calls: list[tuple[str, str]]) -> dict:
    """The result for ``calls`` (ordered (tool, span id)) against the ordered ``groups``."""
    firsts: list[tuple[int, str, str] | None] = []
    for group in groups:
        wanted = set(group)
        first = next(
            ((i, name, span_id) for i, (name, span_id) in enumerate(calls) if _base_name(name, wanted)),
            None,
        )
        firsts.append(first)

    missing, violations, counted = [], [], 0
    latest = None  # (group number, first call) of the earlier satisfied group whose first call is latest
    for number, (group, first) in enumerate(zip(groups, firsts), start=1):
        if first is None:
            missing.append(f"group {number} (one of: {', '.join(group)})")
            continue
        if latest is not None and first[0] < latest[1][0]:
            before_number, before = latest
            violations.append(
                f"group {number} {first[1]} (call #{first[0] + 1}, span {first[2]}) came before group "
                f"{before_number} {before[1]} (call #{before[0] + 1}, span {before[2]})"
            )
        else:
            counted += 1
            latest = (number, first)

    satisfied = len(groups) - len(missing)
    value = round(satisfied / len(groups), 4)
    if satisfied == 0:
        label = "FAIL"
    elif violations:
        label, value = "OUT_OF_ORDER", 0.0
    elif missing:
        label = "PARTIAL"
    else:
        label = "PASS"
    sequence = " -> ".join(name for name, _ in calls[:12]) + (" -> ..." if len(calls) > 12 else "")
    head = (
        f"{satisfied}/{len(groups)} workflow group(s) satisfied, {counted} in order, "
        f"over {len(calls)} tool call(s)"
    )
    parts = []
    if missing:
        parts.append("missing: " + "; ".join(missing))
    if violations:
        parts.append("order violations: " + "; ".join(violations))
    parts.append(f"calls: {sequence}" if calls else "no tool calls in the session")
    return {"label": label, "value": value, "explanation": _clip(head + ". " + ". ".join(parts) + ".")}


def _base_name(name: str, wanted: set[str]) -> bool:
    """``name`` is one of ``wanted``, directly or after a ``namespace___`` / ``ns/`` / ``ns:`` prefix."""
    return name in wanted or NAMESPACE_SEPARATOR.sub("", name) in wanted


# --- helpers ------------------------------------------------------------------------------------------------


def _as_int(value) -> int | None:
    """Nanosecond timestamps arrive as numbers or (OTLP JSON) as decimal strings."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _clip(text: str) -> str:
    return text if len(text) <= MAX_EXPLANATION else text[: MAX_EXPLANATION - 3] + "..."
