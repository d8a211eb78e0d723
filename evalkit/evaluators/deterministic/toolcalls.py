"""ToolCallSelection and ToolCallExecution: deterministic checks of which tools the agent called, and how.

Both evaluators judge the upstream (schema 1.11) tool-call evidence, ``diagnostics.tool_calls`` (its shape,
and how tool identities and statuses are read from spans, are in ``evalkit.spans.reading.tool_calls``). A
row's evidence is its ``tool_calls`` cell when that holds an object; otherwise it is derived from the row's
captured ``spans`` by ``tool_calls_from_spans``. A null list means "evidence unavailable", an empty list is an authoritative
"nothing happened" (the upstream semantics), so an agent that emitted spans but no tool span selected and
executed nothing.

An expected call ``{"plugin_name": ns, "function_name": tool}`` is the upstream identifier ``ns_tool``. An
entry with no plugin whose function name is that identifier is that call (a tool named ``ns_tool`` by an
agent outside Microsoft 365, whose spans give no namespace; ``reading.tool_calls.call_names``), as in
``allowed_tools``; any other entry with no plugin is incomplete, as below.

ToolCallSelection (options ``calls``, ``allow_additional_calls`` = true; score 1.0 / 0.0, threshold 1.0)
    Expected identities are de-duplicated. Pass when every expected identity is among
    ``selected_functions`` and, with ``allow_additional_calls`` false, no other identity was selected. The
    fail reason names the missing identities and the unexpected ones.

ToolCallExecution (option ``calls``; score 1.0 / 0.0, threshold 1.0)
    Each expected identity needs as many *successful* executions (``response_status`` 200-299) as it occurs
    in ``calls``. Additional executions are allowed. The fail reason names each unmet expectation as
    ``label: N successful execution(s) of M required`` (with the non-2xx statuses seen for it).

Indeterminate evidence (an error result with code ``toolCallEvidenceIndeterminate``, no score)
    * no evidence at all (no ``tool_calls`` object and no captured spans), the list the evaluator needs is
      null (``selected_functions`` for selection, ``executions`` for execution; ``evidence_error`` is
      quoted), or the evidence is malformed (not an object, the list not a list);
    * incomplete entries that *could change the verdict*. An entry whose plugin or function name is null
      (or blank / not a string; an entry that is not an object counts as both null) could be any identity
      compatible with its known part, and an execution with a null ``response_status`` could have succeeded
      or not. The verdict with the unknowns is determinate when every completion gives the same result:

      - selection, additional calls allowed: passes if the known identities already cover every expected
        one (incomplete entries can only add); fails if the expected identities still missing cannot each
        be matched to a *distinct* compatible incomplete entry; otherwise indeterminate;
      - selection, additional calls not allowed: fails if a known identity is unexpected, if an incomplete
        entry is compatible with no expected identity (it is surely an extra), or if the missing ones cannot
        be matched as above; otherwise (incomplete entries present) indeterminate, since the unknowns could
        also be names outside the expectation;
      - execution: passes if the known successful executions meet every required count; fails if the
        shortfall cannot be filled by distinct incomplete entries that could be a success of a short
        identity (entries with a known non-2xx status never can); otherwise indeterminate.

      The matchings are bipartite (each incomplete entry stands for one call), checked exactly.

Configuration mistakes (``calls`` missing, empty, or with an entry lacking a non-empty string
``tool.plugin_name`` / ``tool.function_name``; a non-boolean ``allow_additional_calls``) give that row an
error result with code ``evaluatorConfigurationError``; other rows are still scored. Unknown options are
ignored. Entries validate against the upstream ``ToolCallEvaluatorScore`` definition (no extra detail fields).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.evaluators.base import CONFIG_ERROR, OptionError, result_frame
from evalkit.spans.reading.tool_calls import (
    Identity,
    as_integer,
    entry_identity,
    is_absent,
    is_complete,
    show_identity,
    tool_calls_from_spans,
    tool_identifier,
)

if TYPE_CHECKING:
    import pandas as pd

#: Error code of a row whose tool-call evidence cannot decide the verdict.
INDETERMINATE = "toolCallEvidenceIndeterminate"
THRESHOLD = 1.0
_SEQUENCES = (list, tuple, np.ndarray)


def _succeeded(status: int | None) -> bool:
    return status is not None and 200 <= status <= 299


def _compatible(partial: Identity, identity: Identity) -> bool:
    """Whether an entry with unknown parts (None) could be ``identity``."""
    return (partial[0] is None or partial[0] == identity[0]) and (
        partial[1] is None or partial[1] == identity[1]
    )


def _can_cover(needs: list[Identity], candidates: list[Identity]) -> bool:
    """Whether every need can get its own candidate compatible with it (bipartite matching, augmenting paths).

    ``needs`` may repeat an identity (one per missing unit); each candidate serves at most one need.
    """
    if len(needs) > len(candidates):
        return False
    owner: list[int | None] = [None] * len(candidates)

    def augment(need: int, seen: set[int]) -> bool:
        for j, candidate in enumerate(candidates):
            if j not in seen and _compatible(candidate, needs[need]):
                seen.add(j)
                if owner[j] is None or augment(owner[j], seen):
                    owner[j] = need
                    return True
        return False

    return all(augment(i, set()) for i in range(len(needs)))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _named_as_expected(identities: list[Identity]):
    """A function giving an entry's identity, the expected call it names when it has no plugin and its
    function name is that call's identifier (module docstring)."""
    by_identifier: dict[str, Identity] = {}
    for identity in identities:
        by_identifier.setdefault(tool_identifier(*identity), identity)

    def resolve(entry: Any) -> Identity:
        identity = entry_identity(entry)
        if identity[0] is None and identity[1] is not None:
            return by_identifier.get(identity[1], identity)
        return identity

    return resolve


class _Indeterminate(Exception):
    """The evidence cannot decide the verdict; the message says why."""


def _evidence(tool_calls: Any, spans: Any) -> dict:
    """The row's ``tool_calls`` object, else the one derived from its spans; raise when there is neither."""
    if is_absent(tool_calls):
        derived = tool_calls_from_spans(spans)
        if derived is None:
            raise _Indeterminate(
                "No tool-call evidence: the row has neither diagnostics.tool_calls nor captured spans."
            )
        return derived
    if not isinstance(tool_calls, dict):
        raise _Indeterminate(f"diagnostics.tool_calls must be an object, got {type(tool_calls).__name__}.")
    return tool_calls


def _evidence_list(evidence: dict, field: str) -> Sequence:
    value = evidence.get(field)
    if is_absent(value):
        why = evidence.get("evidence_error")
        suffix = f" ({why})" if isinstance(why, str) and why else ""
        raise _Indeterminate(f"Tool-call evidence unavailable: {field} is null or missing{suffix}.")
    if not isinstance(value, _SEQUENCES):
        raise _Indeterminate(f"diagnostics.tool_calls.{field} must be a list, got {type(value).__name__}.")
    return value


def _expected_calls(options: dict, evaluator: str) -> tuple[list[Identity], dict[Identity, str]]:
    """The ``calls`` option: the identities in order (repeats kept) and a label per identity for reasons.

    The label is ``id (identifier)`` with the first ``id`` given for the identity, else the identifier.
    """
    calls = options.get("calls")
    if calls is None:
        raise OptionError(f"{evaluator} requires the option 'calls'")
    if not isinstance(calls, _SEQUENCES) or len(calls) == 0:
        raise OptionError(f"option 'calls' must be a non-empty list, got {calls!r}")
    expected: list[Identity] = []
    labels: dict[Identity, str] = {}
    for i, call in enumerate(calls):
        tool = call.get("tool") if isinstance(call, dict) else None
        if not isinstance(tool, dict):
            raise OptionError(f"option 'calls[{i}]' must be an object with a 'tool' object, got {call!r}")
        parts = []
        for part in ("plugin_name", "function_name"):
            value = tool.get(part)
            if not isinstance(value, str) or not value:
                raise OptionError(
                    f"option 'calls[{i}].tool.{part}' must be a non-empty string, got {value!r}"
                )
            parts.append(value)
        identity = (parts[0], parts[1])
        identifier = tool_identifier(*parts)
        call_id = call.get("id")
        if call_id is not None and (not isinstance(call_id, str) or not call_id):
            raise OptionError(f"option 'calls[{i}].id' must be a non-empty string, got {call_id!r}")
        expected.append(identity)
        if identity not in labels or (call_id is not None and labels[identity] == identifier):
            labels[identity] = identifier if call_id in (None, identifier) else f"{call_id} ({identifier})"
    return expected, labels


def _assemble(index, outcomes: list[tuple]) -> pd.DataFrame:
    """Turn per-row ``(score, result, reason, error, code)`` tuples into a result frame."""
    if not outcomes:
        return result_frame(index)
    score, result, reason, error, code = (list(col) for col in zip(*outcomes, strict=True))
    threshold = [math.nan if r == "error" else THRESHOLD for r in result]
    return result_frame(
        index, score=score, result=result, threshold=threshold, reason=reason, error=error, code=code
    )


def _verdict(passed: bool, reason: str) -> tuple:
    return (1.0, "pass", reason, None, None) if passed else (0.0, "fail", reason, None, None)


class _ToolCallEvaluator:
    """Shared ``score``: evidence and options per row, ``_judge`` for the verdict, errors per row."""

    name: str
    key: str
    score_field = "score"
    has_threshold = True
    requires: tuple[str, ...] = ()
    is_llm = False

    def score(self, rows: pd.DataFrame, configs: list[dict[str, Any]]) -> pd.DataFrame:
        """Score every row; unusable options and undecidable evidence become that row's error result."""
        n = len(rows)
        tool_calls = rows["tool_calls"].tolist() if "tool_calls" in rows.columns else [None] * n
        spans = rows["spans"].tolist() if "spans" in rows.columns else [None] * n
        outcomes = []
        for calls, row_spans, options in zip(tool_calls, spans, configs, strict=True):
            try:
                if options is None:
                    options = {}
                elif not isinstance(options, dict):
                    raise OptionError(f"{self.name} options must be an object, got {options!r}")
                outcomes.append(self._judge(options, calls, row_spans))
            except OptionError as exc:
                outcomes.append((math.nan, "error", None, str(exc), CONFIG_ERROR))
            except _Indeterminate as exc:
                outcomes.append((math.nan, "error", None, str(exc), INDETERMINATE))
        return _assemble(rows.index, outcomes)

    def _judge(self, options: dict, tool_calls: Any, spans: Any) -> tuple:
        raise NotImplementedError


class ToolCallSelection(_ToolCallEvaluator):
    """Did the agent select the expected tools (and, optionally, only those)? (see the module docstring)."""

    name = "ToolCallSelection"
    key = "toolCallSelection"

    def _judge(self, options: dict, tool_calls: Any, spans: Any) -> tuple:
        identities, labels = _expected_calls(options, self.name)
        expected = {identity: labels[identity] for identity in identities}
        allow = options.get("allow_additional_calls")
        if allow is None:
            allow = True
        elif not isinstance(allow, (bool, np.bool_)):
            raise OptionError(f"option 'allow_additional_calls' must be a boolean, got {allow!r}")
        allow = bool(allow)

        resolve = _named_as_expected(identities)
        entries = [resolve(e) for e in _evidence_list(_evidence(tool_calls, spans), "selected_functions")]
        known = list(dict.fromkeys(e for e in entries if is_complete(e)))
        partial = [e for e in entries if not is_complete(e)]
        known_set = set(known)
        missing = [e for e in expected if e not in known_set]
        unexpected = [] if allow else [e for e in known if e not in expected]
        if not allow:
            # An incomplete entry that no expected identity fits is surely an additional call.
            unexpected += [p for p in partial if not any(_compatible(p, e) for e in expected)]

        if not missing and not unexpected and not (partial and not allow):
            names = ", ".join(expected.values())
            only = " and nothing else" if not allow else ""
            return _verdict(True, f"Selected every expected tool{only}: {names}.")
        if not unexpected and partial and (not missing or _can_cover(missing, partial)):
            # Reached only when the incomplete entries could go either way (see the module docstring).
            shown = ", ".join(show_identity(p) for p in partial)
            if missing:
                why = "could be the missing expected tool(s) " + ", ".join(expected[m] for m in missing)
            else:
                why = (
                    "could be tools other than the expected ones, which allow_additional_calls false forbids"
                )
            raise _Indeterminate(
                f"Tool selection cannot be decided: {_plural(len(partial), 'selected call')} with an unknown "
                f"plugin or function name ({shown}) {why}."
            )
        problems = []
        if missing:
            problems.append("missing expected tool(s) " + ", ".join(expected[m] for m in missing))
        if unexpected:
            problems.append(
                "unexpected additional tool(s) "
                + ", ".join(show_identity(u) for u in dict.fromkeys(unexpected))
                + " (allow_additional_calls is false)"
            )
        reason = "Tool selection failed: " + "; ".join(problems)
        if missing and partial:
            reason += (
                f"; the {_plural(len(partial), 'selected call')} with an unknown plugin or function name "
                "cannot account for them"
            )
        selected = ", ".join(show_identity(k) for k in known) or "none"
        return _verdict(False, f"{reason}. Selected: {selected}.")


class ToolCallExecution(_ToolCallEvaluator):
    """Did the expected tools run successfully, as many times as required? (see the module docstring)."""

    name = "ToolCallExecution"
    key = "toolCallExecution"

    def _judge(self, options: dict, tool_calls: Any, spans: Any) -> tuple:
        identities, labels = _expected_calls(options, self.name)
        required = Counter(identities)

        executions = _evidence_list(_evidence(tool_calls, spans), "executions")
        resolve = _named_as_expected(identities)
        successes: Counter = Counter()
        other_statuses: dict[Identity, list] = {}
        uncertain: list[Identity] = []  # entries that could be one more success of some identity
        for entry in executions:
            identity = resolve(entry)
            status = as_integer(entry.get("response_status")) if isinstance(entry, dict) else None
            if is_complete(identity) and status is not None:
                if _succeeded(status):
                    successes[identity] += 1
                else:
                    other_statuses.setdefault(identity, []).append(status)
            elif status is None or _succeeded(status):
                uncertain.append(identity)

        short = {e: required[e] - successes[e] for e in required if successes[e] < required[e]}
        if not short:
            met = ", ".join(
                f"{labels[e]}: {_plural(successes[e], 'successful execution')} ({required[e]} required)"
                for e in required
            )
            return _verdict(True, f"Every expected execution succeeded: {met}.")
        needs = [e for e, gap in short.items() for _ in range(gap)]
        if uncertain and _can_cover(needs, uncertain):
            relevant = [u for u in uncertain if any(_compatible(u, e) for e in short)]
            shown = ", ".join(show_identity(u) for u in relevant)
            raise _Indeterminate(
                f"Tool execution cannot be decided: {_plural(len(relevant), 'execution')} with an unknown "
                f"plugin name, function name or response status ({shown}) could supply the missing "
                "successful execution(s) of " + ", ".join(labels[e] for e in short) + "."
            )
        unmet = []
        for identity in short:
            text = (
                f"{labels[identity]}: {_plural(successes[identity], 'successful execution')} of "
                f"{required[identity]} required"
            )
            failed = other_statuses.get(identity)
            if failed:
                text += " (other executions returned " + ", ".join(str(s) for s in failed) + ")"
            unmet.append(text)
        reason = "Tool execution failed: " + "; ".join(unmet)
        if uncertain:
            reason += (
                f"; the {_plural(len(uncertain), 'execution')} with an unknown identity or status "
                "cannot account for them"
            )
        return _verdict(False, reason + ".")


TOOLCALL_EVALUATORS = {"ToolCallSelection": ToolCallSelection, "ToolCallExecution": ToolCallExecution}
