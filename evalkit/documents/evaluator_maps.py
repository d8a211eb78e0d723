"""What an eval document says each row should be evaluated with: evaluator maps and tool allowlists.

The built-in evaluator names and their output keys are the format's (upstream ``ScoreCollection``), so they
live here, below the evaluators that implement them. Resolution of a row's evaluator map follows the
upstream rules: no ``default_evaluators`` means the system defaults Relevance + Coherence; an item's map
under ``evaluators_mode: extend`` is merged by evaluator name (the item's entry replaces the default's entry
as a whole), under ``replace`` it is used alone.
"""

from __future__ import annotations

import math
import sys
from typing import Any

#: System defaults when a document has no ``default_evaluators``.
SYSTEM_DEFAULTS: dict[str, dict] = {"Relevance": {}, "Coherence": {}}

#: LLM-judged built-ins (1-5 scale) and their output keys.
LLM_BUILTINS = {
    "Relevance": "relevance",
    "Coherence": "coherence",
    "Groundedness": "groundedness",
    "Similarity": "similarity",
    "ToolCallAccuracy": "toolCallAccuracy",
}
#: Deterministic built-ins and their output keys.
DETERMINISTIC_BUILTINS = {
    "ExactMatch": "exactMatch",
    "PartialMatch": "partialMatch",
    "Citations": "citations",
    "RetrievalQuery": "retrievalQuery",
    "RetrievalResult": "retrievalResult",
    "ToolCallSelection": "toolCallSelection",
    "ToolCallExecution": "toolCallExecution",
}
BUILTIN_NAMES = {**LLM_BUILTINS, **DETERMINISTIC_BUILTINS}


def resolve_row_evaluators(defaults: dict | None, own: dict | None, mode: str = "extend") -> dict[str, Any]:
    """The evaluator map of one row. Rows without their own map share the defaults object."""
    base = SYSTEM_DEFAULTS if defaults is None else defaults
    if not own:
        return {} if mode == "replace" and own is not None else base
    if mode == "replace":
        return own
    return {**base, **own}


#: ``allowed_tools_mode`` values (upstream 1.11).
ALLOWED_TOOLS_MODES = ("extend", "replace")


def _is_sequence(value: Any) -> bool:
    """A list, a tuple or a numpy array. numpy is not imported for this: an array exists only once something
    else imported it, and ``evalkit run`` reads its document before numpy is imported (``load_ahead``)."""
    if isinstance(value, (list, tuple)):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def absent(value: Any) -> bool:
    """None or a float NaN (what an empty DataFrame cell reads as)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def allow_list(value: Any, field: str) -> list[str]:
    """The trimmed, non-blank entries of an allowlist field; ``ValueError`` naming the field otherwise."""
    if absent(value):
        return []
    if not _is_sequence(value):
        raise ValueError(f"{field} must be a list of tool identifiers, got {value!r}")
    entries = []
    for entry in value:
        if not isinstance(entry, str):
            raise ValueError(f"{field} entries must be strings, got {entry!r}")
        entry = entry.strip()
        if entry:
            entries.append(entry)
    return entries


def resolve_allowed_tools(
    default_allowed_tools: Any, allowed_tools: Any, mode: str | None = None
) -> list[str]:
    """The effective allowlist of an item or turn (upstream 1.11 rules).

    ``extend`` (the default mode) is the union of the defaults and the item list, ``replace`` the item list
    alone; an absent list counts as empty, so nothing at all gives ``[]`` (no tool call allowed). Entries are
    trimmed, whitespace-only entries dropped (they could never match), duplicates removed (first kept).
    Raises ``ValueError`` for an unknown mode or a list that is not a list of strings.
    """
    if absent(mode):
        mode = "extend"
    if mode not in ALLOWED_TOOLS_MODES:
        raise ValueError(f"allowed_tools_mode must be 'extend' or 'replace', got {mode!r}")
    own = allow_list(allowed_tools, "allowed_tools")
    if mode == "replace":
        return list(dict.fromkeys(own))
    return list(dict.fromkeys(allow_list(default_allowed_tools, "default_allowed_tools") + own))


#: Options evalkit reads in a seed form the upstream schema does not allow: (evaluator, option) whose value
#: may be one string (the seed's options table types it as ``string``) where upstream wants an array.
_STRING_OR_LIST_OPTIONS = (("RetrievalQuery", "includes"), ("RetrievalQuery", "excludes"))


def upstream_evaluator_map(evaluators: Any) -> Any:
    """The evaluator map as the upstream schema writes it: a one-string ``includes`` / ``excludes`` as a
    one-element list. Written results stay valid against upstream; the input map is not changed."""
    if not isinstance(evaluators, dict):
        return evaluators
    changed = None
    for name, option in _STRING_OR_LIST_OPTIONS:
        options = evaluators.get(name)
        if isinstance(options, dict) and isinstance(options.get(option), str):
            changed = changed if changed is not None else dict(evaluators)
            changed[name] = {**changed[name], option: [options[option]]}
    return evaluators if changed is None else changed
