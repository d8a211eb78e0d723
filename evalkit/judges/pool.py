"""Judge calls, many at a time: a bounded and adaptive pool with retries, timeouts and a result cache.

Every LLM judgment of a run goes through one ``JudgePool``:

- at most ``concurrency`` calls are in flight; when the model answers 429 the limit is halved (at most once
  per cool-down) and then raised by one after each ``limit`` successes, so a throttled deployment is
  backed off from and found again (additive increase, multiplicative decrease);
- 429, 5xx, timeouts and connection errors are retried with exponential backoff and full jitter, waiting
  at least what ``Retry-After`` says; other failures are final at once;
- each call has a deadline (``timeout``); a call that has not answered by then is abandoned (its daemon
  thread may finish later, unheard) and counts as a timeout, so a hung server never hangs the run;
- results are looked up in, and stored to, the content-addressed cache; errors are never cached.

The calls themselves are plain callables returning a dict, so the pool is the same for azure-ai-evaluation's
evaluator classes and for custom ``.prompty`` judges.
"""

from __future__ import annotations

import heapq
import logging
import queue
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evalkit.judges.failures import JudgeFailure
from evalkit.judges.metering import Usage, metering

log = logging.getLogger("evalkit.judges")


@dataclass
class Call:
    """One judgment to make: ``run()`` returns the judge's result dict, or raises."""

    run: Callable[[], dict]
    key: str | None = None  # cache key; None = not cacheable
    identity: str = ""  # the evaluator identity stored beside the cached value


@dataclass
class Outcome:
    """What became of a call: a value, or an error with its upstream code."""

    value: dict | None = None
    error: str | None = None
    code: str | None = None
    attempts: int = 0
    cached: bool = False


class AdaptiveLimit:
    """Additive-increase / multiplicative-decrease bound on calls in flight."""

    def __init__(self, ceiling: int, cooldown: float = 1.0):
        self.ceiling = self.limit = max(1, int(ceiling))
        self.cooldown = cooldown
        self._successes = 0
        self._last_cut = -float("inf")
        self.cuts = 0

    def throttled(self, now: float) -> None:
        if now - self._last_cut >= self.cooldown:
            self.limit = max(1, self.limit // 2)
            self._last_cut = now
            self._successes = 0
            self.cuts += 1
            log.info("judge throttled (429): concurrency lowered to %d", self.limit)

    def succeeded(self) -> None:
        self._successes += 1
        if self.limit < self.ceiling and self._successes >= self.limit:
            self.limit += 1
            self._successes = 0


@dataclass
class _Attempt:
    index: int
    number: int  # 1-based attempt number
    deadline: float = 0.0
    abandoned: bool = False


@dataclass(order=True)
class _Waiting:
    not_before: float
    index: int = field(compare=False)
    number: int = field(compare=False)


class JudgePool:
    """Runs judge calls with bounded, adaptive concurrency, retries, per-call timeouts and a cache."""

    def __init__(
        self,
        concurrency: int = 8,
        *,
        attempts: int = 5,
        timeout: float = 120.0,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        cache=None,
        seed: int | None = None,
    ):
        self.limit = AdaptiveLimit(concurrency)
        self.attempts = max(1, attempts)
        self.timeout = timeout
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.cache = cache
        self.random = random.Random(seed)
        self.calls_made = 0  # pool attempts; the requests they sent are in ``usage`` (``judges.metering``)
        self.cache_hits = 0
        self.usage = Usage()

    def run(self, calls: list[Call], on_done: Callable[[int, Outcome], None] | None = None) -> list[Outcome]:
        """Run ``calls``; returns one ``Outcome`` per call, in order. ``on_done`` sees each as it ends."""
        outcomes: list[Outcome | None] = [None] * len(calls)

        def finish(index: int, outcome: Outcome) -> None:
            outcomes[index] = outcome
            if on_done is not None:
                on_done(index, outcome)

        pending = deque(self._from_cache(calls, finish))
        waiting: list[_Waiting] = []
        running: dict[int, _Attempt] = {}
        done: queue.Queue = queue.Queue()
        last_error: dict[int, JudgeFailure] = {}

        while pending or waiting or running:
            now = time.monotonic()
            while waiting and waiting[0].not_before <= now:
                item = heapq.heappop(waiting)
                pending.appendleft((item.index, item.number))
            while pending and len(running) < self.limit.limit:
                index, number = pending.popleft()
                attempt = _Attempt(index, number, deadline=now + self.timeout)
                running[id(attempt)] = attempt
                self.calls_made += 1
                threading.Thread(
                    target=self._call, args=(calls[index], attempt, done, self.usage), daemon=True
                ).start()
            wake = min([a.deadline for a in running.values()] + ([waiting[0].not_before] if waiting else []))
            try:
                attempt, value, failure = done.get(
                    timeout=max(0.0, wake - time.monotonic()) if wake else None
                )
            except queue.Empty:
                attempt, value, failure = None, None, None
            now = time.monotonic()
            if attempt is not None and not attempt.abandoned:
                running.pop(id(attempt), None)
                self._settle(calls, attempt, value, failure, now, finish, waiting, last_error)
            for token, late in list(running.items()):
                if late.deadline <= now:
                    late.abandoned = True
                    running.pop(token)
                    timeout = JudgeFailure(
                        f"the judge did not answer within {self.timeout:g} s", "judgeTimeout", retryable=True
                    )
                    self._settle(calls, late, None, timeout, now, finish, waiting, last_error)
        return [o if o is not None else Outcome(error="not run", code="evaluatorError") for o in outcomes]

    def _from_cache(self, calls: list[Call], finish) -> list[tuple[int, int]]:
        """Finish the calls the cache answers; return the (index, attempt) pairs still to run."""
        keys = [c.key for c in calls if c.key]
        found = self.cache.get_many(keys) if (self.cache is not None and keys) else {}
        todo = []
        for index, call in enumerate(calls):
            if call.key and call.key in found:
                self.cache_hits += 1
                finish(index, Outcome(value=found[call.key], cached=True))
            else:
                todo.append((index, 1))
        return todo

    @staticmethod
    def _call(call: Call, attempt: _Attempt, done: queue.Queue, usage=None) -> None:
        try:
            with metering(usage, call.identity):
                value = call.run()
            done.put((attempt, value, None))
        except BaseException as exc:  # noqa: BLE001 - every failure is classified and reported
            done.put((attempt, None, classify(exc)))

    def _settle(self, calls, attempt, value, failure, now, finish, waiting, last_error) -> None:
        index, number = attempt.index, attempt.number
        if failure is None:
            self.limit.succeeded()
            call = calls[index]
            if call.key and self.cache is not None:
                self.cache.put(call.key, call.identity, value)
            finish(index, Outcome(value=value, attempts=number))
            return
        if failure.code == "judgeRateLimited":
            self.limit.throttled(now)
        last_error[index] = failure
        if failure.retryable and number < self.attempts:
            delay = self.random.uniform(0, min(self.max_backoff, self.backoff * 2 ** (number - 1)))
            if failure.retry_after:
                delay = max(delay, float(failure.retry_after))
            log.debug("judge call %d failed (%s); retry %d in %.2f s", index, failure, number + 1, delay)
            heapq.heappush(waiting, _Waiting(now + delay, index, number + 1))
            return
        message = str(failure)
        if failure.retryable and number > 1:
            message += f" (after {number} attempts)"
        finish(index, Outcome(error=message, code=failure.code, attempts=number))


def classify(exc: BaseException) -> JudgeFailure:
    """Map an exception from a judge call (openai, promptflow, azure-ai-evaluation, user code) to a failure.

    Wrapped errors are unwrapped through ``__cause__`` / ``__context__`` and the ``error`` / ``inner_exception``
    attributes the libraries use, until an ``openai`` error is found.
    """
    if isinstance(exc, JudgeFailure):
        return exc
    wrapped = find_error(exc, JudgeFailure)  # raised inside a library's call (``judges.metering``)
    if wrapped is not None:
        return wrapped
    import openai

    found = find_error(exc, openai.OpenAIError)
    if isinstance(found, openai.APITimeoutError):
        return JudgeFailure(f"the judge call timed out ({found})", "judgeTimeout", retryable=True)
    if isinstance(found, openai.APIStatusError):
        status = found.response.status_code
        text = f"HTTP {status}: {server_message(found)}"
        if status == 429:
            return JudgeFailure(
                text, "judgeRateLimited", retryable=True, retry_after=retry_after_seconds(found)
            )
        if status in (401, 403):
            return JudgeFailure(text, "judgeAuthenticationError")
        return JudgeFailure(text, "evaluatorError", retryable=status >= 500)
    if isinstance(found, openai.APIConnectionError):
        cause = found.__cause__ or found.__context__
        detail = f": {cause}" if cause else ""
        return JudgeFailure(
            f"cannot reach the judge model ({found}{detail})", "evaluatorError", retryable=True
        )
    import json

    signin = _find_named(exc, "ClientAuthenticationError", "CredentialUnavailableError")
    if signin is not None:
        return JudgeFailure(f"cannot sign in to the judge model: {signin}", "judgeAuthenticationError")
    garbled = find_error(exc, json.JSONDecodeError)
    if garbled is not None or "invalid output" in str(exc).lower():
        detail = garbled or exc
        return JudgeFailure(
            f"could not parse score: the judge's answer is not well-formed JSON ({detail})",
            "judgeOutputUnparseable",
        )
    if "invalid score value" in str(exc).lower():  # azure-ai-evaluation read JSON without a usable score
        return JudgeFailure(f"could not parse score: {exc}", "judgeOutputUnparseable")
    if isinstance(exc, TimeoutError):
        return JudgeFailure(f"the judge call timed out ({exc})", "judgeTimeout", retryable=True)
    return JudgeFailure(f"{type(exc).__name__}: {exc}", "evaluatorError")


def _find_named(exc: BaseException, *names: str) -> Any:
    """Like ``find_error``, by class name, for libraries that may not be installed (azure-identity)."""
    return find_error(exc, BaseException, lambda e: any(k.__name__ in names for k in type(e).__mro__))


def find_error(exc: BaseException, kind: type, accept=None) -> Any:
    """The first ``kind`` error (passing ``accept``) in ``exc`` or the errors it wraps, else None."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind) and (accept is None or accept(current)):
            return current
        for name in ("error", "inner_exception", "__cause__", "__context__"):
            inner = getattr(current, name, None)
            if isinstance(inner, BaseException):
                stack.append(inner)
    return None


def server_message(error) -> str:
    """The message of an ``openai.APIStatusError``: the body's ``error.message`` when there is one."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return getattr(error, "message", None) or str(error)


def retry_after_seconds(error) -> float | None:
    """Seconds to wait from an ``openai.APIStatusError``'s ``retry-after-ms`` / ``Retry-After`` header."""
    headers = getattr(error.response, "headers", {}) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) * scale
            except ValueError:
                continue
    return None
