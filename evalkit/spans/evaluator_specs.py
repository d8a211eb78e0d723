"""From a name on the command line (or in a list) to a span evaluator of the right kind.

* ``Builtin.<Name>`` (optionally ``:LEVEL``, which must be the built-in's level): one of AgentCore's
  thirteen LLM-as-judge built-ins (``llm_evaluator.builtin_evaluator``);
* ``<name>`` or ``<name>:LEVEL``: ``custom-evaluators/<name>/<name>.py`` (or ``lambda_function.py``, AWS's
  sample layout), a Lambda-style code-based evaluator (``span_evaluator.load_span_evaluator``), or
  ``custom-evaluators/<name>/<name>.json``, an LLM-as-judge configuration (``custom_llm_judges``; ``:LEVEL``
  must then be its level). A folder with both is an error.
* ``<name>[:LEVEL]@module.function``: a code-based evaluator whose handler is ``module.function`` (Lambda's
  handler setting, e.g. ``lambda_function.handler``), when it is not found without configuration.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.errors import EvaluatorConfigError
from evalkit.spans.lambdas.handler_location import SAMPLE_MODULE
from evalkit.spans.lambdas.span_evaluator import SpanEvaluator, load_span_evaluator
from evalkit.spans.llm_judges.custom_llm_judges import load_llm_judge
from evalkit.spans.llm_judges.llm_evaluator import LLMSpanEvaluator, builtin_evaluator

BUILTIN_PREFIX = "Builtin."
SAMPLE_FILE = f"{SAMPLE_MODULE}.py"


def resolve_span_evaluator(
    spec: str, custom_dir: str | os.PathLike | None = None
) -> SpanEvaluator | LLMSpanEvaluator:
    """The evaluator a ``NAME[:LEVEL][@module.function]`` spec names (see the module docstring)."""
    spec, at, handler = spec.partition("@")
    name, _, level = spec.partition(":")
    if at and (name.startswith(BUILTIN_PREFIX) or not handler):
        raise EvaluatorConfigError(
            f"span evaluator '{name}': '@{handler}' names a Lambda handler ('NAME@module.function'), which "
            + ("a built-in LLM judge has not" if handler else "is empty")
        )
    if name.startswith(BUILTIN_PREFIX):
        evaluator = builtin_evaluator(name)
        return evaluator.with_level(level.upper()) if level else evaluator
    root = Path(custom_dir) if custom_dir is not None else Path.cwd() / "custom-evaluators"
    config = root / name / f"{name}.json"
    if config.is_file() and not at:
        code = next(
            (c for c in (config.with_suffix(".py"), config.with_name(SAMPLE_FILE)) if c.is_file()), None
        )
        if code is not None:
            raise EvaluatorConfigError(
                f"span evaluator '{name}': {root / name} holds both {code.name} (code-based) and {config.name} "
                "(LLM-as-judge); keep one"
            )
        evaluator = load_llm_judge(name, config)
        return evaluator.with_level(level.upper()) if level else evaluator
    return load_span_evaluator(name, custom_dir, level=level or None, handler=handler or None)
