"""One row's call to the agent: its retries and deadline, its spans, and its answer or upstream error code.

Each call goes through ``JudgePool`` (one call per pool) for its deadline, retries with backoff and full
jitter, and ``Retry-After``; the answer is checked (a string, or a dict with ``response`` and optional
``citations``, ``retrieval_executions``, ``tool_calls``), and a call that still fails gets the upstream
``ErrorObject`` code (``agentRequestFailed``, ``agentRateLimited``, ``agentTimeout``,
``agentAuthenticationError``, ``agentResponseUnparseable``). The result is an ``AgentResult``.

Why here: what one call gives is the same whatever the target (``evalkit.agents.targets``) and however rows
are scheduled (``evalkit.agents.run``).
"""

from __future__ import annotations

import contextvars
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from evalkit.agents.span_capture import CURRENT_BUCKET, Bucket, SpanRouter
from evalkit.agents.targets import Agent, Unparseable
from evalkit.judges.pool import Call, JudgeFailure, JudgePool, find_error, retry_after_seconds, server_message

__all__ = ["AgentResult", "call_agent"]


@dataclass
class AgentResult:
    """What the agent gave for one row (what ``on_done`` receives, with the row's position)."""

    response: str | None = None
    citations: list = field(default_factory=list)
    retrieval_executions: list = field(default_factory=list)
    tool_calls: dict | None = None
    spans: list = field(default_factory=list)
    error_code: str | None = None
    error_message: str | None = None
    attempts: int = 0


_TIMEOUT_CODES = {"judgeTimeout": "agentTimeout"}


def call_agent(
    agent: Agent,
    prompt: str,
    history: list[dict],
    allowed_tools: list | None,
    *,
    session: str,
    router: SpanRouter | None,
    timeout: float,
    attempts: int,
    backoff: float,
    max_backoff: float,
) -> AgentResult:
    """One row: the call with its retries and deadline (``JudgePool``), its spans, its result or error."""
    buckets: list[Bucket] = []
    buckets_lock = threading.Lock()

    def attempt() -> dict:
        # JudgePool runs each attempt in a fresh thread, whose context is empty: each item starts its own
        # traces (no parent span from the caller) and only this attempt's bucket is current.
        bucket = Bucket(session)
        with buckets_lock:
            buckets.append(bucket)
        context = contextvars.Context()
        try:
            answer = context.run(_invoke, agent, prompt, history, allowed_tools, bucket if router else None)
        except BaseException as exc:  # noqa: BLE001 - every failure is classified for the row
            raise _failure(exc, timeout) from exc
        return {"answer": answer, "bucket": bucket}

    pool = JudgePool(1, attempts=attempts, timeout=timeout, backoff=backoff, max_backoff=max_backoff)
    outcome = pool.run([Call(run=attempt)])[0]
    if outcome.value is not None:
        bucket = outcome.value["bucket"]
    else:
        with buckets_lock:
            bucket = buckets[-1] if buckets else None
    spans = router.collect(bucket) if (router is not None and bucket is not None) else []
    with buckets_lock:
        for other in buckets:
            other.closed = True
            if router is not None:
                router.forget(other)
    if outcome.value is not None:
        answer = outcome.value["answer"]
        return AgentResult(
            response=answer["response"],
            citations=answer["citations"],
            retrieval_executions=answer["retrieval_executions"],
            tool_calls=answer["tool_calls"],
            spans=spans,
            attempts=outcome.attempts,
        )
    code = outcome.code or "agentRequestFailed"
    message = outcome.error or "Agent request failed"
    if code in _TIMEOUT_CODES:  # the pool's own deadline
        code = _TIMEOUT_CODES[code]
        message = f"Agent timed out: no answer within {timeout:g} s"
        if outcome.attempts > 1:
            message += f" (after {outcome.attempts} attempts)"
    elif not code.startswith("agent"):
        code = "agentRequestFailed"
    return AgentResult(spans=spans, error_code=code, error_message=message, attempts=outcome.attempts)


def _invoke(agent: Agent, prompt, history, allowed_tools, bucket: Bucket | None) -> dict:
    token = CURRENT_BUCKET.set(bucket)
    try:
        return _parse(agent(prompt, history, allowed_tools))
    finally:
        CURRENT_BUCKET.reset(token)


def _parse(answer: Any) -> dict:
    """A string, or a dict with ``response`` (and optional extras), as the row's fields."""
    if isinstance(answer, str):
        return {"response": answer, "citations": [], "retrieval_executions": [], "tool_calls": None}
    if not isinstance(answer, dict):
        raise Unparseable(f"expected a string or a dict with 'response', got {type(answer).__name__}")
    response = answer.get("response")
    if not isinstance(response, str):
        found = "no 'response'" if response is None else f"'response' of type {type(response).__name__}"
        raise Unparseable(f"the answer has {found} (a string is needed)")
    citations = answer.get("citations")
    executions = answer.get("retrieval_executions")
    if executions is None and isinstance(answer.get("diagnostics"), dict):
        executions = answer["diagnostics"].get("retrieval_executions")
    calls = answer.get("tool_calls")
    for name, value, kind in (
        ("citations", citations, list),
        ("retrieval_executions", executions, list),
        ("tool_calls", calls, dict),
    ):
        if value is not None and not isinstance(value, kind):
            raise Unparseable(f"'{name}' must be a {kind.__name__}, got {type(value).__name__}")
    return {
        "response": response,
        "citations": _citations(citations or []),
        "retrieval_executions": list(executions or []),
        "tool_calls": calls,
    }


def _citations(values: list) -> list:
    """Citation objects as given; a bare string (a URL, a document name) becomes ``{index, source}``."""
    out = []
    for number, value in enumerate(values, 1):
        if isinstance(value, dict):
            out.append(value)
        elif isinstance(value, str):
            out.append({"index": number, "source": value})
        else:
            raise Unparseable(f"citation {number} must be an object or a string, got {type(value).__name__}")
    return out


def _failure(exc: BaseException, timeout: float) -> JudgeFailure:
    """Map what a call raised to the upstream agent error code, and whether another attempt may help."""
    if isinstance(exc, JudgeFailure):
        return exc
    if isinstance(exc, Unparseable):
        return JudgeFailure(f"Agent response unparseable: {exc}", "agentResponseUnparseable")
    openai = sys.modules.get("openai")  # an openai error exists only if openai was imported
    found = find_error(exc, openai.OpenAIError) if openai is not None else None
    if found is not None:
        if isinstance(found, openai.APITimeoutError):
            return JudgeFailure(
                f"Agent timed out: no answer within {timeout:g} s", "agentTimeout", retryable=True
            )
        if isinstance(found, openai.APIStatusError):
            status = found.response.status_code
            text = f"HTTP {status}: {server_message(found)}"
            if status == 429:
                return JudgeFailure(
                    f"Agent rate limited: {text}",
                    "agentRateLimited",
                    retryable=True,
                    retry_after=retry_after_seconds(found),
                )
            if status in (401, 403):
                hint = getattr(found, "_evalkit_hint", "")
                return JudgeFailure(f"Agent authentication failed: {text}{hint}", "agentAuthenticationError")
            retryable = status >= 500 or status in (408, 409)
            return JudgeFailure(f"Agent request failed: {text}", "agentRequestFailed", retryable=retryable)
        if isinstance(found, openai.APIConnectionError):
            cause = found.__cause__ or found.__context__
            detail = f": {cause}" if cause else ""
            return JudgeFailure(
                f"Agent request failed: cannot reach the agent ({found}{detail})",
                "agentRequestFailed",
                retryable=True,
            )
    if isinstance(exc, TimeoutError):
        return JudgeFailure(f"Agent timed out: {type(exc).__name__}: {exc}", "agentTimeout", retryable=True)
    return JudgeFailure(
        f"Agent request failed: {type(exc).__name__}: {exc}", "agentRequestFailed", retryable=True
    )
