"""The SparkSession of the command line: the active one, or a new one on ``--master`` (default local[*]).

In local mode the Python workers run this interpreter (``PYSPARK_PYTHON`` defaults to ``sys.executable``), so
the workers import the same evalkit; on a cluster, evalkit must be installed on the executors (a cluster
library, ``pip install evalkit[spark]`` in the image, or ``--py-files``).
"""

from __future__ import annotations

import os
import sys

from evalkit.spark.requirements import require_pyspark


def get_session(master: str | None = None, app_name: str = "evalkit", config: dict | None = None):
    """The active SparkSession, else a new one: ``master`` (default: spark-submit's, else ``local[*]``)."""
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # started by spark-submit: its master and config rule
    master = master or (None if submitted else "local[*]")
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    defaults = {
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
    }
    if master and master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        # one machine: a few shuffle partitions (a streaming job keeps its count in the checkpoint)
        defaults["spark.sql.shuffle.partitions"] = "8"
    for key, value in {**defaults, **(config or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
