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

from evalkit.documents.evaluator_maps import (  # noqa: F401 - re-exported: the registry's names
    BUILTIN_NAMES,
    DETERMINISTIC_BUILTINS,
    LLM_BUILTINS,
    SYSTEM_DEFAULTS,
    resolve_row_evaluators,
)
from evalkit.errors import EvaluatorConfigError

log = logging.getLogger("evalkit.registry")

_BUILTIN_BY_FOLDED = {name.casefold(): name for name in BUILTIN_NAMES}
#: Case-table columns a custom evaluator's output columns would overwrite.
RESERVED_NAMES = frozenset(
    "item turn thread prompt expected_response context response citations retrieval_executions spans "
    "evaluators extensions source thread_source status error_code error_message".split()
)
NAME_PATTERN = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")


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
    from evalkit.evaluators import custom

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
    from evalkit.evaluators.retrieval import RETRIEVAL_EVALUATORS
    from evalkit.evaluators.text import TEXT_EVALUATORS
    from evalkit.evaluators.toolcalls import TOOLCALL_EVALUATORS

    table = {**TEXT_EVALUATORS, **RETRIEVAL_EVALUATORS, **TOOLCALL_EVALUATORS}
    if name in table:
        return table[name]()
    if name in LLM_BUILTINS:
        from evalkit.evaluators.llm_judges import builtin_judge

        return builtin_judge(name)
    raise EvaluatorConfigError(
        f"The built-in evaluator '{name}' is not available in this version of evalkit yet; "
        "remove it from the evaluator map to run the others."
    )
