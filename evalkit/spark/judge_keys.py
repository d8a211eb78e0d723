"""The judge model on Spark executors, for the batch engine (``evaluate``) and ``spans stream`` alike.

The driver sends the judge model's settings (endpoint, deployment or model, API version) to the executors in
the job's plain settings, without the key (``without_key``). The key travels in PySpark's executor environment
instead (``executor_key``): PySpark copies ``SparkContext.environment`` into each Python function when it is
created and starts that function's workers with it, so the key is in the workers' environment
(``KEY_VARIABLE``) and nowhere in the pickled closure, the plan, the checkpoint, logs or results. On a worker,
``executor_model_config`` puts the two back together, falling back to the usual variables (``OPENAI_API_KEY``,
``AZURE_AI_API_KEY``, ...) that a cluster sets with ``spark.executorEnv.*`` or its secret store.

``worker_share`` turns a per-executor concurrency into a per-Python-worker one (an executor runs one worker
per task slot), and ``executor_cache`` opens the judge cache a worker uses.
"""

from __future__ import annotations

import os
import re

#: The executor environment variable that carries the judge key the driver had.
KEY_VARIABLE = "EVALKIT_JUDGE_SECRET"


def without_key(config: dict | None) -> dict | None:
    """The judge settings to put in a job's settings: every field but the secrets."""
    if config is None:
        return None
    from evalkit.judges.cache import is_secret_name

    return {k: v for k, v in config.items() if not is_secret_name(k)}


class executor_key:
    """Put the judge key into PySpark's executor environment while the job's functions are created.

    Use it around the ``mapInPandas`` calls of a job; the context's environment is restored afterwards, so the
    key reaches only the workers of the functions created inside.
    """

    def __init__(self, spark, key: str | None):
        self.environment = spark.sparkContext.environment
        self.key = key

    def __enter__(self):
        self.before = self.environment.get(KEY_VARIABLE)
        if self.key:
            self.environment[KEY_VARIABLE] = self.key
        return self

    def __exit__(self, *exc):
        if self.before is None:
            self.environment.pop(KEY_VARIABLE, None)
        else:
            self.environment[KEY_VARIABLE] = self.before


def executor_model_config(judge: dict | None) -> dict | None:
    """On a worker: the driver's judge settings (no key) completed with the key from this worker's
    environment."""
    if judge is None:
        return None
    from evalkit.judges.models import judge_config

    config = dict(judge)
    key = os.environ.get(KEY_VARIABLE)
    if not key:
        local = judge_config() or {}
        same_kind = ("azure_endpoint" in local) == ("azure_endpoint" in config)
        key = local.get("api_key") if same_kind else None
    if key:
        config["api_key"] = key
    elif "base_url" in config:
        config["api_key"] = ""
    return config


def executor_cache(spec):
    """The judge cache of a worker: True (the default location on its machine), False (none), or a JudgeCache
    on the given SQLite file (local disk only: SQLite locking is not safe on network file systems)."""
    if spec is True or spec is False or spec is None:
        return bool(spec)
    from evalkit.judges.cache import JudgeCache

    return JudgeCache(spec)


def cache_setting(cache) -> bool | str:
    """``cache`` (bool or path) as a plain value for a job's settings."""
    return str(cache) if isinstance(cache, (str, os.PathLike)) else bool(cache)


def worker_share(spark, concurrency: int) -> int:
    """Judge calls in flight per Python worker, so that one executor has at most ``concurrency`` in flight:
    ``concurrency`` divided among the executor's task slots (at least 1 each)."""
    return max(1, int(concurrency) // executor_slots(spark))


def executor_slots(spark) -> int:
    """Python workers one executor runs at once: its cores / ``spark.task.cpus`` (local[N]: N)."""

    conf = spark.sparkContext.getConf()
    master = conf.get("spark.master", "local[*]")
    per_task = max(1, int(conf.get("spark.task.cpus", "1")))
    local = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master)
    if local:
        threads = local.group(1)
        cores = 1 if threads is None else (os.cpu_count() or 1) if threads == "*" else int(threads)
        return max(1, cores // per_task)
    cores = conf.get("spark.executor.cores", None)
    if cores is None:  # standalone default: every core of the worker; estimate from the cluster now
        executors = max(1, spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1)
        cores = spark.sparkContext.defaultParallelism // executors
    return max(1, int(cores) // per_task)
