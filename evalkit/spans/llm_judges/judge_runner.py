"""Running LLM-as-judge span evaluators through evalkit's judge machinery.

``SpanJudges`` is the judge side of one run (or of one online receiver): the model configuration from the
environment (none is an ``EnvironmentConfigError``, exit 3, raised before any work), one ``JudgePool``
(adaptive concurrency, retries with backoff, per-call deadline), the judge cache and one shared client.
``evaluate_llm`` judges every target of an evaluator (each session, trace or tool-call span): it builds the
placeholder values from the spans (``conversation``), renders the prompt, sends all the calls through the
pool at once and reads each answer into AgentCore's result fields (``label``, ``value``, ``explanation``,
``tokenUsage``), or ``errorCode`` / ``errorMessage`` when the judge fails or answers off the scale.

A TRACE target without an assistant answer in any known form, and a target whose placeholders are all empty,
is an error entry (``emptyAgentResponse`` / ``nothingToJudge``) without a model call; so is a target of a
custom judge whose ground-truth placeholder has no reference input (``MissingReferenceInput``). Reference
inputs (``ground_truth``) fill the ground-truth placeholders, switch ``Builtin.Correctness`` /
``Builtin.GoalSuccessRate`` to their ground-truth form, are part of the cache key, and the fields not used are
listed in each result's ``ignoredReferenceInputFields``.
"""

from __future__ import annotations

import logging
import threading

from evalkit.errors import EnvironmentConfigError
from evalkit.judges.cache import JudgeCache, cache_key
from evalkit.judges.models import MISSING_JUDGE_MESSAGE, describe, judge_client, judge_config
from evalkit.judges.pool import Call, JudgeFailure, JudgePool
from evalkit.spans.lambdas.invocation import EXPLANATION_LIMIT
from evalkit.spans.lambdas.payload import SessionSpans
from evalkit.spans.lambdas.results import result_entry
from evalkit.spans.llm_judges.conversation import Conversation, conversation, placeholders
from evalkit.spans.llm_judges.ground_truth import (
    MISSING_REFERENCE,
    ground_truth,
    note_ignored,
    reference_values,
)
from evalkit.spans.llm_judges.llm_evaluator import PLACEHOLDER_FIELDS, AnswerError, LLMSpanEvaluator

log = logging.getLogger("evalkit.spans")

EMPTY_RESPONSE = "emptyAgentResponse"
NOTHING_TO_JUDGE = "nothingToJudge"


class SpanJudges:
    """The judge model, pool, cache and client shared by a run's LLM span evaluators; tokens spent."""

    def __init__(
        self,
        model_config: dict | None = None,
        *,
        pool: JudgePool | None = None,
        concurrency: int = 8,
        timeout: float = 120.0,
        cache: bool = True,
        what: str = "An LLM-as-judge span evaluator",
    ):
        config = model_config if model_config is not None else judge_config()
        if config is None:
            raise EnvironmentConfigError(MISSING_JUDGE_MESSAGE.format(what=what))
        self.model_config = config
        self.pool = pool or JudgePool(concurrency, timeout=timeout, cache=JudgeCache() if cache else None)
        self.tokens = {"prompt": 0, "completion": 0}
        self._client = None
        self._lock = threading.Lock()
        log.debug("span judges use %s", describe(config))

    def client(self):
        with self._lock:
            if self._client is None:
                self._client = judge_client(self.model_config, timeout=self.pool.timeout)
        return self._client

    def close(self) -> None:
        """Close the judge cache's database (the pool and the client need no closing)."""
        cache = self.pool.cache
        if cache is not None:
            cache.close()

    def model_identity(self) -> dict:
        """The model part of a cache key: where and what, never the key."""
        return {k: v for k, v in self.model_config.items() if "key" not in k.lower()}


def needs_judges(evaluators) -> list[str]:
    """The names of the LLM-as-judge evaluators among ``evaluators``."""
    return [e.name for e in evaluators if getattr(e, "is_llm", False)]


def evaluate_llm(
    evaluator: LLMSpanEvaluator,
    groups: list[SessionSpans],
    judges: SpanJudges,
    references: dict[str, str] | None = None,
) -> list[dict]:
    """One result entry per target of ``evaluator`` in ``groups``, in session then target order
    (``references``: ``payload.reference_groups``, the reference inputs of each session as JSON)."""
    entries: list[dict] = []
    calls: list[Call] = []
    positions: list[tuple[int, LLMSpanEvaluator]] = []
    model = judges.model_identity()
    references = references or {}
    for group in groups:
        conv: Conversation = conversation(group.id, group.docs)
        truth = ground_truth(references.get(group.id))
        last = conv.turns[-1].trace_id if conv.turns else None
        tool_names = [call.name for turn in conv.turns for call in turn.tool_calls]
        for trace_id, span_id in group.targets(evaluator.level):
            entry = result_entry(evaluator, group.id, trace_id, span_id)
            entries.append(entry)
            applying, given = truth.for_target(evaluator.level, trace_id, last)
            judge, used = _judge_for(evaluator, applying)
            note_ignored(entry, given, used)
            values = placeholders(conv, evaluator.level, trace_id, span_id)
            reference = reference_values(applying, tool_names)
            values.update(reference)
            problem = _missing_reference(judge, reference, group.id, trace_id) or _nothing_to_judge(
                judge, values, trace_id
            )
            if problem:
                entry["errorCode"], entry["errorMessage"] = problem
                continue
            messages = judge.messages(values)
            key = cache_key(
                evaluator=judge.identity,
                model=model,
                inputs={
                    "messages": messages,
                    "parameters": judge.parameters,
                    "reference": {k: reference.get(k) for k in judge.used if k in reference},
                },
            )
            calls.append(Call(run=_call(judges, judge, messages), key=key, identity=judge.identity))
            positions.append((len(entries) - 1, judge))

    def done(index: int, outcome) -> None:
        position, judge = positions[index]
        entry = entries[position]
        if outcome.error is not None:
            entry["errorCode"], entry["errorMessage"] = outcome.code or "evaluatorError", outcome.error
            return
        value = outcome.value or {}
        try:
            entry.update(judge.read_answer(value.get("content")))
        except AnswerError as exc:
            entry["errorCode"], entry["errorMessage"] = exc.code, str(exc)
            return
        entry["explanation"] = entry["explanation"][:EXPLANATION_LIMIT]
        entry["tokenUsage"] = value.get("tokenUsage") or {}

    identities = {call.identity for call in calls}
    before = {i: judges.pool.usage.of(i) for i in identities}
    judges.pool.run(calls, on_done=done)
    for identity in identities:  # every request's tokens (``judges.metering``), refused answers' too
        spent = judges.pool.usage.of(identity)
        judges.tokens["prompt"] += spent.prompt - before[identity].prompt
        judges.tokens["completion"] += spent.completion - before[identity].completion
    return entries


def _judge_for(evaluator: LLMSpanEvaluator, applying: dict) -> tuple[LLMSpanEvaluator, tuple[str, ...]]:
    """The evaluator to judge a target with (a built-in's ground-truth form when its field applies) and the
    reference fields it uses there."""
    if evaluator.reference is None:  # custom judges (their placeholders' fields) and built-ins without one
        return evaluator, evaluator.reference_fields
    field, ground_truth_form = evaluator.reference
    return (ground_truth_form, (field,)) if field in applying else (evaluator, ())


def _missing_reference(judge: LLMSpanEvaluator, reference: dict, session_id: str, trace_id) -> tuple | None:
    missing = [p for p in judge.used if p in PLACEHOLDER_FIELDS and p not in reference]
    if not missing:
        return None
    target = f"trace {trace_id} of session {session_id}" if trace_id else f"session {session_id}"
    fields = ", ".join(PLACEHOLDER_FIELDS[p] for p in missing)
    return (
        MISSING_REFERENCE,
        f"the instructions use {', '.join('{' + p + '}' for p in missing)} but the reference inputs give no "
        f"{fields} for {target}; pass them with --reference-inputs (evaluationReferenceInputs)",
    )


def _nothing_to_judge(evaluator: LLMSpanEvaluator, values: dict, trace_id) -> tuple[str, str] | None:
    if "assistant_turn" in evaluator.used and not values.get("assistant_turn", "").strip():
        return (
            EMPTY_RESPONSE,
            f"trace {trace_id} has no assistant answer in its spans (gen_ai.output.messages, gen_ai.choice, "
            "gen_ai.completion, output.value, ...); there is nothing to judge",
        )
    if not any(
        values.get(p, "").strip()
        for p in evaluator.used
        if p not in ("available_tools", "actual_tool_trajectory")
    ):
        return NOTHING_TO_JUDGE, "the spans hold no user prompt, tool call or answer for this target"
    return None


def _call(judges: SpanJudges, evaluator: LLMSpanEvaluator, messages: list[dict]):
    def run() -> dict:
        client, model = judges.client()
        reply = client.chat.completions.create(model=model, messages=messages, **evaluator.parameters)
        if not reply.choices:
            raise JudgeFailure("the judge returned no choices", "judgeOutputUnparseable")
        content = reply.choices[0].message.content
        # Unparseable and off-scale answers are errors, never cached: checked here, inside the call.
        try:
            evaluator.read_answer(content)
        except AnswerError as exc:
            raise JudgeFailure(str(exc), exc.code) from None
        usage = reply.usage
        prompt = getattr(usage, "prompt_tokens", 0) or 0
        completion = getattr(usage, "completion_tokens", 0) or 0
        return {
            "content": content,
            "tokenUsage": {
                "inputTokens": prompt,
                "outputTokens": completion,
                "totalTokens": prompt + completion,
            },
        }

    return run
