"""evalkit on Apache Spark: the same engine, run per partition, for case tables too large for one process.

    from evalkit import spark as es
    sdf = es.load(spark, "data/demo.json")           # a Spark DataFrame of the case table
    scored = es.evaluate(sdf)                       # lazy: result columns, status, error per row
    scored.write.parquet("results.parquet")

``evaluate`` runs :func:`evalkit.engine.evaluate` on pandas batches inside ``mapInPandas``, so results are
identical row for row to the pandas engine. Nested case-table values (citations, evaluator maps, sources)
travel as JSON strings. pyspark is an optional extra (``pip install 'evalkit[spark]'``) and is imported only
when one of these functions is called; ``import evalkit`` never imports it.

Modules: ``requirements`` (the pyspark check), ``frames`` (case table <-> Spark columns), ``regroup``
(batches cut at item boundaries), ``executor`` (what runs in the Python workers), ``batch`` (``load`` and
``evaluate`` on the driver), ``shipping`` (custom evaluators to the executors), ``session``, ``run_files``
and ``report`` (results files streamed on the driver), ``streaming`` and ``stream_sink`` (``spans stream``).

May import: every layer up to ``reporting`` (engine, documents, spans, judges, evaluators, analysis).
"""

from __future__ import annotations

import importlib

_API = {
    "load": ("evalkit.spark.batch", "load"),
    "evaluate": ("evalkit.spark.batch", "evaluate"),
    "to_pandas": ("evalkit.spark.batch", "to_pandas"),
    "session": ("evalkit.spark.session", "get_session"),
}

__all__ = sorted(_API)


def __getattr__(name: str):
    """Import the API on first use, so ``import evalkit.spark`` works (and explains) without pyspark."""
    try:
        module, attr = _API[name]
    except KeyError:
        raise AttributeError(f"module 'evalkit.spark' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
