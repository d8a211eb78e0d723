"""``evalkit spans stream``: the online evaluation of ``spans serve`` as a Spark Structured Streaming job.

Spans come from a folder the OpenTelemetry Collector's file exporter fills (``--source DIR``) or from a Kafka
topic its Kafka exporter feeds (``--kafka-bootstrap``, ``--kafka-topic``); sessions close by
``session_window`` after ``--session-timeout``; sampling, filters and evaluators are those of ``spans serve``
(code-based ones, ``Builtin.<Name>`` LLM judges and custom ``<name>.json`` judges, judged on the executors
with ``--concurrency`` calls in flight per executor; the judge key reaches them through the executor
environment only); results and EMF metrics go to ``--sink DIR`` as JSONL parts (or Parquet), with a
checkpoint that makes a restarted job neither lose nor repeat a session. See ``evalkit.spark.streaming``.
"""

from __future__ import annotations

import signal
import threading
import time

from evalkit.analysis.formatting import count
from evalkit.cli.arguments.paths import output_folder
from evalkit.cli.run import parse_seconds
from evalkit.cli.spans.options import add_custom_dir, add_session_attribute
from evalkit.cli.spans.serve import parse_percentage
from evalkit.errors import EvalkitError


def register(commands) -> None:
    """Add ``stream`` to the ``spans`` subcommands."""
    st = commands.add_parser(
        "stream",
        help="online evaluation as a Spark Structured Streaming job (file folder or Kafka source)",
        description="Read OTLP spans from a folder of Collector file-exporter output or a Kafka topic, close "
        "sessions with Spark's session_window, evaluate the sampled sessions with span evaluators and write "
        "SINK/results/part-*.jsonl and SINK/metrics/part-*.jsonl (or Parquet), checkpointed for exactly-once "
        "results across restarts. Evaluators are those of spans serve: code-based, Builtin.<Name> LLM judges "
        "and custom NAME.json judges. LLM judges run on the executors with the judge model of the environment "
        "(OPENAI_BASE_URL/OPENAI_MODEL/OPENAI_API_KEY or AZURE_OPENAI_*; none: exit 3); its key reaches the "
        "executors through their environment only, never the plan, checkpoint or sink. The cluster has up to "
        "executors x --concurrency judge calls in flight. Needs evalkit[spark].",
    )
    source = st.add_mutually_exclusive_group(required=True)
    source.add_argument("--source", metavar="DIR", help="folder of OTLP JSON / JSONL span files")
    source.add_argument(
        "--kafka-bootstrap", metavar="SERVERS", help="Kafka bootstrap servers (host:port,...)"
    )
    st.add_argument(
        "--source-glob",
        metavar="PATTERN",
        help="read only the files matching PATTERN, e.g. 'spans-*.json': the Collector's rotated files, not "
        "the one it is appending to",
    )
    st.add_argument("--kafka-topic", metavar="TOPIC", help="Kafka topic of the Collector's kafka exporter")
    st.add_argument(
        "--kafka-encoding",
        choices=("otlp_proto", "otlp_json"),
        default="otlp_proto",
        help="the exporter's encoding (default otlp_proto, the exporter's default)",
    )
    st.add_argument(
        "--kafka-option",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="extra Kafka reader option, e.g. kafka.security.protocol=SASL_SSL (repeatable)",
    )
    st.add_argument(
        "--sink",
        metavar="DIR",
        type=output_folder,
        required=True,
        help="results folder (results/ and metrics/ parts)",
    )
    st.add_argument(
        "--checkpoint", metavar="DIR", type=output_folder, help="checkpoint folder (default SINK/_checkpoint)"
    )
    st.add_argument(
        "--format", choices=("jsonl", "parquet"), default="jsonl", help="sink format (default jsonl)"
    )
    st.add_argument(
        "--evaluator",
        metavar="NAME[:LEVEL]",
        action="append",
        default=[],
        help="span evaluator: Builtin.<Name> (AgentCore built-in LLM judge), custom-evaluators/NAME/NAME.py "
        "(code-based) or custom-evaluators/NAME/NAME.json (LLM judge) (repeat, up to 10)",
    )
    add_custom_dir(st)
    st.add_argument(
        "--no-ship",
        action="store_true",
        help="do not ship the evaluators with the job: the executors read --custom-dir (shared storage)",
    )
    st.add_argument("--session-timeout", metavar="DURATION", default="15m", help="session gap (default 15m)")
    st.add_argument(
        "--watermark",
        metavar="DURATION",
        default="1m",
        help="how late a span may arrive, behind the latest span end seen (default 1m)",
    )
    st.add_argument(
        "--sampling",
        metavar="PERCENT",
        type=parse_percentage,
        default=100.0,
        help="percentage of sessions (0-100)",
    )
    st.add_argument(
        "--filter",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="as spans serve: KEY=VALUE, KEY!=VALUE, KEY~=VALUE, KEY!~=VALUE, KEY>N, KEY<N, KEY>=N, KEY<=N "
        "(AgentCore's eight operators; at most 5, all must match)",
    )
    st.add_argument(
        "--timeout", metavar="SECONDS", type=parse_seconds, default=300.0, help="per evaluator call"
    )
    st.add_argument(
        "--concurrency",
        metavar="N",
        type=int,
        default=8,
        help="LLM judge calls in flight per executor (default 8; shared by its task slots, each backing off "
        "on 429s); the cluster has up to executors x N",
    )
    st.add_argument(
        "--judge-timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=120.0,
        help="per LLM judge call (default 120)",
    )
    st.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read or write the judge cache (default: one per executor, on its local disk)",
    )
    st.add_argument("--namespace", default="Bedrock-AgentCore/Evaluations", help="EMF metric namespace")
    st.add_argument("--master", metavar="URL", help="Spark master (default: spark-submit's, else local[*])")
    st.add_argument("--once", action="store_true", help="process the spans there now, then stop")
    st.add_argument("--trigger-interval", metavar="DURATION", default="10s", help="micro-batch interval")
    st.add_argument(
        "--max-files-per-trigger", metavar="N", type=int, help="files per micro-batch (backfills)"
    )
    add_session_attribute(st)
    st.set_defaults(func=stream_main)


def stream_main(args) -> int:
    from evalkit.cli.run_options.spark import spark_errors
    from evalkit.spans.online.session_tracking import check_sampling
    from evalkit.spark.requirements import require_pyspark

    check_sampling(args.sampling, "--sampling")  # AgentCore's range, as spans serve: before Spark starts
    require_pyspark()
    from evalkit.spark.session import get_session
    from evalkit.spark.stream_sink import read_parts
    from evalkit.spark.streaming import start_stream

    kafka = None
    if args.kafka_bootstrap:
        kafka = {
            "bootstrap_servers": args.kafka_bootstrap,
            "topic": args.kafka_topic,
            "encoding": args.kafka_encoding,
            "options": dict(_option(text) for text in args.kafka_option),
        }
    spark = get_session(args.master, app_name="evalkit spans stream")
    started = time.perf_counter()
    with spark_errors(args.source or args.kafka_topic):
        query = start_stream(
            spark,
            sink=args.sink,
            evaluators=args.evaluator,
            source=args.source,
            kafka=kafka,
            custom_dir=args.custom_dir,
            session_timeout=args.session_timeout,
            watermark=args.watermark,
            sampling=args.sampling,
            filters=args.filter,
            timeout=args.timeout,
            namespace=args.namespace,
            checkpoint=args.checkpoint,
            output_format=args.format,
            once=args.once,
            trigger_interval=args.trigger_interval,
            max_files_per_trigger=args.max_files_per_trigger,
            ship=not args.no_ship,
            source_glob=args.source_glob,
            concurrency=max(1, args.concurrency),
            cache=not args.no_cache,
            judge_timeout=args.judge_timeout,
            session_attribute=args.session_attribute,
        )
        where = args.source or f"Kafka topic {args.kafka_topic}"
        print(
            f"Streaming spans from {where} to {args.sink}" + ("" if args.once else "; Ctrl-C to stop"),
            flush=True,
        )
        _wait(query)
    if args.format == "jsonl":
        results = read_parts(args.sink)
        sessions = len({r["attributes"]["session.id"] for r in results})
        print(
            f"{count(len(results), 'result')} for {count(sessions, 'session')} in {args.sink} "
            f"({time.perf_counter() - started:.1f} s)"
        )
    return 0


def _wait(query) -> None:
    """Until the query ends (``--once``), or SIGTERM / Ctrl-C stops it; its failure is raised."""
    stopped = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        while query.isActive and not stopped.is_set():
            query.awaitTermination(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        if query.isActive:
            query.stop()
    if query.exception() is not None:
        raise query.exception()


def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise EvalkitError(f"--kafka-option {text!r}: write KEY=VALUE")
    return key.strip(), value
