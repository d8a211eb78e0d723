"""Evaluating one complete session of the online receiver and storing its results.

A sampled session whose spans satisfy the filters is scored by the span evaluators (Lambda-style code-based
ones and LLM-as-judge ones such as ``Builtin.Helpfulness``, through the receiver's ``SpanJudges``) with
``evaluate_groups``, the calls of ``evaluate_spans`` made on the session's documents (``payload.session_spans``:
no span frame per session), exactly as ``evalkit spans eval`` would score it offline; its results (each marked
``passed`` and tagged with the session's ``service.name``) and the ``evaluated`` state are committed together,
so a crash never evaluates a session twice and never loses one. Other sessions are marked ``skipped``.

A session whose evaluation fails (any exception while its documents are read, filtered or scored: JSON text
nested thousands deep in an attribute a judge parses, an attribute number no comparison can take, a stored row
that no longer reads back) is finished all the same, with one error result per evaluator
(``errorCode`` ``SessionEvaluationFailed``, the exception named in ``errorMessage``), stored, exported and
counted as failing like any other result. The loop then moves on: one hostile session never stops the
sessions after it, and it is not retried on every pass. Only the store failing to commit (an
``sqlite3.Error`` or ``OSError``: a full disk, a lock) is left to the next pass, which retries it.

A result passes by its evaluator's rule (``lambdas.passing_rule``): not an error, and its label one of the
evaluator's passing labels (a code evaluator's ``PASSING_LABELS``, an LLM judge's top label), or for an
evaluator that declares none, a ``value`` of at least 1.0 (without a value, a label ``PASS``, ``PASSED``,
``TRUE``, ``YES``). The stored ``passed`` feeds ``spans status``, the pass-rate alarms and the exports.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

from evalkit.spans.evaluation import evaluate_groups
from evalkit.spans.evaluator_specs import online_evaluator
from evalkit.spans.lambdas.passing_rule import passes, passing_labels
from evalkit.spans.lambdas.payload import session_spans
from evalkit.spans.lambdas.results import result_entry
from evalkit.spans.online.session_tracking import Filter, session_matches

if TYPE_CHECKING:
    from evalkit.spans.lambdas.evaluator_workers import EvaluatorWorkers
    from evalkit.spans.lambdas.span_evaluator import SpanEvaluator
    from evalkit.spans.llm_judges.judge_runner import SpanJudges
    from evalkit.spans.llm_judges.llm_evaluator import LLMSpanEvaluator
    from evalkit.spans.online.store import Store

log = logging.getLogger("evalkit.spans.online")

#: The error code of the results of a session whose evaluation raised (see the module docstring).
SESSION_FAILED = "SessionEvaluationFailed"
#: How much of the exception's text an error result keeps.
MESSAGE_LIMIT = 500
#: Failures of the store itself: the session is left ``complete`` and the next pass retries it.
_STORE_FAILURES = (sqlite3.Error, OSError)


def passed(entry: dict, evaluators=()) -> bool:
    """Whether a result passes, by the rule of the evaluator (of ``evaluators``) that made it; the value rule
    when that evaluator is not among them."""
    for evaluator in evaluators:
        if evaluator.evaluator_id == entry.get("evaluatorId"):
            return passes(entry, passing_labels(evaluator))
    return passes(entry)


def evaluate_session(
    store: Store,
    session_id: str,
    is_sampled: bool,
    evaluators: list[SpanEvaluator | LLMSpanEvaluator],
    filters: list[Filter],
    timeout: float,
    judges: SpanJudges | None = None,
    *,
    config_id: str | None = None,
    workers: EvaluatorWorkers | None = None,
) -> bool:
    """Evaluate (or skip) one complete session and commit the outcome; whether the session was finished.

    Each result is stamped with ``config_id`` (the online evaluation configuration, AgentCore's
    ``onlineEvaluationConfigId``) when one is given, so exports after a restart keep the name it ran under.
    ``workers`` is the receiver's pool of evaluator worker processes, kept from session to session. A failure
    of the evaluation gives error results (``failure_results``) instead of an exception; only a failure of the
    store raises.
    """
    if not is_sampled or not evaluators:
        return store.finish(session_id, "skipped", [])
    try:
        state, results = _outcome(store, session_id, evaluators, filters, timeout, judges, workers)
        _stamp(results, config_id)
        return store.finish(session_id, state, results)
    except _STORE_FAILURES:
        raise
    except Exception as exc:  # the session's own content broke its evaluation: record it, move on
        log.warning("session %s could not be evaluated: %s", session_id, describe(exc))
        results = failure_results(session_id, evaluators, exc)
        _stamp(results, config_id)
        return store.finish(session_id, "evaluated", results)


def _outcome(store, session_id, evaluators, filters, timeout, judges, workers) -> tuple[str, list[dict]]:
    """``(state, results)`` of one sampled session: ``skipped`` when no span satisfies the filters."""
    docs = store.session_documents(session_id)
    if not session_matches(docs, filters):
        return "skipped", []
    results = evaluate_groups(
        [session_spans(session_id, docs)], evaluators, timeout=timeout, judges=judges, workers=workers
    )
    service = service_name(docs)
    for entry in results:
        entry["passed"] = passed(entry, evaluators)
        entry["service"] = service
    return "evaluated", results


def _stamp(results: list[dict], config_id: str | None) -> None:
    if config_id is not None:
        for entry in results:
            entry["onlineEvaluationConfigId"] = config_id


def failure_results(session_id: str, evaluators, exc: BaseException) -> list[dict]:
    """One failing session-level error result per evaluator, naming the exception that stopped the session's
    evaluation."""
    message = (
        f"the session could not be evaluated: {describe(exc)}; evalkit recorded this error result and "
        "moved on to the next session"
    )
    results = []
    for evaluator in evaluators:
        entry = result_entry(evaluator, session_id, None, None)
        entry.update(errorCode=SESSION_FAILED, errorMessage=message, passed=False, service="unknown")
        results.append(entry)
    return results


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, cut to ``MESSAGE_LIMIT`` characters."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def load_evaluator(spec: str, custom_dir) -> SpanEvaluator | LLMSpanEvaluator:
    """The span evaluator of a ``NAME`` or ``NAME:LEVEL`` spec (``Builtin.<Name>`` too), from ``custom_dir``;
    one that needs reference inputs is refused (``evaluator_specs.online_evaluator``)."""
    return online_evaluator(spec, custom_dir)


def service_name(docs: list[dict]) -> str:
    for doc in docs:
        name = ((doc.get("resource") or {}).get("attributes") or {}).get("service.name")
        if name:
            return str(name)
    return "unknown"
