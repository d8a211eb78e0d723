"""Ground truth: AgentCore's ``evaluationReferenceInputs`` for the judges that use them.

A reference input is ``{"context": {"spanContext": {"sessionId", "traceId"?}}, "expectedResponse": {"text"},
"assertions": [{"text"}, ...], "expectedTrajectory": {"toolNames": [...]}}`` (the Evaluate API's
``EvaluationReferenceInput``; ``check_reference_inputs`` checks each field's shape and refuses unknown ones by
name). Which target a field applies to (AgentCore's page "Ground truth evaluations" gives each a scope):

* ``expectedResponse`` is trace-level: one with a ``traceId`` applies to that trace only; one without (session
  context only) applies to the session's last trace, as AWS's ``bedrock-agentcore`` SDK targets a plain-string
  expected response (``EvaluationClient``: "A plain string applies to the last trace");
* ``assertions`` and ``expectedTrajectory`` are session-level: read from the reference without a ``traceId``;
  given on a trace-level reference they are used by no evaluator (and listed as ignored).

Who uses what: ``Builtin.Correctness`` the expected response, ``Builtin.GoalSuccessRate`` the assertions, the
three ``Builtin.Trajectory*Match`` the expected trajectory, a custom judge the fields of the ground-truth
placeholders its instructions use (``{expected_response}``, ``{assertions}``, ``{expected_tool_trajectory}``;
``{actual_tool_trajectory}`` is read from the spans). A result lists in ``ignoredReferenceInputFields`` the
fields given for its target (its session's, and its trace's) that its evaluator did not use, as AgentCore's
results do; the key is left out when nothing was ignored.

Placeholder values: ``expected_response`` the text; ``assertions`` one per line, numbered; both trajectories
as JSON arrays of tool names, the actual one in call order (each turn's tool calls in start order).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.documents.json_input import JsonInputError, parse_json, read_limited
from evalkit.errors import EvalkitError, shown

#: The ground-truth fields of a reference input, in AgentCore's order.
FIELDS = ("expectedResponse", "assertions", "expectedTrajectory")
SESSION_FIELDS = ("assertions", "expectedTrajectory")
KEYS = ("context", *FIELDS)
MISSING_REFERENCE = "MissingReferenceInput"


@dataclass
class GroundTruth:
    """One session's reference inputs: the session-level fields and the trace-level ones by trace id."""

    session: dict[str, Any] = field(default_factory=dict)
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)

    def for_target(self, level: str, trace_id: str | None, last_trace: str | None) -> tuple[dict, list[str]]:
        """``(values, given)``: the fields that apply to a target, and every field given for it (its session's
        and its trace's, or for SESSION all of the session's), in AgentCore's order."""
        values = {k: self.session[k] for k in SESSION_FIELDS if k in self.session}
        given = set(self.session)
        if level == "SESSION":
            for refs in self.traces.values():
                given.update(refs)
        else:
            trace = self.traces.get(trace_id, {})
            given.update(trace)
            if "expectedResponse" in trace:
                values["expectedResponse"] = trace["expectedResponse"]
            elif "expectedResponse" in self.session and trace_id == last_trace:
                values["expectedResponse"] = self.session["expectedResponse"]
        return values, [f for f in FIELDS if f in given]


def read_reference_inputs(path: str) -> list[dict]:
    """A file of AgentCore reference inputs (a list, or ``{"evaluationReferenceInputs": [...]}``), checked;
    ``EvalkitError`` naming the file when it is missing, not JSON or not such a list."""
    if not Path(path).exists():
        raise EvalkitError(f"{shown(path)}: reference inputs file not found")
    try:
        data = parse_json(read_limited(path))
    except JsonInputError as exc:
        raise EvalkitError(f"{shown(path)}: the reference inputs are not valid JSON ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("evaluationReferenceInputs"), list):
        data = data["evaluationReferenceInputs"]
    if not isinstance(data, list):
        raise EvalkitError(f"{shown(path)}: expected a JSON list of reference inputs")
    return check_reference_inputs(data, path)


def check_reference_inputs(references: Any, where: str = "") -> list[dict]:
    """The reference inputs, each checked against the ``EvaluationReferenceInput`` shape (``where``: the file,
    named in errors)."""
    prefix = f"{where}: " if where else ""
    if not isinstance(references, list):
        raise EvalkitError(
            f"{prefix}expected a list of AgentCore reference inputs (evaluationReferenceInputs)"
        )
    for i, ref in enumerate(references):
        at = f"{prefix}reference input [{i}]"
        if not isinstance(ref, dict):
            raise EvalkitError(f"{at} must be an object with 'context' and ground-truth fields")
        unknown = sorted(set(ref) - set(KEYS))
        if unknown:
            raise EvalkitError(
                f"{at}: unknown field(s) {', '.join(map(repr, unknown))} (known: {', '.join(KEYS)})"
            )
        span_context = (
            (ref.get("context") or {}).get("spanContext") if isinstance(ref.get("context"), dict) else None
        )
        if not isinstance(span_context, dict) or not isinstance(span_context.get("sessionId"), str):
            raise EvalkitError(f"{at} has no context.spanContext.sessionId")
        if "traceId" in span_context and not isinstance(span_context["traceId"], str):
            raise EvalkitError(f"{at}: context.spanContext.traceId must be a string")
        if "expectedResponse" in ref:
            _text(ref["expectedResponse"], f"{at}.expectedResponse")
        if "assertions" in ref:
            items = ref["assertions"]
            if not isinstance(items, list) or not items:
                raise EvalkitError(f'{at}.assertions must be a non-empty list of {{"text": ...}}')
            for j, item in enumerate(items):
                _text(item, f"{at}.assertions[{j}]")
        if "expectedTrajectory" in ref:
            names = (
                ref["expectedTrajectory"].get("toolNames")
                if isinstance(ref["expectedTrajectory"], dict)
                else None
            )
            if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
                raise EvalkitError(f'{at}.expectedTrajectory must be {{"toolNames": ["tool", ...]}}')
    return references


def _text(content: Any, at: str) -> None:
    if not isinstance(content, dict) or set(content) != {"text"} or not isinstance(content["text"], str):
        raise EvalkitError(f'{at} must be {{"text": "..."}} (AgentCore\'s EvaluationContent)')


def ground_truth(references_json: str | None) -> GroundTruth:
    """One session's ``GroundTruth`` from its reference inputs as ``payload.reference_groups`` gives them."""
    truth = GroundTruth()
    for ref in json.loads(references_json) if references_json else []:
        trace_id = ref["context"]["spanContext"].get("traceId")
        target = truth.session if trace_id is None else truth.traces.setdefault(trace_id, {})
        for key in FIELDS:
            if key in ref:
                target[key] = ref[key]
    return truth


def reference_values(values: dict, tool_names: list[str]) -> dict[str, str]:
    """The ground-truth placeholder values of one target (``tool_names``: the tools called, in order)."""
    rendered = {"actual_tool_trajectory": json.dumps(tool_names, ensure_ascii=False)}
    if "expectedResponse" in values:
        rendered["expected_response"] = values["expectedResponse"]["text"]
    if "assertions" in values:
        rendered["assertions"] = "\n".join(
            f"{i}. {item['text']}" for i, item in enumerate(values["assertions"], 1)
        )
    if "expectedTrajectory" in values:
        rendered["expected_tool_trajectory"] = json.dumps(
            values["expectedTrajectory"]["toolNames"], ensure_ascii=False
        )
    return rendered


def note_ignored(entry: dict, given: list[str], used: tuple[str, ...]) -> dict:
    """Add ``ignoredReferenceInputFields`` to a result entry: the fields given and not used (when any)."""
    ignored = [f for f in given if f not in used]
    if ignored:
        entry["ignoredReferenceInputFields"] = ignored
    return entry
