"""Custom LLM-as-judge span evaluators: ``custom-evaluators/<name>/<name>.json``, AgentCore's ``CreateEvaluator``
LLM-as-judge configuration as a file.

    {
      "level": "TRACE",
      "description": "optional text",
      "evaluatorConfig": {
        "llmAsAJudge": {
          "instructions": "Judge the answer ... {context} ... {assistant_turn}",
          "ratingScale": {"numerical": [{"value": 1, "label": "Poor", "definition": "..."}, ...]},
          "modelConfig": {"bedrockEvaluatorModelConfig": {"modelId": "...",
                          "inferenceConfig": {"maxTokens": 512, "temperature": 0.0}}}
        }
      }
    }

``evaluatorName`` (optional) must be the folder's name; ``evaluationLevel`` is accepted for ``level``. The
file is checked when it is loaded, each mistake reported with the file and the field: the level, the
instructions (a placeholder the level does not define, or none at all), the rating scale and the model
configuration as ``CreateEvaluator`` defines them (``judge_config``: a categorical rating has ``label`` and
``definition`` and no ``value``; an unknown key is refused by name). The judge model is evalkit's configured
one (``modelId`` is read and not used); ``inferenceConfig`` becomes the request's ``max_tokens`` /
``temperature`` / ``top_p`` / ``stop``. Without them evalkit uses temperature 0 and 1024 tokens.
``modelConfig`` may be left out (AgentCore requires it; evalkit has its own model).

``passingLabels`` (evalkit's, beside ``evaluatorConfig``; AgentCore has no such field): the labels of a
categorical scale that count as passing in ``--fail-under`` (default: the scale's last entry).
"""

from __future__ import annotations

from pathlib import Path

from evalkit.documents.json_input import JsonInputError, parse_json
from evalkit.errors import EvaluatorConfigError
from evalkit.spans.lambdas.span_evaluator import NAME_PATTERN
from evalkit.spans.llm_judges.builtin_judges import BUILTIN_PARAMETERS
from evalkit.spans.llm_judges.judge_config import check_model_config, check_scale
from evalkit.spans.llm_judges.llm_evaluator import LLMSpanEvaluator, check_instructions, check_level

TOP_LEVEL = {"evaluatorName", "description", "level", "evaluationLevel", "evaluatorConfig", "passingLabels"}
JUDGE_KEYS = ("instructions", "ratingScale", "modelConfig")


def load_llm_judge(name: str, path: Path) -> LLMSpanEvaluator:
    """The LLM-as-judge evaluator configured by ``path`` (``.../<name>/<name>.json``), checked."""
    where = str(path)
    try:
        config = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise EvaluatorConfigError(f"{where}: cannot read the evaluator configuration: {exc}") from None
    except JsonInputError as exc:
        found = exc.decode_error
        if found is None:
            raise EvaluatorConfigError(f"{where}: {exc}") from None
        raise EvaluatorConfigError(
            f"{where}: line {found.lineno}, column {found.colno}: not valid JSON ({found.msg})"
        ) from None
    return llm_judge_from_config(name, config, where)


def llm_judge_from_config(name: str, config: object, where: str) -> LLMSpanEvaluator:
    """An ``LLMSpanEvaluator`` from a ``CreateEvaluator``-shaped dict (``where`` names it in errors)."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise EvaluatorConfigError(
            f"{where}: evaluator name {name!r} is not valid: AgentCore names start with a letter and hold at "
            "most 48 letters, digits and underscores"
        )
    if not isinstance(config, dict):
        raise EvaluatorConfigError(
            f"{where}: expected a JSON object (AgentCore's CreateEvaluator configuration)"
        )
    unknown = sorted(set(config) - TOP_LEVEL)
    if unknown:
        raise EvaluatorConfigError(
            f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(TOP_LEVEL))})"
        )
    given = config.get("evaluatorName")
    if given is not None and given != name:
        raise EvaluatorConfigError(
            f"{where}: evaluatorName {given!r} differs from the folder's name {name!r}; rename one of them"
        )
    if "level" not in config and "evaluationLevel" not in config:
        raise EvaluatorConfigError(f"{where}: 'level' is missing (TRACE, TOOL_CALL or SESSION)")
    level = check_level(config.get("level", config.get("evaluationLevel")), where)
    body = config.get("evaluatorConfig")
    if isinstance(body, dict) and "codeBased" in body:
        raise EvaluatorConfigError(
            f"{where}: a code-based evaluator is a Python file: write {Path(where).with_suffix('.py').name} "
            "defining lambda_handler(event, context) instead"
        )
    judge = body.get("llmAsAJudge") if isinstance(body, dict) else None
    if not isinstance(judge, dict):
        raise EvaluatorConfigError(
            f"{where}: 'evaluatorConfig.llmAsAJudge' is missing: it holds 'instructions', 'ratingScale' and "
            "optionally 'modelConfig'"
        )
    unknown = sorted(set(judge) - set(JUDGE_KEYS))
    if unknown:
        raise EvaluatorConfigError(
            f"{where}: unknown field(s) {', '.join(map(repr, unknown))} in evaluatorConfig.llmAsAJudge "
            f"(known: {', '.join(JUDGE_KEYS)})"
        )
    instructions = check_instructions(
        judge.get("instructions"), level, f"{where}: evaluatorConfig.llmAsAJudge"
    )
    if "ratingScale" not in judge:
        raise EvaluatorConfigError(f"{where}: evaluatorConfig.llmAsAJudge.ratingScale is missing")
    kind, scale = check_scale(judge["ratingScale"], where)
    parameters = {**BUILTIN_PARAMETERS, **check_model_config(judge.get("modelConfig"), where)}
    passing = _passing_labels(config.get("passingLabels"), kind, scale, where)
    return LLMSpanEvaluator(
        name, level, instructions, scale, parameters=parameters, source=where, kind=kind, passing=passing
    )


def _passing_labels(given, kind: str, scale, where: str) -> list[str] | None:
    if given is None:
        return None
    if kind != "categorical":
        raise EvaluatorConfigError(
            f"{where}: 'passingLabels' is for categorical scales; on a numerical scale the top value passes"
        )
    labels = {p.label.casefold(): p.label for p in scale}
    if not isinstance(given, list) or not given or not all(isinstance(g, str) for g in given):
        raise EvaluatorConfigError(f"{where}: 'passingLabels' must be a non-empty list of the scale's labels")
    unknown = [g for g in given if g.strip().casefold() not in labels]
    if unknown:
        raise EvaluatorConfigError(
            f"{where}: passingLabels {', '.join(map(repr, unknown))} not on the rating scale "
            f"({', '.join(labels.values())})"
        )
    return [labels[g.strip().casefold()] for g in given]
