"""``evalkit run DOC --engine spark``: the run on Apache Spark, with the pandas engine's outputs and exit codes.

``DOC`` is an eval document (JSON), or a case table in Parquet (a ``.parquet`` file or a folder of Parquet
files, such as a Spark job writes). The executors write ``OUT/results.parquet``; for a document the driver then
streams ``results.json``, ``results.csv`` and ``report.html`` from it (see ``evalkit.spark.run_files``). The
files are written into a staging folder beside ``OUT`` that replaces it once complete
(``documents.files.folder_swap``): a run killed at any moment leaves the complete old set or the complete new one. The
printed summary, ``--fail-under`` and the exit codes are those of the pandas engine.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from evalkit import errors
from evalkit.analysis.formatting import count, percent
from evalkit.errors import EvalkitError

_WORKER_ERROR = re.compile(r"evalkit\.errors\.(\w+): (.+)")


def run_spark(args, model_config: dict | None, print_summary) -> int:
    """Run ``evalkit run``'s arguments on Spark; ``model_config`` and ``print_summary`` come from ``cli.run``."""
    from evalkit.spark.requirements import require_pyspark

    require_pyspark()
    if args.agent:
        raise EvalkitError("--agent runs with the pandas engine only: drop --engine spark to call the agent")
    if getattr(args, "samples", 1) > 1:
        raise EvalkitError(
            "--samples runs with the pandas engine only: drop --engine spark to judge rows K times"
        )
    started = time.perf_counter()
    path = Path(args.document)
    is_table = _is_parquet(path)
    from evalkit.cli.run_options.evaluators import extra_evaluators
    from evalkit.documents.files.folder_swap import replaced_folder
    from evalkit.reporting.run_files import RUN_FILES
    from evalkit.spark.batch import load, plan_evaluation
    from evalkit.spark.run_files import PARQUET_NAME, write_run
    from evalkit.spark.session import get_session

    spark = get_session(args.master)
    with spark_errors(path):
        sdf = spark.read.parquet(str(path)) if is_table else load(spark, path)
        run = plan_evaluation(
            sdf,
            custom_dir=args.custom_dir,
            evaluators=extra_evaluators(args),
            model_config=model_config,
            concurrency=max(1, args.concurrency),
            cache=not args.no_cache,
            judge_timeout=args.judge_timeout,
            ordered=True,
        )
        run.price = getattr(args, "price", None)  # --price: the cost in the judge summary
        out = Path(args.out) if args.out else Path("results") / path.stem
        try:
            # the set is staged beside OUT and swapped in whole, as the pandas engine does
            with replaced_folder(out, owned=(*RUN_FILES, PARQUET_NAME)) as staging:
                written = write_run(run, staging, document=not is_table)
        except OSError as exc:
            raise EvalkitError(f"cannot write results to {out}: {exc.strerror or exc}") from None
    totals, judge = written["totals"], written["judge"]
    paths = {kind: out / path.name for kind, path in written["paths"].items()}
    counts = totals.status_counts()
    total = counts["total"]
    rate = counts["pass"] / total if total else 0.0
    print(
        f"{count(total, 'row')}: {counts['pass']} pass, {counts['fail']} fail, {counts['partial']} partial, "
        f"{counts['error']} error (pass rate {percent(rate)}) in {time.perf_counter() - started:.2f} s "
        f"(Spark {spark.sparkContext.master})"
    )
    print_summary(totals.summary(judge))
    if judge:
        from evalkit.cli.arguments.judge_cost import judge_line

        print(judge_line(judge))
    print(f"Parquet: {paths['parquet']}")
    if not is_table:
        print(f"Results: {paths['json']}")
        print(f"CSV:     {paths['csv']}")
        print(f"Report:  {paths['html']}")
    if args.fail_under is not None and rate < args.fail_under:
        print(
            f"Gate failed: pass rate {rate:.1%} is below --fail-under {args.fail_under:.1%}", file=sys.stderr
        )
        return 1
    return 0


def _is_parquet(path: Path) -> bool:
    if path.suffix == ".parquet":
        return True
    return path.is_dir() and any(path.glob("*.parquet"))


class spark_errors:
    """Spark's failures as the user's mistakes they are: a missing table, an evalkit error in a worker."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None or isinstance(exc, EvalkitError):
            return False
        from pyspark.errors import AnalysisException, PythonException

        if isinstance(exc, AnalysisException) and "PATH_NOT_FOUND" in str(exc):
            raise EvalkitError(f"{self.path}: no such file or folder") from None
        from pyspark.errors import StreamingQueryException

        spark_kinds = (AnalysisException, PythonException, StreamingQueryException)
        if isinstance(exc, spark_kinds) or "Py4J" in type(exc).__name__:
            match = _WORKER_ERROR.search(str(exc))
            if match:
                cls = getattr(errors, match.group(1), EvalkitError)
                cls = cls if isinstance(cls, type) and issubclass(cls, EvalkitError) else EvalkitError
                raise cls(match.group(2).strip()) from None
            if isinstance(exc, AnalysisException):
                raise EvalkitError(f"{self.path}: {str(exc).splitlines()[0]}") from None
        return False
