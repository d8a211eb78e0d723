"""ToolCallSelection and ToolCallExecution: deterministic checks of which tools the agent called, and how.

Both evaluators judge the upstream (schema 1.11) tool-call evidence, ``diagnostics.tool_calls``::

    {"selected_functions": [{"plugin_name", "function_name"}, ...] | null,
     "executions": [{"plugin_name", "function_name", "response_status"}, ...] | null,
     "evidence_error"?: "..."}

A row's evidence is its ``tool_calls`` cell when that holds an object; otherwise it is derived from the row's
captured ``spans`` by ``tool_calls_from_spans``. A null list means "evidence unavailable", an empty list is an
authoritative "nothing happened" (the upstream semantics), so an agent that emitted spans but no tool span
selected and executed nothing.

Tool identity from a span (``span_tool_identity``)
    A span is a tool span when its name starts with ``"execute_tool "``, or it has a non-empty
    ``gen_ai.tool.name``, or ``traceloop.span.kind == "tool"`` (the rule of ``evalkit.spans.loading``). Its
    tool name is the first non-blank of ``gen_ai.tool.name``, ``tool.name``, ``traceloop.entity.name``, else
    the span name without ``"execute_tool "``. The name is split at its *first* ``_`` or ``.`` (whichever
    comes first): ``github_orgs_get`` -> plugin ``github``, function ``orgs_get``;
    ``learnmicro_microsoft_docs_search`` -> ``learnmicro`` / ``microsoft_docs_search``; ``github.orgs_get``
    -> ``github`` / ``orgs_get``. This is the inverse of the upstream ``namespace_toolname`` identifier
    (``plugin + "_" + function``) used by ``allowed_tools``, so ``plugin_function`` rebuilds the name
    exactly whenever the name used ``_``. A name without a separator (``search``) has no parseable plugin,
    and an empty side leaves that part unparseable (``_x`` -> plugin null, ``x_`` -> function null): the
    entry is kept with the null part, as upstream keeps unparseable Developer Info entries. Plain tool names
    that contain ``_`` but no namespace (``get_weather``) are split too (``get`` / ``weather``); such
    agents should set the override attributes:

    * ``evalkit.tool.plugin`` / ``evalkit.tool.function`` (non-blank strings) replace the derived part.
      With only a plugin override, the function is the tool name with a leading ``<plugin>_`` or
      ``<plugin>.`` removed (else the whole name); with only a function override, the plugin is the tool name
      with a trailing ``_<function>`` or ``.<function>`` removed (else the split rule's plugin).

    ``gen_ai.system`` is deliberately *not* used: it names the model provider (``openai``, ``aws.bedrock``),
    not the tool's namespace, and would give every tool of an agent the same plugin.

Execution status from a span
    ``response_status`` is the first integer of ``http.response.status_code`` / ``http.status_code`` (an
    int, an integral float, or a digit string); failing that, 200 for span status OK / UNSET (or no status)
    and 500 for ERROR (numeric OTLP codes 0/1/2 and the ``STATUS_CODE_`` prefix are understood); any other
    status gives null. Every tool span is one execution; ``selected_functions`` holds the distinct
    identities in order of first call. Spans are taken in start-time order; a repeated
    (traceId, spanId) pair is counted once.

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

Allowlists (``resolve_allowed_tools``, ``tool_call_not_allowed``)
    ``default_allowed_tools`` and an item's (or turn's) ``allowed_tools`` combine by ``allowed_tools_mode``:
    ``extend`` (the default) takes the union, ``replace`` the item list only; an absent list is empty, so
    nothing at all resolves to an empty allowlist (fail closed). Entries are trimmed, whitespace-only ones
    dropped, duplicates removed; matching is exact and case-sensitive.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.documents.evaluator_maps import allow_list, resolve_allowed_tools  # noqa: F401 - re-exported
from evalkit.evaluators.base import CONFIG_ERROR, OptionError, result_frame

if TYPE_CHECKING:
    import pandas as pd

#: Error code of a row whose tool-call evidence cannot decide the verdict.
INDETERMINATE = "toolCallEvidenceIndeterminate"
THRESHOLD = 1.0
TOOL_PREFIX = "execute_tool "
#: Attribute names holding a tool span's tool name, first non-blank one wins (as in ``evalkit.spans``).
TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
PLUGIN_ATTRIBUTE = "evalkit.tool.plugin"
FUNCTION_ATTRIBUTE = "evalkit.tool.function"
HTTP_STATUS_KEYS = ("http.response.status_code", "http.status_code")
_SEPARATORS = ("_", ".")
_OTLP_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_SPAN_STATUS_HTTP = {"UNSET": 200, "OK": 200, "ERROR": 500}
_SEQUENCES = (list, tuple, np.ndarray)

Identity = tuple["str | None", "str | None"]


# ------------------------------------------------------------------------------------------------------------
# Small helpers


def _absent(value: Any) -> bool:
    """None or a float NaN (what an empty DataFrame cell reads as)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _name(value: Any) -> str | None:
    """A usable identity part: a non-blank string, as is; anything else is unknown (None)."""
    return value if isinstance(value, str) and value.strip() else None


def _int(value: Any) -> int | None:
    """An integer status from an int, an integral float or a digit string; otherwise None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _succeeded(status: int | None) -> bool:
    return status is not None and 200 <= status <= 299


def _complete(identity: Identity) -> bool:
    return identity[0] is not None and identity[1] is not None


def _compatible(partial: Identity, identity: Identity) -> bool:
    """Whether an entry with unknown parts (None) could be ``identity``."""
    return (partial[0] is None or partial[0] == identity[0]) and (
        partial[1] is None or partial[1] == identity[1]
    )


def tool_identifier(plugin_name: str, function_name: str) -> str:
    """The upstream ``namespace_toolname`` identifier: ``github`` + ``orgs_get`` -> ``github_orgs_get``."""
    return f"{plugin_name}_{function_name}"


def _show(identity: Identity) -> str:
    plugin, function = identity
    if plugin is None and function is None:
        return "<unknown tool>"
    return tool_identifier(plugin or "<unknown plugin>", function or "<unknown function>")


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


# ------------------------------------------------------------------------------------------------------------
# Evidence from spans


def split_tool_name(name: str | None) -> Identity:
    """Split a ``namespace_toolname`` tool name at its first ``_`` or ``.`` into (plugin, function).

    ``github_orgs_get`` -> (``github``, ``orgs_get``). Without a separator the plugin is unknown
    (``search`` -> (None, ``search``)); an empty side is unknown too (``x_`` -> (``x``, None)).
    """
    name = _name(name)
    if name is None:
        return (None, None)
    name = name.strip()
    cuts = [i for i in (name.find(sep) for sep in _SEPARATORS) if i >= 0]
    if not cuts:
        return (None, name)
    cut = min(cuts)
    return (_name(name[:cut]), _name(name[cut + 1 :]))


def _attributes(span: dict) -> dict:
    attributes = span.get("attributes")
    return attributes if isinstance(attributes, dict) else {}


def _first_name(attributes: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        found = _name(attributes.get(key))
        if found is not None:
            return found.strip()
    return None


def _is_tool_span(span: dict) -> bool:
    """A tool-call span: ``execute_tool ...`` by name, or a ``gen_ai.tool.name``, or Traceloop's tool kind."""
    name = span.get("name")
    attributes = _attributes(span)
    return (
        (isinstance(name, str) and name.startswith(TOOL_PREFIX))
        or bool(attributes.get("gen_ai.tool.name"))
        or attributes.get("traceloop.span.kind") == "tool"
    )


def span_tool_name(span: dict) -> str | None:
    """A tool span's tool name: the first of ``TOOL_NAME_KEYS``, else the span name sans ``execute_tool ``."""
    found = _first_name(_attributes(span), TOOL_NAME_KEYS)
    if found is not None:
        return found
    name = span.get("name")
    if not isinstance(name, str):
        return None
    return _name(name.removeprefix(TOOL_PREFIX).strip())


def span_tool_identity(span: dict) -> Identity:
    """(plugin_name, function_name) of a tool span, by the rule of the module docstring."""
    attributes = _attributes(span)
    plugin = _first_name(attributes, (PLUGIN_ATTRIBUTE,))
    function = _first_name(attributes, (FUNCTION_ATTRIBUTE,))
    if plugin is not None and function is not None:
        return (plugin, function)
    name = span_tool_name(span)
    if plugin is not None:
        rest = name
        if name is not None:
            for sep in _SEPARATORS:
                if name.startswith(plugin + sep) and len(name) > len(plugin) + 1:
                    rest = name[len(plugin) + 1 :]
                    break
        return (plugin, rest)
    if function is not None:
        if name is None or name == function:
            return (None, function)
        for sep in _SEPARATORS:
            if name.endswith(sep + function) and len(name) > len(function) + 1:
                return (name[: -len(function) - 1], function)
        return (split_tool_name(name)[0], function)
    return split_tool_name(name)


def _span_status(span: dict) -> int | None:
    """The execution's HTTP status: the HTTP attributes, else 200 for OK/UNSET and 500 for ERROR."""
    attributes = _attributes(span)
    for key in HTTP_STATUS_KEYS:
        status = _int(attributes.get(key))
        if status is not None:
            return status
    status = span.get("status")
    code = status.get("code", 0) if isinstance(status, dict) else status
    if code is None:
        code = 0
    if isinstance(code, Integral) and not isinstance(code, bool):
        code = _OTLP_STATUS.get(int(code))
    elif isinstance(code, str):
        code = code.strip().upper().removeprefix("STATUS_CODE_")
    else:
        code = None
    return _SPAN_STATUS_HTTP.get(code)


def _span_list(spans: Any) -> list[dict]:
    """A cell's span documents: a list (or array) of dicts, or a loaded span frame's ``document`` column."""
    if _absent(spans):
        return []
    columns = getattr(spans, "columns", None)
    if columns is not None:
        spans = spans["document"].tolist() if "document" in columns else []
    if not isinstance(spans, _SEQUENCES):
        return []
    return [s for s in spans if isinstance(s, dict)]


def _tool_spans(spans: Any) -> list[dict] | None:
    """The tool spans in start-time order (stable), each (traceId, spanId) once; None when no span at all."""
    docs = _span_list(spans)
    if not docs:
        return None
    seen: set[tuple] = set()
    tools = []
    for doc in docs:
        if not _is_tool_span(doc):
            continue
        key = (doc.get("traceId"), doc.get("spanId"))
        if key[1] is not None:
            if key in seen:
                continue
            seen.add(key)
        tools.append(doc)

    def start(doc: dict) -> tuple[bool, int]:
        value = _int(doc.get("startTimeUnixNano"))
        return (value is None, value or 0)

    tools.sort(key=start)
    return tools


def tool_calls_from_spans(spans: Any) -> dict | None:
    """The upstream ``diagnostics.tool_calls`` object built from a row's captured spans.

    None when there is no span at all (evidence unavailable); spans without a tool span give the
    authoritative ``{"selected_functions": [], "executions": []}``.
    """
    tools = _tool_spans(spans)
    if tools is None:
        return None
    selected: list[dict] = []
    seen: set[Identity] = set()
    executions = []
    for span in tools:
        plugin, function = span_tool_identity(span)
        if (plugin, function) not in seen:
            seen.add((plugin, function))
            selected.append({"plugin_name": plugin, "function_name": function})
        executions.append(
            {"plugin_name": plugin, "function_name": function, "response_status": _span_status(span)}
        )
    return {"selected_functions": selected, "executions": executions}


# ------------------------------------------------------------------------------------------------------------
# Evaluators


class _Indeterminate(Exception):
    """The evidence cannot decide the verdict; the message says why."""


def _evidence(tool_calls: Any, spans: Any) -> dict:
    """The row's ``tool_calls`` object, else the one derived from its spans; raise when there is neither."""
    if _absent(tool_calls):
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
    if _absent(value):
        why = evidence.get("evidence_error")
        suffix = f" ({why})" if isinstance(why, str) and why else ""
        raise _Indeterminate(f"Tool-call evidence unavailable: {field} is null or missing{suffix}.")
    if not isinstance(value, _SEQUENCES):
        raise _Indeterminate(f"diagnostics.tool_calls.{field} must be a list, got {type(value).__name__}.")
    return value


def _entry_identity(entry: Any) -> Identity:
    if not isinstance(entry, dict):
        return (None, None)
    return (_name(entry.get("plugin_name")), _name(entry.get("function_name")))


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

        entries = [
            _entry_identity(e) for e in _evidence_list(_evidence(tool_calls, spans), "selected_functions")
        ]
        known = list(dict.fromkeys(e for e in entries if _complete(e)))
        partial = [e for e in entries if not _complete(e)]
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
            shown = ", ".join(_show(p) for p in partial)
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
                + ", ".join(_show(u) for u in dict.fromkeys(unexpected))
                + " (allow_additional_calls is false)"
            )
        reason = "Tool selection failed: " + "; ".join(problems)
        if missing and partial:
            reason += (
                f"; the {_plural(len(partial), 'selected call')} with an unknown plugin or function name "
                "cannot account for them"
            )
        selected = ", ".join(_show(k) for k in known) or "none"
        return _verdict(False, f"{reason}. Selected: {selected}.")


class ToolCallExecution(_ToolCallEvaluator):
    """Did the expected tools run successfully, as many times as required? (see the module docstring)."""

    name = "ToolCallExecution"
    key = "toolCallExecution"

    def _judge(self, options: dict, tool_calls: Any, spans: Any) -> tuple:
        identities, labels = _expected_calls(options, self.name)
        required = Counter(identities)

        executions = _evidence_list(_evidence(tool_calls, spans), "executions")
        successes: Counter = Counter()
        other_statuses: dict[Identity, list] = {}
        uncertain: list[Identity] = []  # entries that could be one more success of some identity
        for entry in executions:
            identity = _entry_identity(entry)
            status = _int(entry.get("response_status")) if isinstance(entry, dict) else None
            if _complete(identity) and status is not None:
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
            shown = ", ".join(_show(u) for u in relevant)
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


# ------------------------------------------------------------------------------------------------------------
# Allowlists


def _captured_calls(evidence: Any) -> list[tuple[Identity, str | None]]:
    """(identity, name as captured) of every captured call: spans in call order, or a tool_calls object's
    ``selected_functions`` then ``executions``."""
    if isinstance(evidence, dict):
        calls = []
        for field in ("selected_functions", "executions"):
            entries = evidence.get(field)
            if isinstance(entries, _SEQUENCES):
                calls += [(_entry_identity(e), None) for e in entries]
        return calls
    return [(span_tool_identity(s), span_tool_name(s)) for s in _tool_spans(evidence) or []]


def tool_call_not_allowed(spans_or_tool_calls: Any, allowlist: Any) -> str | None:
    """The message naming the first captured tool call outside ``allowlist`` (for ``toolCallNotAllowed``).

    ``spans_or_tool_calls`` is a row's span list or its ``diagnostics.tool_calls`` object. A call is allowed
    when its ``plugin_function`` identifier, or (for a span) its tool name as captured, is in the trimmed
    allowlist, exactly. A call whose identity is incomplete and whose captured name is not listed cannot be
    shown to be allowed and is reported (fail closed). None when every call is allowed or nothing was
    captured; an absent allowlist allows nothing.
    """
    if _absent(spans_or_tool_calls):
        return None
    allowed = set(allow_list(allowlist, "allowed_tools"))
    listed = ", ".join(repr(a) for a in sorted(allowed)) if allowed else "empty"
    for identity, raw in _captured_calls(spans_or_tool_calls):
        identifier = tool_identifier(*identity) if _complete(identity) else None
        if identifier in allowed or raw in allowed:
            continue
        if identifier is not None:
            return f"Tool call '{identifier}' is not allowed (allowed_tools: {listed})."
        if raw is not None:
            return f"Tool call '{raw}' is not allowed (allowed_tools: {listed})."
        return (
            f"Tool call {_show(identity)} has an incomplete identity and cannot be matched against "
            f"allowed_tools ({listed})."
        )
    return None
