"""``spans stream``: online evaluation of agent spans as a Spark Structured Streaming query.

The query, step by step (the work of ``spans serve``, spread over a cluster):

1. **Source.** A folder of OTLP JSON / JSONL files as the OpenTelemetry Collector's ``file`` exporter writes
   them (one ``ExportTraceServiceRequest`` per line; flat span documents per line work too), read by Spark's
   file source, which picks up each new file once; or a Kafka topic fed by the Collector's ``kafka`` exporter
   (``encoding: otlp_json`` or the default ``otlp_proto``; needs Spark's Kafka connector).
2. **Spans.** Each line is read into span documents by ``evalkit.spans.reading.loading``; spans are keyed by their
   ``session.id`` and dropped unless the session is in the ``sampling`` percentage (the same sha256 split as
   ``spans serve``, so both decide alike for a session).
3. **Sessions.** Event time is the span's end time. Spans later than the watermark are dropped, duplicates
   (exporter retries) removed, and ``session_window`` with the session timeout as its gap closes a session
   once the watermark (the latest span end seen, minus ``watermark``) passes its last span plus the timeout.
4. **Evaluation.** Each closed session that passes the filters is evaluated by the span evaluators of
   ``spans serve``, up to 10, mixed: code-based ones (``custom-evaluators/<name>/<name>.py``, imported once per
   Python worker), AgentCore's LLM-as-judge built-ins (``Builtin.<Name>[:LEVEL]``) and custom judges
   (``custom-evaluators/<name>/<name>.json``), and gives the AgentCore-style result entries ``spans serve``
   gives. The judges run in the executors: one ``SpanJudges`` (judge pool with its adaptive concurrency and
   429 back-off, judge cache, HTTP client) per Python worker and query, at most ``concurrency`` calls in
   flight per executor (so executors x concurrency for the cluster). The judge model's settings travel with
   the query, its key only in the executors' environment (``judge_keys``): never in the plan, the checkpoint,
   logs or results.
5. **Sink.** ``results`` / ``metrics`` JSONL parts (or Parquet) per micro-batch, idempotent by batch id; with
   the checkpoint (offsets and the open sessions' state) a killed and restarted query neither loses nor
   repeats a session (``stream_sink``).
"""

from __future__ import annotations

import functools
import os
import uuid
from pathlib import Path

from evalkit.errors import EnvironmentConfigError, EvalkitError
from evalkit.spans.evaluation import MAX_EVALUATORS
from evalkit.spans.online.exports import NAMESPACE
from evalkit.spans.online.session_tracking import parse_duration, parse_filters
from evalkit.spark.requirements import require_pyspark

KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:{version}"
ENCODINGS = ("otlp_json", "otlp_proto")


def start_stream(
    spark,
    *,
    sink: str | os.PathLike,
    evaluators: list[str],
    source: str | os.PathLike | None = None,
    kafka: dict | None = None,
    custom_dir: str | os.PathLike | None = None,
    session_timeout: str | float = "15m",
    watermark: str | float = "1m",
    sampling: float = 100.0,
    filters: list[str] = (),
    timeout: float = 300.0,
    namespace: str = NAMESPACE,
    checkpoint: str | os.PathLike | None = None,
    output_format: str = "jsonl",
    once: bool = False,
    trigger_interval: str | float = "10s",
    max_files_per_trigger: int | None = None,
    ship: bool = True,
    source_glob: str | None = None,
    model_config: dict | None = None,
    concurrency: int = 8,
    cache: bool | str | os.PathLike = True,
    judge_timeout: float = 120.0,
    session_attribute: str | None = None,
):
    """Start the streaming query; returns Spark's ``StreamingQuery`` (``awaitTermination()``, ``stop()``).

    ``source`` is a folder of span files, or ``kafka`` holds ``bootstrap_servers``, ``topic`` and optionally
    ``encoding`` (``otlp_proto``, the exporter's default, or ``otlp_json``) and ``options`` (extra reader
    options, e.g. ``{"kafka.security.protocol": "SASL_SSL"}``). ``evaluators`` are the span evaluator specs
    ``spans serve`` takes (at most 10): ``Builtin.<Name>[:LEVEL]``, or ``NAME[:LEVEL]`` for a code-based
    (``NAME.py``) or LLM-as-judge (``NAME.json``) evaluator in ``custom_dir``, whose folders are shipped to the
    executors (or, with ``ship=False``, read there from ``custom_dir`` on shared storage). ``once`` processes
    what is there now and stops (Trigger.AvailableNow); otherwise a micro-batch runs every
    ``trigger_interval``. The checkpoint defaults to ``<sink>/_checkpoint``. ``source_glob`` (Spark's ``pathGlobFilter``) picks the files to read,
    e.g. ``spans-*.json`` for the Collector's rotated files and not the one it is still appending to.

    LLM judges need a judge model: ``model_config`` or the environment's (``OPENAI_BASE_URL`` /
    ``OPENAI_MODEL`` / ``OPENAI_API_KEY``, ``AZURE_OPENAI_ENDPOINT`` / ...); none is an
    ``EnvironmentConfigError`` before the query starts. ``concurrency`` is the most judge calls in flight per
    executor (split among its task slots, each Python worker's share backing off on 429s on its own);
    ``cache`` is the judge cache of each executor (True: a SQLite file on its local disk, False: none, or a
    path every worker opens); ``judge_timeout`` bounds one judge call, retries included. ``session_attribute``
    names the attribute that holds the session id (default: ``session.id``, ``gen_ai.conversation.id`` and the
    others ``evalkit.spans.reading.session_ids`` lists; a trace with none is its own session).
    """
    require_pyspark()
    from pyspark.sql import functions as F

    from evalkit.spark.judge_keys import cache_setting, executor_key, without_key, worker_share
    from evalkit.spark.shipping import ship as ship_folder
    from evalkit.spark.stream_executor import RESULT_SCHEMA, SPAN_SCHEMA, evaluate_sessions, parse_lines
    from evalkit.spark.stream_sink import SessionSink

    evaluators = list(evaluators)
    folder = Path(custom_dir) if custom_dir is not None else Path.cwd() / "custom-evaluators"
    names, judge = _check(evaluators, folder, sampling, filters, output_format, model_config)
    gap, late = (
        parse_duration(session_timeout),
        parse_duration(watermark) if watermark not in (0, "0") else 0.0,
    )
    where = ship_folder(spark, folder, names) if ship else {"path": str(folder)}
    encoding = (kafka or {}).get("encoding", "otlp_proto") if kafka else "lines"
    settings = {
        "token": uuid.uuid4().hex,
        "custom": where,
        "evaluators": evaluators,
        "filters": list(filters),
        "sampling": float(sampling),
        "timeout": float(timeout),
        "encoding": encoding,
        "judge": without_key(judge),
        "cache": cache_setting(cache),
        "concurrency": worker_share(spark, concurrency),
        "judge_timeout": float(judge_timeout),
        "session_attribute": session_attribute,
    }
    lines = _lines(spark, source, kafka, max_files_per_trigger, source_glob)
    spans = lines.mapInPandas(functools.partial(parse_lines, settings), SPAN_SCHEMA)
    spans = spans.withWatermark("end_time", f"{late} seconds").dropDuplicatesWithinWatermark(
        ["trace_id", "span_id"]
    )
    sessions = (
        spans.groupBy(F.session_window("end_time", f"{gap} seconds"), "session_id")
        .agg(F.max("end_time").alias("session_end"), F.collect_list("document").alias("documents"))
        .select("session_id", "session_end", "documents")
    )
    with executor_key(spark, (judge or {}).get("api_key")):
        results = sessions.mapInPandas(functools.partial(evaluate_sessions, settings), RESULT_SCHEMA)
    sink = Path(sink)
    writer = (
        results.writeStream.foreachBatch(SessionSink(sink, output_format, namespace))
        .outputMode("append")
        .option("checkpointLocation", str(Path(checkpoint) if checkpoint else sink / "_checkpoint"))
        .queryName(f"evalkit-spans-{settings['token'][:8]}")
    )
    if once:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{parse_duration(trigger_interval)} seconds")
    return writer.start()


def _check(
    evaluators: list[str], folder: Path, sampling: float, filters, output_format: str, model_config=None
) -> tuple[list[str], dict | None]:
    """Every configuration mistake before the query starts: evaluators resolve (as ``spans serve`` resolves
    them, with its messages), filters parse, ranges hold, LLM judges have a judge model (as ``spans serve``:
    ``EnvironmentConfigError``, exit 3). Returns the evaluators' names and the judge model (None without judges).
    """
    from evalkit.spans.evaluator_specs import online_evaluator
    from evalkit.spans.llm_judges.judge_runner import SpanJudges, needs_judges

    if not evaluators:
        raise EvalkitError("spans stream needs at least one --evaluator")
    if len(evaluators) > MAX_EVALUATORS:
        raise EvalkitError(
            f"{len(evaluators)} evaluators: an online evaluation takes at most {MAX_EVALUATORS}"
        )
    if not 0 <= sampling <= 100:
        raise EvalkitError(f"sampling {sampling!r} is not a percentage between 0 and 100")
    if output_format not in ("jsonl", "parquet"):
        raise EvalkitError(f"output format {output_format!r}: use jsonl or parquet")
    parse_filters(filters)
    loaded = [online_evaluator(spec, folder) for spec in evaluators]
    keys = [(e.name, e.level) for e in loaded]
    if len(set(keys)) != len(keys):
        raise EvalkitError(f"an evaluator is named twice: {', '.join(evaluators)}")
    llm = needs_judges(loaded)
    judge = None
    if llm:  # the check spans serve makes, with its message; no cache is opened on the driver
        judges = SpanJudges(model_config, cache=False, what=f"Span evaluator {llm[0]}")
        judge = judges.model_config
    return [e.name for e in loaded], judge


def _lines(spark, source, kafka: dict | None, max_files: int | None, glob: str | None = None):
    """The raw lines (column ``value``) of the file folder or the Kafka topic."""
    if (source is None) == (kafka is None):
        raise EvalkitError("give either a source folder or a Kafka topic")
    if kafka is None:
        folder = Path(source)
        if not folder.is_dir():
            raise EvalkitError(f"{folder}: no such folder (spans stream reads the files put into a folder)")
        reader = spark.readStream.format("text")
        if max_files:
            reader = reader.option("maxFilesPerTrigger", int(max_files))
        if glob:
            reader = reader.option("pathGlobFilter", glob)
        return reader.load(str(folder))
    if kafka.get("encoding", "otlp_proto") not in ENCODINGS:
        raise EvalkitError(f"Kafka encoding {kafka.get('encoding')!r}: use otlp_proto or otlp_json")
    reader = spark.readStream.format("kafka").options(**kafka_options(kafka))
    try:
        return reader.load().select("value")
    except Exception as exc:  # noqa: BLE001 - pyspark's AnalysisException, told apart by its message
        if "DATA_SOURCE_NOT_FOUND" in str(exc) or "Failed to find data source" in str(exc):
            package = KAFKA_PACKAGE.format(version=spark.version)
            raise EnvironmentConfigError(
                f"Spark's Kafka connector is not on the classpath: start Spark with --packages {package} "
                f"(or spark.jars.packages={package}; on Databricks and Synapse it is built in)."
            ) from None
        raise


def kafka_options(kafka: dict) -> dict[str, str]:
    """Reader options for the Kafka source: servers, topic, from the earliest offset, plus ``options``."""
    if not kafka.get("bootstrap_servers") or not kafka.get("topic"):
        raise EvalkitError("Kafka needs bootstrap servers and a topic (--kafka-bootstrap, --kafka-topic)")
    options = {
        "kafka.bootstrap.servers": str(kafka["bootstrap_servers"]),
        "subscribe": str(kafka["topic"]),
        "startingOffsets": "earliest",
        "failOnDataLoss": "true",
    }
    options.update({str(k): str(v) for k, v in (kafka.get("options") or {}).items()})
    return options
