"""Evaluator names: built-ins, custom discovery in ``custom-evaluators/``, name rules, and resolution.

Resolution of a row's evaluator map follows the upstream rules: no ``default_evaluators`` means the system
defaults Relevance + Coherence; an item's map under ``evaluators_mode: extend`` is merged by evaluator name
(the item's entry replaces the default's entry as a whole), under ``replace`` it is used alone.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

from ..errors import EvaluatorConfigError

log = logging.getLogger("evalkit.registry")

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
_BUILTIN_BY_FOLDED = {name.casefold(): name for name in BUILTIN_NAMES}
#: Case-table columns a custom evaluator's output columns would overwrite.
RESERVED_NAMES = frozenset(
    "item turn thread prompt expected_response context response citations retrieval_executions spans "
    "evaluators extensions source thread_source status error_code error_message".split()
)
NAME_PATTERN = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")


def resolve_row_evaluators(defaults: dict | None, own: dict | None, mode: str = "extend") -> dict[str, Any]:
    """The evaluator map of one row. Rows without their own map share the defaults object."""
    base = SYSTEM_DEFAULTS if defaults is None else defaults
    if not own:
        return {} if mode == "replace" and own is not None else base
    if mode == "replace":
        return own
    return {**base, **own}


def default_custom_dir() -> Path:
    """``<project>/custom-evaluators``, where the project is the current directory."""
    return Path(os.getcwd()) / "custom-evaluators"


def builtin_collision(name: str) -> str | None:
    """The built-in name that ``name`` collides with case-insensitively (but not exactly), if any."""
    builtin = _BUILTIN_BY_FOLDED.get(name.casefold())
    return builtin if builtin is not None and builtin != name else None


def resolve_evaluators(names_where: dict[str, str], custom_dir: str | os.PathLike | None = None) -> dict:
    """Build one evaluator object per referenced name, finding every configuration problem at once.

    ``names_where`` maps each name to where it first appears (``items[3]``), for the messages.
    Raises ``EvaluatorConfigError`` (exit code 2) listing all problems.
    """
    from . import custom

    folder = Path(custom_dir) if custom_dir is not None else default_custom_dir()
    resolved: dict[str, Any] = {}
    problems: list[str] = []
    for name, where in names_where.items():
        try:
            resolved[name] = _resolve_one(name, where, folder, custom)
        except EvaluatorConfigError as exc:
            problems.append(str(exc))
    if problems:
        if len(problems) == 1:
            raise EvaluatorConfigError(problems[0])
        raise EvaluatorConfigError(f"{len(problems)} evaluator configuration problems:", problems)
    return resolved


def _resolve_one(name: str, where: str, folder: Path, custom) -> Any:
    if name in BUILTIN_NAMES:
        log.debug("evaluator %r (%s): built-in", name, where)
        return builtin(name)
    collision = builtin_collision(name)
    if collision:
        raise EvaluatorConfigError(
            f"Evaluator '{name}' ({where}) collides with the built-in evaluator '{collision}' "
            f"(names are compared case-insensitively). Write '{collision}' to use the built-in, or give "
            f"your custom evaluator a distinct name such as 'domain_{name.lower()}'."
        )
    if name in RESERVED_NAMES:
        raise EvaluatorConfigError(
            f"Evaluator name '{name}' ({where}) is reserved: the case table already has a column '{name}'. "
            f"Rename the custom evaluator (folder, file and references), e.g. to 'check_{name}'."
        )
    if not NAME_PATTERN.match(name):
        raise EvaluatorConfigError(
            f"Evaluator name '{name}' ({where}) is not valid: names start with a letter, followed by "
            "letters, digits or underscores."
        )
    return custom.load_custom(name, folder, where)


def builtin(name: str):
    """A fresh instance of the built-in evaluator ``name``."""
    from .retrieval import RETRIEVAL_EVALUATORS
    from .text import TEXT_EVALUATORS
    from .toolcalls import TOOLCALL_EVALUATORS

    table = {**TEXT_EVALUATORS, **RETRIEVAL_EVALUATORS, **TOOLCALL_EVALUATORS}
    if name in table:
        return table[name]()
    if name in LLM_BUILTINS:
        from .judges import builtin_judge

        return builtin_judge(name)
    raise EvaluatorConfigError(
        f"The built-in evaluator '{name}' is not available in this version of evalkit yet; "
        "remove it from the evaluator map to run the others."
    )
