"""Judge counters summed over the executors: calls made, cache hits, 429 cuts and tokens per evaluator.

A Spark accumulator of :class:`JudgeStats` values; the executors add what each batch cost. Counts from a task
that Spark re-ran (a lost executor, speculation) are added twice: these are provenance figures, not results.
"""

from __future__ import annotations

from pyspark.accumulators import AccumulatorParam


class JudgeStats(AccumulatorParam):
    """Adds ``{"calls", "cache_hits", "throttled", "tokens": {evaluator: {"prompt", "completion"}}}`` dicts."""

    def zero(self, value=None) -> dict:
        return {"calls": 0, "cache_hits": 0, "throttled": 0, "tokens": {}}

    def addInPlace(self, value1: dict, value2: dict) -> dict:  # noqa: N802 - pyspark's name
        for key in ("calls", "cache_hits", "throttled"):
            value1[key] = value1.get(key, 0) + value2.get(key, 0)
        tokens = value1.setdefault("tokens", {})
        for name, used in (value2.get("tokens") or {}).items():
            mine = tokens.setdefault(name, {"prompt": 0, "completion": 0})
            for part in ("prompt", "completion"):
                mine[part] += used.get(part, 0)
        return value1
