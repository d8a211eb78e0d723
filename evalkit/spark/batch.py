"""``load`` and ``evaluate`` on the driver: a case table as a Spark DataFrame, scored by the pandas engine.

What the driver does before any row is scored (so mistakes stop the run with the pandas engine's messages and
exit codes, not as a failed Spark task): finds the evaluator names the rows ask for (one small Spark job over
the ``evaluators`` column), resolves them (unknown names, import errors: exit 2), checks that LLM judges have a
judge model (exit 3), ships the custom evaluators, and builds the output schema. The rows are then scored
lazily, by ``mapInPandas``, when the result is written or collected.

Single-turn items are scored where they are, with no shuffle: no row waits for another. The rows of threads
are repartitioned by item and sorted by turn, so that all turns of a thread reach one engine call, in order.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import uuid
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.documents.json_input import parse_json_text
from evalkit.errors import DocumentError, EnvironmentConfigError
from evalkit.spark.frames import (
    INTEGER_COLUMNS,
    JSON_COLUMNS,
    case_schema,
    result_fields,
    scored_table,
    spark_frame,
)
from evalkit.spark.judge_keys import (
    cache_setting,
    executor_key,
    without_key,
    worker_share,
)
from evalkit.spark.requirements import require_pyspark

log = logging.getLogger("evalkit.spark")

#: Column metadata key under which an evaluated frame describes itself (on the ``status`` column), so that the
#: description survives ``write.parquet`` and comes back with ``spark.read.parquet``. The description is one JSON
#: text: Spark keeps metadata objects as unordered maps, and the document root must come back in its order
#: (results.json is written from it, byte for byte as the pandas engine writes it).
META_KEY = "evalkit"


def _with_meta(sdf, column: str, meta: dict):
    """``sdf`` with ``meta`` in ``column``'s metadata, as JSON text (see :data:`META_KEY`)."""
    return sdf.withMetadata(column, {META_KEY: json.dumps(meta, ensure_ascii=False)})


def _meta_of(sdf, column: str) -> dict:
    """The description in ``column``'s metadata (:func:`_with_meta`); a map written by an older evalkit is read
    as it is; none, or text that is not a JSON object: ``{}``."""
    from evalkit.documents.json_input import JsonInputError, parse_json

    value = sdf.schema[column].metadata.get(META_KEY) if column in sdf.columns else None
    if isinstance(value, str):
        try:
            value = parse_json(value)
        except JsonInputError:
            value = None
    return dict(value) if isinstance(value, dict) else {}


def load(spark, path: str | os.PathLike, *, validate: bool = True):
    """Read an eval document into a Spark DataFrame of its case table.

    The rows and columns are those of ``evalkit.load(path)``: ``item``, ``turn`` (null for single-turn items),
    ``thread``, ``prompt``, ``expected_response``, ``context``, ``response``, then the nested values as JSON
    text (``citations``, ``retrieval_executions``, ``tool_calls``, ``spans``, ``evaluators`` (each row's
    resolved evaluator map), ``extensions``, ``source``, ``thread_source``). The document root (metadata,
    defaults) rides in the ``item`` column's metadata, so ``evaluate`` and the results files keep it.

    The document is parsed on the driver (it is one JSON file): its Python process holds the parsed document,
    the case table and the rows' Spark-ready copy at once (670 MB at peak for 230,000 short rows), and the
    driver JVM the rows it hands to the executors. For a large document this, not the results files, is the
    driver's peak memory; a Parquet case table (``spark.read.parquet``) is read by the executors instead.
    """
    require_pyspark()
    from evalkit.documents.case_table import load as load_document

    table = load_document(path, validate=validate)
    meta = table.attrs.get("evalkit", {})
    frame = spark_frame(table)
    sdf = spark.createDataFrame(frame, schema=case_schema(frame.columns))
    about = {"document": meta.get("document"), "source": meta.get("source")}
    if meta.get("document_sha256"):
        about["document_sha256"] = meta["document_sha256"]
    about["threads"] = bool(table["turn"].notna().any())  # a document without threads needs no shuffle
    return _with_meta(sdf, "item", about)


def evaluate(
    sdf,
    *,
    evaluators: dict[str, Any] | list | None = None,
    custom_dir: str | os.PathLike | None = None,
    model_config: dict | None = None,
    concurrency: int = 8,
    cache: bool | str | os.PathLike = True,
    judge_timeout: float = 120.0,
    ship: bool = True,
):
    """Score a Spark DataFrame of case-table rows; returns a (lazy) Spark DataFrame with the result columns.

    The input needs ``prompt`` and ``response`` (a null response is an item with no answer, status ``error``);
    ``item`` and ``turn`` (integers) place the turns of threads; ``evaluators`` holds each row's evaluator map
    as JSON text (rows without one run only ``evaluators=``). Nested columns (struct, array, map) are turned
    into JSON text first. The output has every input column, then ``<key>``, ``<key>_result``,
    ``<key>_threshold``, ``<key>_reason``, ``<key>_error``, ``<key>_code``, ``<key>_details`` (JSON text) per
    evaluator, then ``status``, ``error_code``, ``error_message``: the columns of ``evalkit.evaluate``.

    Args:
        evaluators, model_config, judge_timeout: as ``evalkit.evaluate``. Ad-hoc callables are pickled to
            the executors with the job.
        custom_dir: the custom evaluators folder (default ``./custom-evaluators``). With ``ship=True`` the
            folders of the evaluators the rows use are shipped with the job (``SparkContext.addFile``); with
            ``ship=False`` the executors read ``custom_dir`` itself, which must then be a path every executor
            sees (shared storage: ``/dbfs/...``, an NFS mount).
        concurrency: the most judge calls in flight **per executor**; the cluster has up to executors x
            concurrency in flight. An executor scores with one Python worker per task slot (core), so each
            worker gets ``concurrency // slots`` (at least 1); 429s halve a worker's share on its own.
        cache: the judge cache of each executor: True (a SQLite file on the executor's local disk:
            ``$EVALKIT_CACHE_DIR``, else the user's cache folder), False (none), or the path of one SQLite file
            every worker opens (local disk only: SQLite locking is not safe on NFS, SMB, DBFS, blobfuse, s3fs).

    The judge key never enters the job's closure, plan, logs or results: executors read it from their
    environment (``EVALKIT_JUDGE_SECRET``, set here through PySpark's executor environment when the driver has
    a key, or the usual variables set with ``spark.executorEnv.*`` / the cluster's secret store).
    """
    return plan_evaluation(
        sdf,
        evaluators=evaluators,
        custom_dir=custom_dir,
        model_config=model_config,
        concurrency=concurrency,
        cache=cache,
        judge_timeout=judge_timeout,
        ship=ship,
    ).frame


@dataclasses.dataclass
class Evaluation:
    """A planned Spark evaluation: the lazy result ``frame`` and what the driver knows about it."""

    frame: Any
    specs: list[dict]
    resolved: dict
    judge: dict | None  # the judge model without its key, when LLM evaluators run
    stats: Any  # an accumulator of the executors' judge counters (JudgeStats), or None
    worker_concurrency: int = 1  # judge calls in flight per Python worker (the executor's share)
    price: Any = None  # the judge's price (``--price``), else the EVALKIT_PRICES entry or "price not set"

    def judge_summary(self) -> dict | None:
        """The ``dev.evalkit.judge`` provenance of the run, once the frame has been computed."""
        if self.judge is None:
            return None
        from types import SimpleNamespace

        from evalkit.judges.run_summary import JudgeRun

        value = self.stats.value if self.stats is not None else {}
        pool = SimpleNamespace(
            calls_made=value.get("calls", 0),
            cache_hits=value.get("cache_hits", 0),
            limit=SimpleNamespace(cuts=value.get("throttled", 0)),
        )
        for name, evaluator in self.resolved.items():
            if getattr(evaluator, "is_llm", False):
                evaluator.tokens = dict(value.get("tokens", {}).get(name) or {"prompt": 0, "completion": 0})
        return JudgeRun(self.judge, pool, self.price).summary(self.resolved)


def plan_evaluation(
    sdf,
    *,
    evaluators: dict[str, Any] | list | None = None,
    custom_dir: str | os.PathLike | None = None,
    model_config: dict | None = None,
    concurrency: int = 8,
    cache: bool | str | os.PathLike = True,
    judge_timeout: float = 120.0,
    ship: bool = True,
    ordered: bool = False,
) -> Evaluation:
    """``evaluate``, keeping what the driver learnt. ``ordered=True`` range-partitions all rows by item and
    sorts them by item and turn before scoring (one shuffle of every row), so that the written frame's files
    are in document order: what ``evalkit run --engine spark`` streams results.json from."""
    require_pyspark()
    from pyspark.sql import functions as F

    spark = sdf.sparkSession
    described = _document_meta(sdf)  # before _prepare_input: a changed column loses its metadata
    sdf, threads = _prepare_input(sdf)
    specs, resolved, judge_config = _resolve(sdf, evaluators, custom_dir, model_config)
    names = [s["name"] for s in specs]
    folder = Path(custom_dir) if custom_dir is not None else Path.cwd() / "custom-evaluators"
    from evalkit.spark.shipping import ship as ship_folder

    where = ship_folder(spark, folder, names) if ship else {"path": str(custom_dir or folder)}
    fields = result_fields(specs)
    produced = {name for name, _ in fields}
    passthrough = [c for c in sdf.columns if c not in produced]
    inputs = [c for c in sdf.columns if c not in produced or c in ("error_code", "error_message")]
    settings = {
        "token": uuid.uuid4().hex,
        "custom": where,
        "judge": without_key(judge_config),
        "cache": cache_setting(cache),
        "concurrency": worker_share(spark, concurrency),
        "judge_timeout": float(judge_timeout),
        "evaluators": evaluators,
        "fields": fields,
        "inputs": inputs,
        "passthrough": passthrough,
        "threads": False,
        "stats": _stats_accumulator(spark) if judge_config else None,
    }
    meta = {**described, "scored": specs}
    log.debug(
        "spark evaluation: evaluators %s; custom evaluators %s; %d judge call(s) in flight per Python worker",
        ", ".join(names) or "none", where, settings["concurrency"],
    )  # fmt: skip
    schema = _output_schema(sdf, passthrough, fields)
    key = (judge_config or {}).get("api_key")
    with executor_key(spark, key):
        if ordered:
            rows = sdf.repartitionByRange("item").sortWithinPartitions("item", "turn")
            parts = [rows.mapInPandas(_bound({**settings, "threads": True}), schema)]
        else:
            single = sdf.where(F.col("turn").isNull()) if threads else sdf
            parts = [single.mapInPandas(_bound(settings), schema)]
        if threads and not ordered:
            turns = (
                sdf.where(F.col("turn").isNotNull()).repartition("item").sortWithinPartitions("item", "turn")
            )
            parts.append(turns.mapInPandas(_bound({**settings, "threads": True}), schema))
    scored = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    scored = _with_meta(scored, "status", meta)
    return Evaluation(scored, specs, resolved, settings["judge"], settings["stats"], settings["concurrency"])


def _output_schema(sdf, passthrough: list[str], fields: list[tuple[str, str]]):
    from pyspark.sql.types import BooleanType, DoubleType, StringType, StructField, StructType

    kinds = {"boolean": BooleanType(), "double": DoubleType(), "string": StringType()}
    return StructType(
        [StructField(c, sdf.schema[c].dataType, True) for c in passthrough]
        + [StructField(name, kinds[kind], True) for name, kind in fields]
    )


def _bound(settings: dict):
    from evalkit.spark.executor import score_partition

    return functools.partial(score_partition, settings)


def _prepare_input(sdf):
    """Check the required columns and types; nested columns as JSON text; an ``item`` where there is none."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, IntegralType, MapType, StringType, StructType

    missing = [c for c in ("prompt", "response") if c not in sdf.columns]
    if missing:
        raise DocumentError(
            f"the DataFrame has no {', '.join(repr(c) for c in missing)} column: a case table needs 'prompt' "
            "and 'response' (see evalkit.spark.load for the columns)"
        )
    types = {f.name: f.dataType for f in sdf.schema.fields}
    about = _meta_of(sdf, "item")
    threads = "turn" in types and about.get("threads", True)
    if "item" not in types:
        if "turn" in types:
            raise DocumentError("the DataFrame has 'turn' but no 'item': the turns of a thread share an item")
        sdf = sdf.withColumn("item", F.monotonically_increasing_id())
    for column in INTEGER_COLUMNS:
        if column in types and not isinstance(types[column], IntegralType):
            raise DocumentError(f"column '{column}' must hold integers, not {types[column].simpleString()}")
    for name, kind in types.items():
        if isinstance(kind, (StructType, ArrayType, MapType)):
            sdf = sdf.withColumn(name, F.to_json(F.col(name)))
        elif name in JSON_COLUMNS and not isinstance(kind, StringType):
            raise DocumentError(f"column '{name}' must hold JSON text, not {kind.simpleString()}")
        elif name in INTEGER_COLUMNS and kind.typeName() != "long":
            sdf = sdf.withColumn(name, F.col(name).cast("bigint"))
    if "turn" not in types:
        sdf = sdf.withColumn("turn", F.lit(None).cast("bigint"))
    return sdf, threads


def _resolve(sdf, evaluators, custom_dir, model_config) -> tuple[list[dict], dict, dict | None]:
    """The evaluator specs of the run, in the pandas engine's order, and the judge model when one is needed."""
    from evalkit.engine import split_extra
    from evalkit.evaluators.registry import resolve_evaluators

    adhoc, extra = split_extra(evaluators)
    names_where = _names_where(sdf) if "evaluators" in sdf.columns else {}
    for name in extra:
        names_where.setdefault(name, "evaluators=")
    resolved = resolve_evaluators({n: w for n, w in names_where.items() if n not in adhoc}, custom_dir)
    resolved.update(adhoc)
    specs = [
        {
            "name": name,
            "key": ev.key,
            "score_field": ev.score_field,
            "has_threshold": ev.has_threshold,
            "is_llm": ev.is_llm,
        }
        for name, ev in resolved.items()
    ]
    llm = [s["name"] for s in specs if s["is_llm"]]
    if not llm:
        return specs, resolved, None
    from evalkit.judges.models import MISSING_JUDGE_MESSAGE, judge_config

    config = dict(model_config) if model_config else judge_config()
    if config is None:
        what = f"The LLM evaluator(s) {', '.join(llm)}"
        raise EnvironmentConfigError(MISSING_JUDGE_MESSAGE.format(what=what))
    return specs, resolved, config


#: Distinct evaluator maps read on the driver; beyond this many, the names are exploded in Spark instead.
DISTINCT_MAPS = 10_000


def _names_where(sdf) -> dict[str, str]:
    """Every evaluator name the rows ask for, in first-seen order (by item, turn, position in the map), with
    the place it first appears (``items[3]``, ``items[9].turns[1]``) for messages.

    Rows share few distinct maps (a document's defaults, a handful of overrides), so the distinct map texts
    and their first row are collected and read on the driver; a table with a map per row is exploded in Spark.
    """
    from pyspark.sql import functions as F

    turn = F.coalesce(F.col("turn"), F.lit(-1)).alias("turn")
    distinct = (
        sdf.select("item", turn, "evaluators")
        .groupBy("evaluators")
        .agg(F.min(F.struct("item", "turn")).alias("first"))
        .limit(DISTINCT_MAPS + 1)
        .collect()
    )
    firsts: dict[str, tuple] = {}
    if len(distinct) <= DISTINCT_MAPS:
        for row in distinct:
            try:
                value = parse_json_text(row["evaluators"]) if row["evaluators"] else {}
            except (TypeError, ValueError):
                continue  # the executors report the row with its text
            names = list(value) if isinstance(value, dict) else []
            for position, name in enumerate(names):
                place = (row["first"]["item"], row["first"]["turn"], position)
                firsts[name] = min(firsts.get(name, place), place)
    else:
        maps = F.from_json(F.col("evaluators"), "map<string,string>")
        exploded = sdf.select("item", turn, F.posexplode(F.map_keys(maps)))
        for row in (
            exploded.groupBy("col").agg(F.min(F.struct("item", "turn", "pos")).alias("first")).collect()
        ):
            firsts[row["col"]] = (row["first"]["item"], row["first"]["turn"], row["first"]["pos"])
    where = {}
    for name, (item, turn_index, _) in sorted(firsts.items(), key=lambda entry: entry[1]):
        where[name] = f"items[{item}]" if turn_index < 0 else f"items[{item}].turns[{turn_index}]"
    return where


def _document_meta(sdf) -> dict:
    """The document root and source a frame from ``load`` carries in its ``item`` column's metadata."""
    meta = _meta_of(sdf, "item")
    meta.pop("threads", None)
    return meta


def frame_meta(sdf) -> dict:
    """What an evaluated frame (or a results.parquet read back) says about itself: scored evaluators, document."""
    return _meta_of(sdf, "status")


def _stats_accumulator(spark):
    from evalkit.spark.stats import JudgeStats

    param = JudgeStats()
    return spark.sparkContext.accumulator(param.zero(), param)


def to_pandas(sdf, *, order: bool = True) -> pd.DataFrame:
    """Collect an evaluated Spark frame to the driver as the scored case table ``evalkit.evaluate`` returns
    (for small results, notebooks and tests; large ones belong in Parquet)."""
    meta = frame_meta(sdf)
    if order:
        sdf = sdf.orderBy("item", "turn")
    batch = sdf.toPandas()
    specs = meta.pop("scored", [])
    return scored_table(batch, specs, meta)
