"""AgentCore's ``CreateEvaluator`` LLM-as-judge shapes, checked as the API defines them: the rating scale and the
model configuration.

The shapes are those of the botocore service model ``bedrock-agentcore-control`` (``LlmAsAJudgeEvaluatorConfig``,
``RatingScale``, ``NumericalScaleDefinition``, ``CategoricalScaleDefinition``, ``EvaluatorModelConfig``,
``BedrockEvaluatorModelConfig``, ``InferenceConfiguration``); ``tests/spans/data/agentcore_judge_shapes.json``
holds the parts of it these checks follow, and a test holds the two together.

* ``ratingScale`` is a union: exactly one of ``numerical`` (entries ``label``, ``value`` >= 0, ``definition``,
  all required) or ``categorical`` (entries ``label`` and ``definition``, no ``value``: the API has none).
  ``multiDimensional`` is refused (evalkit does not run several dimensions per judge yet). Any other key in an
  entry is refused by name, as the API's parameter validation would.
* ``modelConfig`` is a union: ``bedrockEvaluatorModelConfig`` (``modelId`` required, ``inferenceConfig``,
  ``additionalModelRequestFields``) or ``responsesEvaluatorModelConfig`` (``modelId``, ``maxOutputTokens``,
  ``temperature``, ``topP``). evalkit judges with its configured model, so ``modelId`` is read and not used;
  the rest becomes the OpenAI request's parameters: ``maxTokens`` / ``maxOutputTokens`` -> ``max_tokens``,
  ``temperature``, ``topP`` -> ``top_p``, ``stopSequences`` -> ``stop``, and ``additionalModelRequestFields``
  (model-specific fields, a JSON object) -> fields added to the request body (the openai client's
  ``extra_body``). Ranges are the API's: ``maxTokens`` >= 1, ``temperature`` and ``topP`` 0-1,
  ``stopSequences`` at most 2500 non-empty strings (OpenAI's own API takes at most 4; evalkit passes them as
  given, so the model server decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.errors import EvaluatorConfigError

SCALE_KINDS = ("numerical", "categorical")
NUMERICAL_KEYS = ("label", "value", "definition")
CATEGORICAL_KEYS = ("label", "definition")
LABEL_LIMIT = 100
MODEL_CONFIGS = ("bedrockEvaluatorModelConfig", "responsesEvaluatorModelConfig")
BEDROCK_KEYS = ("modelId", "inferenceConfig", "additionalModelRequestFields")
RESPONSES_KEYS = ("modelId", "maxOutputTokens", "temperature", "topP")
#: AgentCore's ``inferenceConfig`` names and the OpenAI request parameter each becomes.
INFERENCE_PARAMETERS = {
    "maxTokens": "max_tokens",
    "temperature": "temperature",
    "topP": "top_p",
    "stopSequences": "stop",
}
RESPONSES_PARAMETERS = {"maxOutputTokens": "max_tokens", "temperature": "temperature", "topP": "top_p"}
STOP_SEQUENCES_LIMIT = 2500


@dataclass(frozen=True)
class ScalePoint:
    """One rating: the label, its 0-1 value in results (None on a categorical scale, whose results carry the
    label only, as AgentCore's do), the definition the judge reads, the value as written."""

    label: str
    value: float | None
    definition: str
    raw: float | None = None


def check_scale(scale: Any, where: str) -> tuple[str, list[ScalePoint]]:
    """``(kind, points)`` of AgentCore's ``ratingScale``; numerical values divided by the largest one."""
    if isinstance(scale, dict) and "multiDimensional" in scale:
        raise EvaluatorConfigError(
            f"{where}: ratingScale.multiDimensional is not supported by evalkit: give one 'numerical' or "
            "'categorical' scale (one evaluator per dimension)"
        )
    if not isinstance(scale, dict) or len(scale) != 1 or next(iter(scale)) not in SCALE_KINDS:
        found = f" (found {', '.join(map(repr, scale))})" if isinstance(scale, dict) and scale else ""
        raise EvaluatorConfigError(
            f"{where}: 'ratingScale' must be an object with exactly one key, 'numerical' (entries label, value, "
            f"definition) or 'categorical' (entries label, definition){found}"
        )
    kind, entries = next(iter(scale.items()))
    if not isinstance(entries, list) or not entries:
        raise EvaluatorConfigError(f"{where}: the {kind} rating scale is empty; give at least two ratings")
    points = [_entry(kind, entry, f"{where}: ratingScale.{kind}[{i}]") for i, entry in enumerate(entries)]
    labels = [p.label.casefold() for p in points]
    if len(set(labels)) != len(labels):
        raise EvaluatorConfigError(f"{where}: the rating scale gives a label twice")
    if len(points) < 2:
        raise EvaluatorConfigError(f"{where}: the rating scale has one rating; give at least two")
    if kind == "categorical":
        return kind, points
    top = max(p.raw for p in points)
    if top <= 0:
        raise EvaluatorConfigError(f"{where}: the numerical rating scale needs a value above 0")
    return kind, [ScalePoint(p.label, round(p.raw / top, 6), p.definition, p.raw) for p in points]


def _entry(kind: str, entry: Any, at: str) -> ScalePoint:
    keys = NUMERICAL_KEYS if kind == "numerical" else CATEGORICAL_KEYS
    if not isinstance(entry, dict):
        raise EvaluatorConfigError(f"{at} must be an object with {', '.join(map(repr, keys))}")
    if kind == "categorical" and "value" in entry:
        raise EvaluatorConfigError(
            f"{at}: a categorical rating has no 'value' in AgentCore's CreateEvaluator (its results carry the "
            "label only): drop 'value', or make the scale 'numerical' to score with numbers"
        )
    unknown = sorted(set(entry) - set(keys))
    if unknown:
        raise EvaluatorConfigError(
            f"{at}: unknown field(s) {', '.join(map(repr, unknown))} (a {kind} rating has "
            f"{', '.join(map(repr, keys))})"
        )
    missing = [k for k in keys if k not in entry]
    if missing:
        raise EvaluatorConfigError(
            f"{at}: {', '.join(map(repr, missing))} missing (a {kind} rating needs all of {', '.join(keys)})"
        )
    label, definition = entry["label"], entry["definition"]
    if not isinstance(label, str) or not label.strip() or len(label) > LABEL_LIMIT:
        raise EvaluatorConfigError(
            f"{at}: 'label' must be a non-empty string of at most {LABEL_LIMIT} characters"
        )
    if not isinstance(definition, str):
        raise EvaluatorConfigError(f"{at}: 'definition' must be a string")
    if kind == "categorical":
        return ScalePoint(label.strip(), None, definition)
    value = entry["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EvaluatorConfigError(f"{at}: 'value' must be a number")
    if value < 0:
        raise EvaluatorConfigError(
            f"{at}: a numerical 'value' must not be negative (AgentCore's minimum is 0)"
        )
    return ScalePoint(label.strip(), float(value), definition, float(value))


def check_model_config(config: Any, where: str) -> dict:
    """The OpenAI request parameters of AgentCore's ``modelConfig`` (none when it is absent)."""
    if config is None:
        return {}
    if not isinstance(config, dict) or len(config) != 1 or next(iter(config)) not in MODEL_CONFIGS:
        found = f" (found {', '.join(map(repr, config))})" if isinstance(config, dict) and config else ""
        raise EvaluatorConfigError(
            f"{where}: 'modelConfig' must be an object with exactly one key, 'bedrockEvaluatorModelConfig' "
            f'({{"modelId", "inferenceConfig", "additionalModelRequestFields"}}) or '
            f"'responsesEvaluatorModelConfig'{found}"
        )
    kind, inner = next(iter(config.items()))
    at = f"{where}: modelConfig.{kind}"
    keys = BEDROCK_KEYS if kind == "bedrockEvaluatorModelConfig" else RESPONSES_KEYS
    if not isinstance(inner, dict):
        raise EvaluatorConfigError(f"{at} must be an object with {', '.join(map(repr, keys))}")
    unknown = sorted(set(inner) - set(keys))
    if unknown:
        raise EvaluatorConfigError(
            f"{at}: unknown field(s) {', '.join(map(repr, unknown))} (known: {', '.join(keys)})"
        )
    if not isinstance(inner.get("modelId"), str) or not inner["modelId"]:
        raise EvaluatorConfigError(
            f"{at}: 'modelId' is missing (AgentCore requires it; evalkit judges with its configured model "
            "and does not use it)"
        )
    if kind == "responsesEvaluatorModelConfig":
        return _numbers({k: v for k, v in inner.items() if k != "modelId"}, RESPONSES_PARAMETERS, at)
    parameters = {}
    if "inferenceConfig" in inner:
        inference = inner["inferenceConfig"]
        if not isinstance(inference, dict):
            raise EvaluatorConfigError(f"{at}.inferenceConfig must be an object")
        unknown = sorted(set(inference) - set(INFERENCE_PARAMETERS))
        if unknown:
            raise EvaluatorConfigError(
                f"{at}: unknown inferenceConfig field(s) {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(INFERENCE_PARAMETERS)})"
            )
        stops = inference.get("stopSequences")
        numbers = {k: v for k, v in inference.items() if k != "stopSequences"}
        parameters.update(_numbers(numbers, INFERENCE_PARAMETERS, f"{at}.inferenceConfig"))
        if stops is not None:
            parameters["stop"] = _stop_sequences(stops, f"{at}.inferenceConfig.stopSequences")
    extra = inner.get("additionalModelRequestFields")
    if extra is not None:
        if not isinstance(extra, dict):
            raise EvaluatorConfigError(f"{at}.additionalModelRequestFields must be a JSON object")
        clash = sorted(set(extra) & {"model", "messages", *parameters})
        if clash:
            raise EvaluatorConfigError(
                f"{at}.additionalModelRequestFields sets {', '.join(map(repr, clash))}, which evalkit sets "
                "itself (from the judge model, the prompt or inferenceConfig); remove it there"
            )
        parameters["extra_body"] = extra
    return parameters


def _numbers(values: dict, names: dict[str, str], at: str) -> dict:
    parameters = {}
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise EvaluatorConfigError(f"{at}.{key} must be a number")
        if key in ("maxTokens", "maxOutputTokens") and (value < 1 or value != int(value)):
            raise EvaluatorConfigError(f"{at}.{key} must be a whole number of at least 1, not {value}")
        if key in ("temperature", "topP") and not 0 <= value <= 1:
            raise EvaluatorConfigError(f"{at}.{key} must be between 0 and 1 (AgentCore's range), not {value}")
        parameters[names[key]] = int(value) if names[key] == "max_tokens" else value
    return parameters


def _stop_sequences(stops: Any, at: str) -> list[str]:
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise EvaluatorConfigError(f"{at} must be a list of non-empty strings")
    if len(stops) > STOP_SEQUENCES_LIMIT:
        raise EvaluatorConfigError(
            f"{at}: {len(stops)} sequences; AgentCore takes at most {STOP_SEQUENCES_LIMIT}"
        )
    return list(stops)
