"""Run AgentCore-style code-based evaluators (AWS Lambda handlers) locally over a span frame.

A span evaluator is a folder ``custom-evaluators/<name>/`` whose ``<name>.py`` or ``lambda_function.py``
defines ``lambda_handler(event, context)`` or ``handler`` (or the ``module.function`` configured, as on
Lambda): the same file deploys to AWS Lambda unchanged, because evalkit imports nothing into it and calls
it exactly as Amazon Bedrock AgentCore Evaluations does. That is the point: a check developed and gated in CI
with evalkit is the check that later scores production traffic, with no adapter to drift.

``evaluate_spans`` makes one call per session, trace or tool-call span and puts together what the service
does, each part in its own module:

* ``span_evaluator``: the handler and its level, loaded from ``custom-evaluators``;
* ``payload``: the payload (``sessionSpans``, reference inputs, target) and the 6 MB limit with truncation;
* ``invocation``: the call with the 300 s Lambda time limit (per call, configurable) and the response
  contract (``label``, ``value``, ``explanation`` kept to 2048 characters, or ``errorCode`` and
  ``errorMessage``);
* ``evaluator_workers``: each evaluator loaded from a file runs in a worker process, killed when a call
  overruns (``Timeout``) and replaced when it dies (``EvaluatorCrashed``);
* ``results``: the result entries of the Evaluate API, their table and pass count.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError
from evalkit.spans.evaluator_specs import resolve_span_evaluator
from evalkit.spans.lambdas.evaluator_workers import EvaluatorWorkers, can_isolate
from evalkit.spans.lambdas.invocation import DEFAULT_TIMEOUT, Caller, LambdaContext, TimedOut, call_fields
from evalkit.spans.lambdas.payload import (
    PAYLOAD_LIMIT,
    SessionSpans,
    describe_target,
    note_truncation,
    payload_head,
    payload_text,
    reference_groups,
    session_groups,
)
from evalkit.spans.lambdas.results import TIMEOUT, TOO_LARGE, result_entry
from evalkit.spans.lambdas.span_evaluator import SpanEvaluator
from evalkit.spans.llm_judges.ground_truth import check_reference_inputs
from evalkit.spans.llm_judges.judge_runner import SpanJudges, evaluate_llm, needs_judges
from evalkit.spans.llm_judges.llm_evaluator import LLMSpanEvaluator
from evalkit.spans.llm_judges.trajectory_match import TrajectoryMatch, evaluate_trajectory
from evalkit.spans.reading.loading import load

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("evalkit.spans")

#: AgentCore's limit on evaluators per Evaluate call and per online evaluation configuration.
MAX_EVALUATORS = 10


def evaluate_spans(
    spans: pd.DataFrame | str | os.PathLike,
    evaluators: Iterable[SpanEvaluator | LLMSpanEvaluator | str],
    *,
    session: str | Iterable[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    reference_inputs: list[dict] | None = None,
    custom_dir: str | os.PathLike | None = None,
    judges: SpanJudges | None = None,
    workers: EvaluatorWorkers | None = None,
    isolate: bool = True,
) -> list[dict]:
    """Call each evaluator's ``lambda_handler`` with the AgentCore payload, per session, trace or tool call.

    ``spans`` is a frame from ``load`` (or a path to load). ``evaluators`` are ``SpanEvaluator`` objects or
    names (``name`` or ``name:LEVEL``) found in ``custom_dir``. ``session`` limits the run to one or more
    session ids. ``reference_inputs`` are AgentCore reference inputs (``{"context": {"spanContext":
    {"sessionId", ...}}, "expectedResponse": ..., "assertions": ..., "expectedTrajectory": ...}``); each
    payload carries those of its session. Returns one result entry per call, evaluator by evaluator, shaped
    like the entries of the Evaluate API's ``evaluationResults``; a failed call is an error entry and never
    stops the run.

    ``Builtin.Trajectory*Match`` compare each session's tool calls with its reference inputs'
    ``expectedTrajectory`` (no model). LLM-as-judge evaluators (``Builtin.<Name>``, ``LLMSpanEvaluator``)
    read the reference inputs they use (``llm_judges.ground_truth``) and are judged through ``judges`` (a
    ``SpanJudges``: model, pool, cache); without it one is made from the environment, and no judge model
    configured is an ``EnvironmentConfigError`` before any work.

    Code-based evaluators loaded from files run in worker processes (``evaluator_workers``): a call past the
    timeout is killed (``Timeout``), a worker that dies gives ``EvaluatorCrashed``, and the run goes on.
    ``workers`` is a pool to reuse (the online receiver keeps one); without it the run has its own.
    ``isolate=False`` calls every handler in this process instead (on a watched thread that cannot be
    stopped): for a debugger's breakpoint in a handler, or to read what a handler kept in its module. Its
    module is then imported into this process too (after a worker imported it once to learn its level and
    passing labels, see ``span_evaluator``), so its top-level code runs here.
    """
    import pandas as pd

    resolved = _resolve(evaluators, custom_dir)
    llm_names = needs_judges(resolved)
    own_judges = bool(llm_names) and judges is None
    if own_judges:
        judges = SpanJudges(what=f"Span evaluator {llm_names[0]}")
    try:
        if not isinstance(spans, pd.DataFrame):
            spans = load(spans)
        if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0):
            raise EvalkitError(f"timeout must be a positive number of seconds, not {timeout!r}")
        groups = session_groups(spans, session)
        if reference_inputs is not None:
            check_reference_inputs(reference_inputs)
        references = reference_groups(reference_inputs)
    except BaseException:
        if own_judges:
            judges.close()
        raise
    try:
        return evaluate_groups(
            groups, resolved, timeout=timeout, references=references, judges=judges, workers=workers,
            isolate=isolate,
        )  # fmt: skip
    finally:
        if own_judges:
            judges.close()


def evaluate_groups(
    groups: list[SessionSpans],
    evaluators: list[SpanEvaluator | LLMSpanEvaluator],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    references: dict[str, str] | None = None,
    judges: SpanJudges | None = None,
    workers: EvaluatorWorkers | None = None,
    isolate: bool = True,
) -> list[dict]:
    """The calls of ``evaluate_spans`` over sessions already grouped (``payload.session_groups`` of a frame, or
    ``payload.session_spans`` of one session's documents, which the online receiver uses: no frame to build
    per session). ``evaluators`` are resolved; ``judges`` is required when one of them is an LLM judge;
    ``references`` are ``payload.reference_groups``."""
    if judges is None and needs_judges(evaluators):
        raise EvalkitError("LLM-as-judge span evaluators need a SpanJudges (judges=)")
    references = references or {}
    caller = Caller()
    own_workers = workers is None
    if own_workers:
        workers = EvaluatorWorkers()
    if isolate:
        workers.start(e for e in evaluators if isinstance(e, SpanEvaluator))
    results: list[dict] = []
    # Every payload is parsed afresh: with the span frame on the heap, the cyclic collector's full scans of it
    # would cost more than the calls (2.6 s instead of 7.8 s for 40,000 calls over 100,000 spans). Freezing
    # what exists now keeps it out of those scans; new objects, the handlers' included, are still collected.
    freeze = gc.isenabled() and gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        for evaluator in evaluators:
            started = time.perf_counter()
            before = len(results)
            if isinstance(evaluator, TrajectoryMatch):
                results.extend(evaluate_trajectory(evaluator, groups, references))
                continue
            if isinstance(evaluator, LLMSpanEvaluator):
                results.extend(evaluate_llm(evaluator, groups, judges, references))
                log.debug(
                    "%s: %d judgments in %.3f s",
                    evaluator.name,
                    len(results) - before,
                    time.perf_counter() - started,
                )
                continue
            head = payload_head(evaluator)
            for group in groups:
                refs = references.get(group.id, "[]")
                for trace_id, span_id in group.targets(evaluator.level):
                    results.append(
                        _evaluate_one(
                            evaluator,
                            head,
                            group,
                            trace_id,
                            span_id,
                            refs,
                            timeout,
                            caller,
                            workers if isolate else None,
                        )
                    )
            log.debug(
                "%s (%s): %d calls in %.3f s",
                evaluator.name,
                evaluator.level,
                len(results) - before,
                time.perf_counter() - started,
            )
    finally:
        caller.close()
        if own_workers:
            workers.close()
        if freeze:
            gc.unfreeze()
    return results


def _resolve(evaluators, custom_dir) -> list[SpanEvaluator | LLMSpanEvaluator]:
    if isinstance(evaluators, (str, SpanEvaluator, LLMSpanEvaluator, TrajectoryMatch)):
        evaluators = [evaluators]
    resolved = []
    seen: set[tuple[str, str]] = set()
    for item in evaluators:
        if isinstance(item, str):
            item = resolve_span_evaluator(item, custom_dir)
        elif not isinstance(item, (SpanEvaluator, LLMSpanEvaluator, TrajectoryMatch)):
            raise EvalkitError(
                f"evaluators must be SpanEvaluator or LLMSpanEvaluator objects or names, not "
                f"{type(item).__name__} (wrap a handler as SpanEvaluator(name, lambda_handler, level=...))"
            )
        key = (item.name, item.level)
        if key in seen:
            raise EvalkitError(f"span evaluator '{item.name}' is given twice at level {item.level}")
        seen.add(key)
        resolved.append(item)
    if not resolved:
        raise EvalkitError("no span evaluator given")
    return resolved


def check_evaluator_count(count: int) -> None:
    """AgentCore takes at most 10 evaluators per Evaluate call or online configuration; so do ``spans eval``
    and ``spans serve``. The Python API (``evaluate_spans``) has no limit: a notebook may compare more."""
    if count > MAX_EVALUATORS:
        raise EvalkitError(
            f"{count} span evaluators given: AgentCore takes at most {MAX_EVALUATORS} per evaluation "
            "(Evaluate call or online configuration); split them over several runs"
        )


def _evaluate_one(
    evaluator: SpanEvaluator,
    head: str,
    group: SessionSpans,
    trace_id: str | None,
    span_id: str | None,
    refs: str,
    timeout: float,
    caller: Caller,
    workers: EvaluatorWorkers | None,
) -> dict:
    entry = result_entry(evaluator, group.id, trace_id, span_id)
    text, dropped, total = payload_text(head, group, trace_id, span_id, refs)
    if text is None:
        entry["errorCode"] = TOO_LARGE
        entry["errorMessage"] = (
            f"the payload exceeds the {PAYLOAD_LIMIT // (1024 * 1024)} MB Lambda limit even with every span "
            "outside the evaluation target dropped; the evaluator was not called"
        )
        return entry
    started = time.perf_counter()
    isolated = workers is not None and can_isolate(evaluator)
    try:
        if isolated:
            fields = workers.call(evaluator, text, timeout, describe_target(group.id, trace_id, span_id))
        else:
            context = LambdaContext(evaluator.name, timeout)
            _, fields = caller(_in_thread(evaluator), json.loads(text), context, timeout)
    except TimedOut:
        fields = {
            "errorCode": TIMEOUT,
            "errorMessage": f"{getattr(evaluator, 'function', 'lambda_handler')} did not return within "
            f"{timeout:g} s (the Lambda time limit)"
            + ("; its worker process was killed" if isolated else ""),
        }
    log.debug("%s %s/%s: %.4f s", evaluator.name, trace_id, span_id, time.perf_counter() - started)
    entry.update(fields)
    return note_truncation(entry, dropped, total)


def _in_thread(evaluator: SpanEvaluator):
    function = getattr(evaluator, "function", "lambda_handler")
    handler = evaluator.handler  # loaded from a file: imported into this process now, not on the thread
    return lambda event, context: call_fields(handler, event, context, evaluator.path, function)
