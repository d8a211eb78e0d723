"""LLM-as-judge span evaluators: AgentCore's built-ins (``Builtin.<Name>``) and custom ones, as one class.

An ``LLMSpanEvaluator`` is what AgentCore's ``CreateEvaluator`` LLM-as-judge configuration describes: a
level, instructions with placeholders (``{context}``, ``{assistant_turn}``, ``{tool_turn}``,
``{available_tools}``; which ones a level may use is in ``conversation.PLACEHOLDERS``), a rating scale
(labels with values) and model parameters. This module checks such a configuration, renders the judge
prompt for one target and reads the judge's answer into AgentCore's result fields; ``judge_runner`` makes
the calls.

The prompt: the system message states the rating scale (worst first) and the answer format, a JSON object
``{"explanation", "label"}``; the user message is the instructions with the placeholders filled in. The
answer's label must be one of the scale's (case and surrounding space ignored); its value is the scale's
value for it, in 0-1: categorical values as given, numerical values divided by the scale's largest value
(3 on a 1-5 scale is 0.6, as AgentCore normalises).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from evalkit.errors import EvaluatorConfigError
from evalkit.spans.lambdas.span_evaluator import LEVELS
from evalkit.spans.llm_judges.builtin_judges import BUILTIN_PARAMETERS, BUILTINS, builtin_instructions
from evalkit.spans.llm_judges.conversation import PLACEHOLDERS

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: Model parameters a configuration may set (AgentCore's ``inferenceConfig`` names, mapped to the OpenAI ones).
INFERENCE_PARAMETERS = {"maxTokens": "max_tokens", "temperature": "temperature", "topP": "top_p"}
OFF_SCALE = "judgeOutputOffScale"
UNPARSEABLE = "judgeOutputUnparseable"


class AnswerError(ValueError):
    """The judge's answer cannot be read (``code``: unparseable or off-scale)."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ScalePoint:
    """One rating: the label, its 0-1 value in results, the definition the judge reads, the value as written."""

    label: str
    value: float
    definition: str
    raw: float | None = None


class LLMSpanEvaluator:
    """An LLM-as-judge span evaluator: level, instructions, rating scale and model parameters.

    ``evaluator_id`` is the name for built-ins (``Builtin.Helpfulness``, as AgentCore reports them) and
    ``<name>-<10 characters>`` of the configuration's hash for custom ones. ``identity`` (part of each
    judgment's cache key) changes when anything that shapes the prompt changes.
    """

    is_llm = True

    def __init__(
        self,
        name: str,
        level: str,
        instructions: str,
        scale: list[ScalePoint],
        *,
        parameters: dict | None = None,
        source: str = "",
        builtin: bool = False,
    ):
        self.name = name
        self.level = level
        self.instructions = instructions
        self.scale = sorted(scale, key=lambda p: p.value)
        self.parameters = dict(parameters or {})
        self.path = None
        self.source = source or name
        self.used = tuple(p for p in PLACEHOLDERS[level] if "{" + p + "}" in instructions)
        digest = hashlib.sha256(
            json.dumps(
                [name, level, instructions, [vars(p) for p in self.scale], self.parameters], sort_keys=True
            ).encode()
        ).hexdigest()
        self.evaluator_id = name if builtin else f"{name}-{digest[:10]}"
        self.identity = f"agentcore-llm:{name}@{digest[:16]}"

    def __repr__(self) -> str:
        return f"LLMSpanEvaluator({self.name!r}, level={self.level!r})"

    @property
    def passing_labels(self) -> frozenset[str] | None:
        """The labels that count as passing: the top of the rating scale (every label at its highest value);
        None (the value rule) for a scale without values."""
        values = [p.value for p in self.scale if isinstance(p.value, (int, float))]
        if not values:
            return None
        return frozenset(p.label for p in self.scale if p.value == max(values))

    def with_level(self, level: str) -> LLMSpanEvaluator:
        if level != self.level:
            raise EvaluatorConfigError(
                f"{self.source}: '{self.name}' is a {self.level} evaluator; its placeholders are those of "
                f"{self.level}, so it cannot run at {level} (drop ':{level}')"
            )
        return self

    # the prompt ----------------------------------------------------------------------------------------

    def system_message(self) -> str:
        lines = ["# Rating scale"]
        for point in self.scale:
            shown = f" (score {point.raw:g})" if point.raw is not None else ""
            definition = f": {point.definition}" if point.definition else ""
            lines.append(f'- "{point.label}"{shown}{definition}')
        labels = ", ".join(f'"{p.label}"' for p in self.scale)
        return (
            "You are an impartial judge of an AI agent. Read the task in the user message and rate what it "
            "shows on the rating scale below, choosing exactly one label.\n\n"
            + "\n".join(lines)
            + "\n\nAnswer with one JSON object and nothing else: "
            '{"explanation": "<the reasons for your rating, in a few sentences>", '
            f'"label": "<exactly one of {labels}>"}}'
        )

    def messages(self, values: dict[str, str]) -> list[dict]:
        """The chat messages for one target, the placeholders replaced by ``values``."""
        text = PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), self.instructions)
        return [{"role": "system", "content": self.system_message()}, {"role": "user", "content": text}]

    # the answer ----------------------------------------------------------------------------------------

    def read_answer(self, content: str | None) -> dict:
        """``{"label", "value", "explanation"}`` from the judge's answer; ``AnswerError`` when unreadable."""
        answer = _json_object(content)
        label = answer.get("label", answer.get("score"))
        point = self._point(label)
        if point is None:
            labels = ", ".join(p.label for p in self.scale)
            raise AnswerError(
                f"the judge answered {label!r}, which is not on the rating scale of {self.name} ({labels})",
                OFF_SCALE,
            )
        explanation = answer.get("explanation", answer.get("reasoning", answer.get("reason", "")))
        return {"label": point.label, "value": point.value, "explanation": str(explanation or "")}

    def _point(self, label: Any) -> ScalePoint | None:
        if isinstance(label, str):
            wanted = " ".join(label.split()).casefold()
            for point in self.scale:
                if point.label.casefold() == wanted:
                    return point
        if isinstance(label, (int, float)) and not isinstance(label, bool):
            for point in self.scale:
                if point.raw is not None and point.raw == label:
                    return point
        return None


def _json_object(content: str | None) -> dict:
    text = (content or "").strip()
    fenced = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    elif not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        text = text[start : end + 1] if 0 <= start < end else text
    try:
        answer = json.loads(text)
    except ValueError:
        raise AnswerError(
            f"could not parse the judge's answer as JSON: {(content or '')[:200]!r}", UNPARSEABLE
        ) from None
    if not isinstance(answer, dict):
        raise AnswerError(f"the judge answered {answer!r}, not a JSON object", UNPARSEABLE)
    return answer


# --- checking a configuration -----------------------------------------------------------------------------


def check_instructions(instructions: Any, level: str, where: str) -> str:
    """The instructions, checked: a non-empty string using at least one placeholder, all known at ``level``."""
    if not isinstance(instructions, str) or not instructions.strip():
        raise EvaluatorConfigError(f"{where}: 'instructions' must be a non-empty string")
    used = PLACEHOLDER.findall(instructions)
    allowed = PLACEHOLDERS[level]
    unknown = sorted({p for p in used if p not in allowed})
    if unknown:
        raise EvaluatorConfigError(
            f"{where}: placeholder(s) {', '.join('{' + p + '}' for p in unknown)} are not defined for "
            f"{level} evaluators (use {', '.join('{' + p + '}' for p in allowed)})"
        )
    if not used:
        raise EvaluatorConfigError(
            f"{where}: the instructions use no placeholder, so the judge would see no spans; add at least one "
            f"of {', '.join('{' + p + '}' for p in allowed)}"
        )
    return instructions


def check_level(level: Any, where: str) -> str:
    value = level.upper() if isinstance(level, str) else level
    if value not in LEVELS:
        raise EvaluatorConfigError(f"{where}: 'level' {level!r} is not one of {', '.join(LEVELS)}")
    return value


def check_scale(scale: Any, where: str) -> list[ScalePoint]:
    """AgentCore's ``ratingScale`` (``{"numerical": [...]}`` or ``{"categorical": [...]}``) as scale points."""
    if (
        not isinstance(scale, dict)
        or len(scale) != 1
        or next(iter(scale)) not in ("numerical", "categorical")
    ):
        raise EvaluatorConfigError(
            f"{where}: 'ratingScale' must be an object with one key, 'numerical' or 'categorical', holding a "
            'list of {"label", "value", "definition"}'
        )
    kind, entries = next(iter(scale.items()))
    if not isinstance(entries, list) or not entries:
        raise EvaluatorConfigError(f"{where}: the {kind} rating scale is empty; give at least two ratings")
    points = []
    for i, entry in enumerate(entries):
        at = f"{where}: ratingScale.{kind}[{i}]"
        if not isinstance(entry, dict):
            raise EvaluatorConfigError(f"{at} must be an object with 'label', 'value' and 'definition'")
        label, value = entry.get("label"), entry.get("value")
        if not isinstance(label, str) or not label.strip():
            raise EvaluatorConfigError(f"{at}: 'label' must be a non-empty string")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise EvaluatorConfigError(
                f"{at}: 'value' must be a number" + (" between 0 and 1" if kind == "categorical" else "")
            )
        if kind == "categorical" and not 0 <= value <= 1:
            raise EvaluatorConfigError(f"{at}: a categorical 'value' must be between 0 and 1, not {value}")
        if kind == "numerical" and value < 0:
            raise EvaluatorConfigError(f"{at}: a numerical 'value' must not be negative")
        points.append((label.strip(), float(value), str(entry.get("definition") or "")))
    labels = [p[0].casefold() for p in points]
    if len(set(labels)) != len(labels):
        raise EvaluatorConfigError(f"{where}: the rating scale gives a label twice")
    if len(points) < 2:
        raise EvaluatorConfigError(f"{where}: the rating scale has one rating; give at least two")
    if kind == "categorical":
        return [ScalePoint(label, value, definition) for label, value, definition in points]
    top = max(p[1] for p in points)
    if top <= 0:
        raise EvaluatorConfigError(f"{where}: the numerical rating scale needs a value above 0")
    return [
        ScalePoint(label, round(value / top, 6), definition, value) for label, value, definition in points
    ]


def check_parameters(config: Any, where: str) -> dict:
    """OpenAI model parameters from AgentCore's ``modelConfig.bedrockEvaluatorModelConfig.inferenceConfig``.

    The judge model itself is evalkit's configured one: ``modelId`` is accepted and not used.
    """
    if config is None:
        return {}
    inner = config.get("bedrockEvaluatorModelConfig", config) if isinstance(config, dict) else None
    inference = inner.get("inferenceConfig", {}) if isinstance(inner, dict) else None
    if not isinstance(inference, dict):
        raise EvaluatorConfigError(
            f'{where}: \'modelConfig\' must be {{"bedrockEvaluatorModelConfig": {{"modelId", '
            '"inferenceConfig": {"maxTokens", "temperature", "topP"}}}'
        )
    parameters = {}
    for key, value in inference.items():
        if key not in INFERENCE_PARAMETERS:
            raise EvaluatorConfigError(
                f"{where}: unknown inferenceConfig field '{key}' (known: {', '.join(INFERENCE_PARAMETERS)})"
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise EvaluatorConfigError(f"{where}: inferenceConfig.{key} must be a number")
        parameters[INFERENCE_PARAMETERS[key]] = value
    return parameters


# --- built-ins --------------------------------------------------------------------------------------------


def builtin_evaluator(spec: str) -> LLMSpanEvaluator:
    """The evaluator of ``Builtin.<Name>``; unknown names are a configuration error listing the thirteen."""
    name = spec[len("Builtin.") :]
    if name not in BUILTINS:
        known = ", ".join(BUILTINS)
        raise EvaluatorConfigError(f"'{spec}' is not an AgentCore built-in evaluator (built-ins: {known})")
    level, _, _, scale = BUILTINS[name]
    points = [ScalePoint(label, value, definition) for label, value, definition in scale]
    return LLMSpanEvaluator(
        spec,
        level,
        builtin_instructions(name),
        points,
        parameters=BUILTIN_PARAMETERS,
        source=f"built-in evaluator {spec}",
        builtin=True,
    )
