"""LLM-as-judge span evaluators: AgentCore's built-ins (``Builtin.<Name>``) and custom ones, as one class.

An ``LLMSpanEvaluator`` is what AgentCore's ``CreateEvaluator`` LLM-as-judge configuration describes: a
level, instructions with placeholders (``{context}``, ``{assistant_turn}``, ``{tool_turn}``,
``{available_tools}`` and the ground-truth ones, ``{expected_response}``, ``{assertions}``,
``{expected_tool_trajectory}``, ``{actual_tool_trajectory}``; which ones a level may use is in
``conversation.PLACEHOLDERS``), a rating scale and model parameters (both checked by ``judge_config``). This
module renders the judge prompt for one target and reads the judge's answer into AgentCore's result fields;
``judge_runner`` makes the calls.

The prompt: the system message states the rating scale (worst first) and the answer format, a JSON object
``{"explanation", "label"}``; the user message is the instructions with the placeholders filled in. The
answer's label must be one of the scale's (case and surrounding space ignored). On a numerical scale the
result's ``value`` is the label's value divided by the scale's largest (3 on a 1-5 scale is 0.6); on a
categorical scale the result carries the ``label`` and no ``value``, as AgentCore's Evaluate API defines it
("This field is not allowed for categorical scales").

Passing (evalkit's choice, the API is silent): on a numerical scale the labels whose value is the top one
(value 1.0) pass; on a categorical scale the labels of the file's ``passingLabels`` (an evalkit field beside
``evaluatorConfig``), or without it the scale's last entry, since scales are written worst first as
AgentCore's own built-in scales are. ``passing_labels`` holds them.

``Builtin.Correctness`` and ``Builtin.GoalSuccessRate`` have a ground-truth form (``reference``): used for a
target whose reference inputs give ``expectedResponse`` / ``assertions``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from evalkit.errors import EvaluatorConfigError
from evalkit.judges.strict_answers import DuplicateKey, loads
from evalkit.spans.lambdas.span_evaluator import LEVELS
from evalkit.spans.llm_judges.builtin_judges import (
    BUILTIN_PARAMETERS,
    BUILTINS,
    REFERENCE_BUILTINS,
    builtin_instructions,
)
from evalkit.spans.llm_judges.conversation import PLACEHOLDERS
from evalkit.spans.llm_judges.judge_config import ScalePoint

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: The reference input field each ground-truth placeholder reads (``actual_tool_trajectory`` reads the spans).
PLACEHOLDER_FIELDS = {
    "expected_response": "expectedResponse",
    "assertions": "assertions",
    "expected_tool_trajectory": "expectedTrajectory",
}
OFF_SCALE = "judgeOutputOffScale"
UNPARSEABLE = "judgeOutputUnparseable"


class AnswerError(ValueError):
    """The judge's answer cannot be read (``code``: unparseable or off-scale)."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


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
        kind: str = "numerical",
        passing: list[str] | None = None,
    ):
        self.name = name
        self.level = level
        self.instructions = instructions
        self.kind = kind
        self.scale = list(scale) if kind == "categorical" else sorted(scale, key=lambda p: p.value)
        self.parameters = dict(parameters or {})
        self.path = None
        self.source = source or name
        self.used = tuple(p for p in PLACEHOLDERS[level] if "{" + p + "}" in instructions)
        #: The reference input fields this evaluator reads (the rest given are ``ignoredReferenceInputFields``).
        self.reference_fields = tuple(PLACEHOLDER_FIELDS[p] for p in self.used if p in PLACEHOLDER_FIELDS)
        #: ``(field, evaluator)``: the ground-truth form used when a target's references give ``field``.
        self.reference: tuple[str, LLMSpanEvaluator] | None = None
        if kind == "categorical":
            self.passing_labels = frozenset(passing) if passing else frozenset({self.scale[-1].label})
        else:  # the top of the scale (values are normalised to 0-1)
            self.passing_labels = frozenset(p.label for p in self.scale if p.value >= 1.0)
        digest = hashlib.sha256(
            json.dumps(
                [name, level, instructions, [vars(p) for p in self.scale], self.parameters, kind],
                sort_keys=True,
            ).encode()
        ).hexdigest()
        self.evaluator_id = name if builtin else f"{name}-{digest[:10]}"
        self.identity = f"agentcore-llm:{name}@{digest[:16]}"

    def __repr__(self) -> str:
        return f"LLMSpanEvaluator({self.name!r}, level={self.level!r})"

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
        label = answer.get("label", answer.get("score", answer.get("verdict")))
        point = self._point(label)
        if point is None:
            labels = ", ".join(p.label for p in self.scale)
            raise AnswerError(
                f"the judge answered {label!r}, which is not on the rating scale of {self.name} ({labels})",
                OFF_SCALE,
            )
        explanation = answer.get("explanation", answer.get("reasoning", answer.get("reason", "")))
        if point.value is None:  # categorical: the label only, as AgentCore reports it
            return {"label": point.label, "explanation": str(explanation or "")}
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
        answer = loads(text)
    except DuplicateKey as exc:
        raise AnswerError(
            f"could not parse the judge's answer: it names {exc.key!r} more than once: {(content or '')[:200]!r}",
            UNPARSEABLE,
        ) from None
    except ValueError:
        raise AnswerError(
            f"could not parse the judge's answer as JSON: {(content or '')[:200]!r}", UNPARSEABLE
        ) from None
    if not isinstance(answer, dict):
        raise AnswerError(f"the judge answered {answer!r}, not a JSON object", UNPARSEABLE)
    return answer


# --- checking a configuration (the scale and model: ``judge_config``) ---------------------------------------


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


# --- built-ins --------------------------------------------------------------------------------------------


def builtin_evaluator(spec: str, known: tuple[str, ...] = ()) -> LLMSpanEvaluator:
    """The evaluator of ``Builtin.<Name>``; unknown names are a configuration error listing the built-ins
    (``known``: other built-in names to list, the programmatic ones)."""
    name = spec[len("Builtin.") :]
    if name not in BUILTINS:
        names = ", ".join([*BUILTINS, *(k[len("Builtin.") :] for k in known)])
        raise EvaluatorConfigError(f"'{spec}' is not an AgentCore built-in evaluator (built-ins: {names})")
    evaluator = _builtin(spec, BUILTINS[name][0], builtin_instructions(name), BUILTINS[name][3])
    if name in REFERENCE_BUILTINS:
        field, _, _, scale = REFERENCE_BUILTINS[name]
        variant = _builtin(spec, evaluator.level, builtin_instructions(name, reference=True), scale)
        evaluator.reference = (field, variant)
        evaluator.reference_fields = (field,)
        # Results carry the built-in's name whichever form judged them: both forms' top labels pass.
        evaluator.passing_labels = evaluator.passing_labels | variant.passing_labels
    return evaluator


def _builtin(spec: str, level: str, instructions: str, scale) -> LLMSpanEvaluator:
    return LLMSpanEvaluator(
        spec,
        level,
        instructions,
        [ScalePoint(label, value, definition) for label, value, definition in scale],
        parameters=BUILTIN_PARAMETERS,
        source=f"built-in evaluator {spec}",
        builtin=True,
    )
