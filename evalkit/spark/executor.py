"""What runs in Spark's Python workers: the pandas engine over each batch of a partition.

The function given to ``mapInPandas`` is :func:`score_partition` bound to the run's *settings*: plain data
with no secret in it (evaluator options, where the custom evaluators are, the judge endpoint without its key,
concurrency, cache). Per Python worker process, one :class:`_State` per distinct settings holds what must not
be rebuilt per batch: the resolved evaluators (custom modules imported once), the judge pool (its adaptive
concurrency limit and 429 back-off carry over from batch to batch), the judge cache connection and the HTTP
clients. Spark reuses its Python workers across tasks (``spark.python.worker.reuse``, on by default), so this
is once per worker process, not once per task or batch.

The judge key is read here, from the worker's environment (``judge_keys.executor_model_config``):
``EVALKIT_JUDGE_SECRET`` (set by ``evalkit.spark.evaluate`` through PySpark's executor environment when the
driver has a key), else the usual variables (``AZURE_AI_API_KEY``, ``OPENAI_API_KEY``, ...), which a cluster
sets with ``spark.executorEnv.*`` or its secret store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pandas as pd

from evalkit.spark.frames import case_table, result_frame
from evalkit.spark.judge_keys import executor_cache, executor_model_config
from evalkit.spark.regroup import whole_items

_STATES: dict[str, _State] = {}


class _State:
    """Per worker process and settings: the engine's reusable parts and the judge model with its key."""

    def __init__(self, settings: dict):
        from evalkit.judges.offline import quiet_llm_libraries
        from evalkit.spark.shipping import locate

        quiet_llm_libraries()
        self.custom_dir = locate(settings["custom"])
        self.model_config = executor_model_config(settings.get("judge"))
        self.cache = executor_cache(settings.get("cache", True))
        self.reuse: dict = {}
        self.batches = 0
        self.judged: dict = {}  # the engine's cumulative judge counters after the last batch


def state(settings: dict) -> _State:
    """This process's state for ``settings`` (built on first use)."""
    token = settings["token"]
    found = _STATES.get(token)
    if found is None:
        found = _STATES[token] = _State(settings)
    return found


def score_partition(settings: dict, batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """Score the Arrow batches of one partition with the pandas engine; yields input columns + results.

    With ``settings["threads"]`` the partition is sorted by item and turn, and batches are re-cut so that a
    thread's turns reach one engine call together (see ``regroup``).
    """
    from evalkit import engine

    current = state(settings)
    fields = [tuple(f) for f in settings["fields"]]
    inputs = settings["inputs"]
    frames = whole_items(batches) if settings["threads"] else batches
    for batch in frames:
        if not len(batch):
            continue
        scored = engine.evaluate(
            case_table(batch[inputs]),
            custom_dir=current.custom_dir,
            evaluators=settings.get("evaluators"),
            model_config=current.model_config,
            concurrency=settings["concurrency"],
            cache=current.cache,
            judge_timeout=settings["judge_timeout"],
            progress=False,
            reuse=current.reuse,
        )
        current.batches += 1
        _count(settings, current, scored)
        results = result_frame(scored, fields)
        passthrough = batch[settings["passthrough"]].reset_index(drop=True)
        yield pd.concat([passthrough, results], axis=1)


def _count(settings: dict, current: _State, scored: pd.DataFrame) -> None:
    """Add this batch's judge calls, cache hits and tokens to the run's accumulator (when there is one)."""
    accumulator = settings.get("stats")
    judge = scored.attrs.get("evalkit", {}).get("judge")
    if accumulator is None or not judge:
        return
    totals = {
        "calls": judge["calls"],
        "cache_hits": judge["cache_hits"],
        "throttled": judge["throttled"],
        "tokens": json.loads(json.dumps(judge["tokens"])),
    }
    accumulator.add(_delta(totals, current.judged))
    current.judged = totals


def _delta(totals: dict, previous: dict) -> dict:
    """What a batch added: the engine's judge counters are cumulative over a reused pool."""
    delta = {k: totals[k] - previous.get(k, 0) for k in ("calls", "cache_hits", "throttled")}
    tokens = {}
    for name, used in totals["tokens"].items():
        before = previous.get("tokens", {}).get(name, {})
        tokens[name] = {part: used[part] - before.get(part, 0) for part in ("prompt", "completion")}
    delta["tokens"] = tokens
    return delta
