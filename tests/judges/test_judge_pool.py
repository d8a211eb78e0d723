"""The judge pool: bounded and adaptive concurrency, retries with Retry-After, timeouts, the cache."""

from __future__ import annotations

import threading
import time

from evalkit.judges.pool import AdaptiveLimit, Call, JudgeFailure, JudgePool


class Flight:
    """Counts calls in flight and remembers the most seen at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.now = self.most = 0

    def call(self, seconds=0.02, value=None):
        def run():
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
            time.sleep(seconds)
            with self.lock:
                self.now -= 1
            return value or {"score": 4}

        return run


class DictCache:
    def __init__(self):
        self.data = {}

    def get_many(self, keys):
        return {k: self.data[k] for k in keys if k in self.data}

    def put(self, key, identity, value):
        if "error" in value:
            return False
        self.data[key] = value
        return True


def test_concurrency_is_bounded_and_used():
    flight = Flight()
    outcomes = JudgePool(4).run([Call(flight.call()) for _ in range(24)])
    assert all(o.value == {"score": 4} for o in outcomes)
    assert flight.most == 4


def test_outcomes_keep_call_order():
    calls = [Call(Flight().call(seconds=0.03 - i * 0.005, value={"score": i})) for i in range(5)]
    assert [o.value["score"] for o in JudgePool(5).run(calls)] == [0, 1, 2, 3, 4]


def test_rate_limits_are_retried_after_retry_after_and_halve_the_limit():
    attempts = []

    def flaky():
        attempts.append(time.monotonic())
        if len(attempts) == 1:
            raise JudgeFailure("HTTP 429: slow down", "judgeRateLimited", retryable=True, retry_after=0.3)
        return {"score": 5}

    pool = JudgePool(8, backoff=0.01)
    outcome = pool.run([Call(flaky)])[0]
    assert outcome.value == {"score": 5} and outcome.attempts == 2
    assert attempts[1] - attempts[0] >= 0.3
    assert pool.limit.cuts == 1 and pool.limit.limit == 4


def test_persistent_throttling_ends_in_a_readable_error():
    def always():
        raise JudgeFailure(
            "HTTP 429: Rate limit reached for deployment judge", "judgeRateLimited", retryable=True
        )

    outcome = JudgePool(2, attempts=3, backoff=0.01).run([Call(always)])[0]
    assert outcome.code == "judgeRateLimited"
    assert outcome.error == "HTTP 429: Rate limit reached for deployment judge (after 3 attempts)"


def test_final_errors_are_not_retried():
    calls = []

    def denied():
        calls.append(1)
        raise JudgeFailure("HTTP 401: bad key", "judgeAuthenticationError")

    outcome = JudgePool(2, backoff=0.01).run([Call(denied)])[0]
    assert (outcome.code, outcome.attempts, len(calls)) == ("judgeAuthenticationError", 1, 1)


def test_a_hung_call_times_out_and_the_run_ends():
    started = time.monotonic()
    hung = threading.Event()
    calls = [Call(lambda: hung.wait(30) or {"score": 1}), Call(lambda: {"score": 3})]
    outcomes = JudgePool(2, attempts=2, timeout=0.2, backoff=0.01).run(calls)
    hung.set()
    assert outcomes[0].code == "judgeTimeout" and "did not answer within 0.2 s" in outcomes[0].error
    assert outcomes[1].value == {"score": 3}
    assert time.monotonic() - started < 2


def test_unexpected_exceptions_become_evaluator_errors():
    outcome = JudgePool(1).run([Call(lambda: 1 / 0)])[0]
    assert outcome.code == "evaluatorError" and outcome.error == "ZeroDivisionError: division by zero"


def test_cache_answers_before_calling_and_errors_are_not_cached():
    cache = DictCache()
    count = []

    def ok():
        count.append(1)
        return {"score": 2}

    def bad():
        raise JudgeFailure("nope", "judgeOutputUnparseable")

    first = JudgePool(2, cache=cache)
    first.run([Call(ok, key="a"), Call(bad, key="b")])
    second = JudgePool(2, cache=cache)
    outcomes = second.run([Call(ok, key="a"), Call(bad, key="b")])
    assert len(count) == 1 and outcomes[0].cached and outcomes[0].value == {"score": 2}
    assert second.calls_made == 1 and second.cache_hits == 1 and "b" not in cache.data


def test_adaptive_limit_recovers_slowly():
    limit = AdaptiveLimit(8, cooldown=0)
    limit.throttled(0.0)
    limit.throttled(0.0)
    assert limit.limit == 2
    for _ in range(2):
        limit.succeeded()
    assert limit.limit == 3
    for _ in range(3):
        limit.succeeded()
    assert limit.limit == 4
