"""AgentCore's three programmatic built-ins: ``Builtin.TrajectoryExactOrderMatch``,
``Builtin.TrajectoryInOrderMatch`` and ``Builtin.TrajectoryAnyOrderMatch`` (no model call).

Each runs at SESSION level and compares the tools the session called, by name in call order (each turn's
tool calls in start order, turns in order: ``conversation``), with the reference input's
``expectedTrajectory.toolNames`` (AgentCore's page "Ground truth evaluations"):

* ExactOrder: the same tools in the same order, nothing extra;
* InOrder: the expected tools appear in that order, other calls allowed between them (a subsequence);
* AnyOrder: every expected tool is called at least once, in any order, extras allowed.

A result is ``Yes`` (value 1.0) or ``No`` (0.0) with an explanation naming what is missing, out of order or
extra. The labels are evalkit's choice (the pages reachable here give none; AgentCore's other yes/no
built-ins use Yes / No). A session without an ``expectedTrajectory`` gets the error ``MissingReferenceInput``
naming the field. ``expectedResponse`` / ``assertions`` given for the session are listed in
``ignoredReferenceInputFields``.
"""

from __future__ import annotations

import json

from evalkit.errors import EvaluatorConfigError
from evalkit.spans.lambdas.payload import SessionSpans
from evalkit.spans.lambdas.results import result_entry
from evalkit.spans.llm_judges.conversation import conversation
from evalkit.spans.llm_judges.ground_truth import MISSING_REFERENCE, ground_truth, note_ignored

MODES = {
    "Builtin.TrajectoryExactOrderMatch": "exact",
    "Builtin.TrajectoryInOrderMatch": "in order",
    "Builtin.TrajectoryAnyOrderMatch": "any order",
}
FIELD = "expectedTrajectory"


class TrajectoryMatch:
    """One of the three ``Builtin.Trajectory*Match`` evaluators: SESSION level, programmatic."""

    is_llm = False
    level = "SESSION"
    reference_fields = (FIELD,)
    passing_labels = ("Yes",)

    def __init__(self, spec: str):
        self.name = spec
        self.evaluator_id = spec
        self.mode = MODES[spec]
        self.path = None

    def __repr__(self) -> str:
        return f"TrajectoryMatch({self.name!r})"

    def with_level(self, level: str) -> TrajectoryMatch:
        if level != self.level:
            raise EvaluatorConfigError(
                f"'{self.name}' is a SESSION evaluator (it compares the session's tool calls with "
                f"expectedTrajectory); drop ':{level}'"
            )
        return self


def evaluate_trajectory(
    evaluator: TrajectoryMatch, groups: list[SessionSpans], references: dict[str, str] | None = None
) -> list[dict]:
    """One result entry per session of ``groups``."""
    entries = []
    for group in groups:
        entry = result_entry(evaluator, group.id, None, None)
        truth = ground_truth((references or {}).get(group.id))
        values, given = truth.for_target("SESSION", None, None)
        note_ignored(entry, given, evaluator.reference_fields)
        if FIELD not in values:
            entry["errorCode"] = MISSING_REFERENCE
            entry["errorMessage"] = (
                f"session {group.id} has no expectedTrajectory in the reference inputs; {evaluator.name} "
                'compares the tool calls with it: give {"expectedTrajectory": {"toolNames": [...]}} in a '
                "session-level reference input (--reference-inputs)"
            )
        else:
            conv = conversation(group.id, group.docs)
            actual = [call.name for turn in conv.turns for call in turn.tool_calls]
            entry.update(match(evaluator.mode, values[FIELD]["toolNames"], actual))
        entries.append(entry)
    return entries


def match(mode: str, expected: list[str], actual: list[str]) -> dict:
    """``{"label", "value", "explanation"}`` of comparing ``actual`` tool names with ``expected`` in ``mode``."""
    shown = f"expected {json.dumps(expected)}, called {json.dumps(actual)}"
    if mode == "exact":
        ok = actual == expected
        why = "the same tools in the same order" if ok else _exact_difference(expected, actual)
    elif mode == "in order":
        matched = _in_order_prefix(expected, actual)
        ok = matched == len(expected)
        why = (
            "every expected tool was called in the expected order"
            if ok
            else f"'{expected[matched]}' (expected tool {matched + 1}) was not called after "
            + (f"'{expected[matched - 1]}'" if matched else "the start of the session")
        )
    else:
        missing = [name for name in dict.fromkeys(expected) if name not in actual]
        ok = not missing
        why = "every expected tool was called" if ok else f"not called: {', '.join(missing)}"
    return {"label": "Yes" if ok else "No", "value": 1.0 if ok else 0.0, "explanation": f"{why} ({shown})"}


def _in_order_prefix(expected: list[str], actual: list[str]) -> int:
    """How many of the expected tools, from the first, appear in ``actual`` in order (greedy)."""
    position = 0
    for name in actual:
        if position < len(expected) and name == expected[position]:
            position += 1
    return position


def _exact_difference(expected: list[str], actual: list[str]) -> str:
    for index, (want, got) in enumerate(zip(expected, actual)):
        if want != got:
            return f"call {index + 1} is '{got}', expected '{want}'"
    if len(actual) > len(expected):
        return f"{len(actual) - len(expected)} extra call(s) after the expected ones: {', '.join(actual[len(expected) :])}"
    return f"missing call(s) at the end: {', '.join(expected[len(actual) :])}"
