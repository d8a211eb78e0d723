"""Which results of a span evaluator count as passing: its declared labels, else the value rule.

Labels are free-form, so a gate cannot guess them: ``NO_OUTPUT`` 1.0 or ``OUT_OF_ORDER`` 1.0 would pass a rule
that reads only the value. An evaluator therefore says which of its labels pass:

* a code-based (Lambda) evaluator with a module-level ``PASSING_LABELS`` (a list, tuple or set of label
  strings): a result passes when its label is one of them, whatever its value;
* an LLM-as-judge evaluator (``Builtin.<Name>``, custom ``.json``): the label(s) at the top of its rating
  scale (the highest value), e.g. ``Perfectly Correct``; ``Refusal``'s top label is ``Yes`` (AgentCore's
  1.0, refused);
* an evaluator that declares nothing: the value rule, a ``value`` of at least 1.0, or without a value a label
  ``PASS`` / ``PASSED`` / ``TRUE`` / ``YES`` (any case).

An error result never passes. ``--fail-under`` (``results.passing``), ``spans status``, the online alarms and
exports (the ``passed`` stored with each result), the Spark stream and document runs all use ``passes``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evalkit.errors import EvaluatorConfigError

PASS_VALUE = 1.0
#: Labels that pass an evaluator that declares none, when its result carries no value.
PASS_LIKE_LABELS = frozenset({"PASS", "PASSED", "TRUE", "YES"})
VALUE_RULE = f"value >= {PASS_VALUE:g} (or, without a value, a label PASS, PASSED, TRUE or YES)"


def declared_labels(module: Any, where: str) -> frozenset[str] | None:
    """The ``PASSING_LABELS`` of an evaluator module (None when it declares none); a malformed declaration is
    an ``EvaluatorConfigError`` naming ``where`` (the file) and the fix."""
    raw = getattr(module, "PASSING_LABELS", None)
    if raw is None:
        return None
    if isinstance(raw, str) or not isinstance(raw, (list, tuple, set, frozenset)):
        raise EvaluatorConfigError(
            f"{where}: PASSING_LABELS must be a list of label strings, e.g. PASSING_LABELS = ('PASS',); "
            f"found {type(raw).__name__}"
        )
    labels = [label for label in raw if isinstance(label, str) and label.strip()]
    if not labels or len(labels) != len(raw):
        raise EvaluatorConfigError(
            f"{where}: PASSING_LABELS must hold at least one non-empty label string, e.g. ('PASS',); "
            f"found {sorted(map(repr, raw))}"
        )
    return frozenset(labels)


def passes(entry: dict, labels: Iterable[str] | None = None) -> bool:
    """Whether one result entry passes: not an error, and its label in ``labels`` (when given) or, without
    labels, the value rule (``VALUE_RULE``)."""
    if "errorCode" in entry:
        return False
    if labels is not None:
        return entry.get("label") in labels
    value = entry.get("value")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value >= PASS_VALUE
    return str(entry.get("label", "")).strip().upper() in PASS_LIKE_LABELS


def passing_labels(evaluator: Any) -> frozenset[str] | None:
    """The labels that pass ``evaluator`` (None: the value rule)."""
    return getattr(evaluator, "passing_labels", None)


def rule_text(labels: Iterable[str] | None) -> str:
    """The rule in words, for summaries and results metadata."""
    if labels is None:
        return VALUE_RULE
    return "label " + " or ".join(sorted(labels))


def rules_by_id(evaluators: Iterable[Any]) -> dict[str, frozenset[str] | None]:
    """``{evaluatorId: passing labels or None}`` of ``evaluators`` (to judge results by their evaluator)."""
    return {e.evaluator_id: passing_labels(e) for e in evaluators}


def entry_passes(entry: dict, rules: dict[str, frozenset[str] | None]) -> bool:
    """``passes`` with the rule of the entry's evaluator (the value rule for an evaluator not in ``rules``)."""
    return passes(entry, rules.get(entry.get("evaluatorId")))
