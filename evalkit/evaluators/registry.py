"""Evaluator objects by name: the built-ins' classes, custom evaluators found in ``custom-evaluators/``.

``resolve_evaluators`` builds one object per name a document references and reports every configuration
problem at once (an unknown name, a collision with a built-in, a reserved or malformed name, a custom
evaluator that fails to load). The top of this package: it imports the evaluators, none of them imports it.
Which evaluators a row asks for is resolved in ``evalkit.documents.evaluator_maps``; the name rules are in
``names``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from evalkit.documents.evaluator_maps import BUILTIN_NAMES, LLM_BUILTINS
from evalkit.documents.json_input import quote
from evalkit.errors import EvaluatorConfigError
from evalkit.evaluators.custom.loading import load_custom
from evalkit.evaluators.custom.span_docs import SpanDocumentEvaluator
from evalkit.evaluators.custom.time_limit import DEFAULT_TIMEOUT
from evalkit.evaluators.deterministic.citations import Citations
from evalkit.evaluators.deterministic.matching import ExactMatch, PartialMatch
from evalkit.evaluators.deterministic.retrieval import RETRIEVAL_EVALUATORS
from evalkit.evaluators.deterministic.toolcalls import TOOLCALL_EVALUATORS
from evalkit.evaluators.llm_judges.builtin import builtin_judge
from evalkit.evaluators.names import (
    NAME_PATTERN,
    RESERVED_NAMES,
    builtin_collision,
    default_custom_dir,
    name_too_long,
)

log = logging.getLogger("evalkit.registry")

#: Prefix of AgentCore's built-in LLM-as-judge span evaluators (``Builtin.Helpfulness``).
SPAN_BUILTIN_PREFIX = "Builtin."

#: The built-in string evaluators by document name.
TEXT_EVALUATORS = {"ExactMatch": ExactMatch, "PartialMatch": PartialMatch, "Citations": Citations}
#: Every deterministic built-in by document name.
_DETERMINISTIC = {**TEXT_EVALUATORS, **RETRIEVAL_EVALUATORS, **TOOLCALL_EVALUATORS}


def resolve_evaluators(
    names_where: dict[str, str],
    custom_dir: str | os.PathLike | None = None,
    import_timeout: float | None = DEFAULT_TIMEOUT,
) -> dict:
    """Build one evaluator object per referenced name, finding every configuration problem at once.

    A custom evaluator's module gets ``import_timeout`` seconds to import (``None``: no limit); one that takes
    longer resolves to an evaluator whose rows are load errors (``custom.import_limit``).

    ``names_where`` maps each name to where it first appears (``items[3]``), for the messages.
    Raises ``EvaluatorConfigError`` (exit code 2) listing all problems.
    """
    folder = Path(custom_dir) if custom_dir is not None else default_custom_dir()
    resolved: dict[str, Any] = {}
    problems: list[str] = []
    for name, where in names_where.items():
        try:
            resolved[name] = _resolve_one(name, where, folder, import_timeout)
        except EvaluatorConfigError as exc:
            problems.append(str(exc))
    if problems:
        if len(problems) == 1:
            raise EvaluatorConfigError(problems[0])
        raise EvaluatorConfigError(f"{len(problems)} evaluator configuration problems:", problems)
    return resolved


def _resolve_one(name: str, where: str, folder: Path, import_timeout: float | None = DEFAULT_TIMEOUT) -> Any:
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
    if name.startswith(SPAN_BUILTIN_PREFIX):
        # AgentCore's LLM-as-judge built-ins, judged on the row's captured spans. Lazy: the span runtime costs
        # ~0.1 s of imports, paid only when a document names one.
        from evalkit.spans.llm_judges.llm_evaluator import builtin_evaluator

        log.debug("evaluator %r (%s): AgentCore built-in span judge", name, where)
        return SpanDocumentEvaluator(builtin_evaluator(name))
    if name in RESERVED_NAMES:
        raise EvaluatorConfigError(
            f"Evaluator name '{name}' ({where}) is reserved: the case table already has a column '{name}'. "
            f"Rename the custom evaluator (folder, file and references), e.g. to 'check_{name}'."
        )
    if not NAME_PATTERN.match(name):
        raise EvaluatorConfigError(
            f"Evaluator name {quote(name)} ({where}) is not valid: names start with a letter, followed by "
            "letters, digits or underscores."
        )
    too_long = name_too_long(name)
    if too_long:
        raise EvaluatorConfigError(f"{where}: {too_long}.")
    return load_custom(name, folder, where, import_timeout)


def builtin(name: str):
    """A fresh instance of the built-in evaluator ``name``."""
    if name in _DETERMINISTIC:
        return _DETERMINISTIC[name]()
    if name in LLM_BUILTINS:
        return builtin_judge(name)
    raise EvaluatorConfigError(
        f"The built-in evaluator '{name}' is not available in this version of evalkit yet; "
        "remove it from the evaluator map to run the others."
    )
