"""From a name on the command line (or in a list) to a span evaluator of the right kind.

* ``Builtin.<Name>`` (optionally ``:LEVEL``, which must be the built-in's level): one of AgentCore's
  thirteen LLM-as-judge built-ins (``llm_evaluator.builtin_evaluator``) or its three programmatic
  ``Builtin.Trajectory*Match`` (``trajectory_match``);
* ``<name>`` or ``<name>:LEVEL``: ``custom-evaluators/<name>/<name>.py`` (or ``lambda_function.py``, AWS's
  sample layout), a Lambda-style code-based evaluator (``span_evaluator.load_span_evaluator``), or
  ``custom-evaluators/<name>/<name>.json``, an LLM-as-judge configuration (``custom_llm_judges``; ``:LEVEL``
  must then be its level). A folder with both is an error.
* ``<name>[:LEVEL]@module.function``: a code-based evaluator whose handler is ``module.function`` (Lambda's
  handler setting, e.g. ``lambda_function.handler``), when it is not found without configuration.

Online (``spans serve``, ``spans stream``) there are no reference inputs: ``online_evaluator`` refuses the
evaluators that cannot run without them (the ``Builtin.Trajectory*Match``, and custom judges whose
instructions use ``{expected_response}``, ``{assertions}`` or ``{expected_tool_trajectory}``), as AgentCore's
online evaluation configurations take no ground truth.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.errors import EvaluatorConfigError
from evalkit.spans.lambdas.handler_location import SAMPLE_MODULE
from evalkit.spans.lambdas.span_evaluator import SpanEvaluator, check_name, load_span_evaluator
from evalkit.spans.llm_judges.custom_llm_judges import load_llm_judge
from evalkit.spans.llm_judges.llm_evaluator import PLACEHOLDER_FIELDS, LLMSpanEvaluator, builtin_evaluator
from evalkit.spans.llm_judges.trajectory_match import MODES, TrajectoryMatch

BUILTIN_PREFIX = "Builtin."
SAMPLE_FILE = f"{SAMPLE_MODULE}.py"


def resolve_span_evaluator(
    spec: str, custom_dir: str | os.PathLike | None = None
) -> SpanEvaluator | LLMSpanEvaluator | TrajectoryMatch:
    """The evaluator a ``NAME[:LEVEL][@module.function]`` spec names (see the module docstring)."""
    spec, at, handler = spec.partition("@")
    name, _, level = spec.partition(":")
    if at and (name.startswith(BUILTIN_PREFIX) or not handler):
        raise EvaluatorConfigError(
            f"span evaluator '{name}': '@{handler}' names a Lambda handler ('NAME@module.function'), which "
            + ("a built-in evaluator has not" if handler else "is empty")
        )
    if name in MODES:
        evaluator = TrajectoryMatch(name)
        return evaluator.with_level(level.upper()) if level else evaluator
    if name.startswith(BUILTIN_PREFIX):
        evaluator = builtin_evaluator(name, known=tuple(MODES))
        return evaluator.with_level(level.upper()) if level else evaluator
    check_name(name)  # before any file is looked for under it
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


def online_evaluator(spec: str, custom_dir: str | os.PathLike | None = None):
    """``resolve_span_evaluator`` for online evaluation: evaluators that need reference inputs are refused."""
    evaluator = resolve_span_evaluator(spec, custom_dir)
    if isinstance(evaluator, TrajectoryMatch):
        raise EvaluatorConfigError(
            f"{evaluator.name} compares a session with its expectedTrajectory (ground truth); online "
            "evaluation has no reference inputs: run it with spans eval --reference-inputs FILE"
        )
    needs = [p for p in getattr(evaluator, "used", ()) if p in PLACEHOLDER_FIELDS]
    if needs:
        raise EvaluatorConfigError(
            f"span evaluator '{evaluator.name}': its instructions use {', '.join('{' + p + '}' for p in needs)} "
            "(ground truth); online evaluation has no reference inputs: run it with spans eval "
            "--reference-inputs FILE"
        )
    return evaluator
