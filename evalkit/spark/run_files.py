"""A Spark run's files: ``results.parquet`` written by the executors, then, for documents, ``results.json``,
``results.csv`` and ``report.html`` streamed from it on the driver.

The executors write results.parquet (one file per partition, the scalable form). The evaluation is planned with
``ordered=True``, so the partitions are ranges of items sorted by item and turn, and the files, taken in item
order, are the document in order. The driver then reads them back with pyarrow in chunks of ``CHUNK_ROWS``
rows, re-cut at item boundaries so a thread's turns are gathered under it, and each chunk goes to the three
writers at once: its items to results.json (``write_document`` over a generator), its rows to results.csv, its
page columns to report.html's spool files in a temporary folder inside ``out`` (see ``StreamedReport``). What
these files cost the driver is one chunk, whatever the row count; a document itself is parsed on the driver
before the run (``evalkit.spark.batch.load``), which is most of the driver's memory for a large document.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from evalkit.documents.encoding.csv_cells import write_frame
from evalkit.documents.files.atomic import atomic_write
from evalkit.documents.results import results_metadata, write_document
from evalkit.documents.write_back import document_root, iter_items
from evalkit.reporting.csv_file import csv_frame
from evalkit.spark.frames import STATUS_COLUMNS, scored_table
from evalkit.spark.regroup import whole_items
from evalkit.spark.report import StreamedReport, Totals

#: Rows per chunk read back on the driver.
CHUNK_ROWS = 5_000
PARQUET_NAME = "results.parquet"


def write_run(run, out: str | os.PathLike, *, document: bool = True) -> dict:
    """Compute ``run`` (an ``Evaluation``) into ``out/results.parquet``; for a document also results.json,
    results.csv and report.html. Returns the paths, the run's ``Totals`` and its judge summary."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    parquet = out / PARQUET_NAME
    run.frame.write.mode("overwrite").parquet(str(parquet))
    judge = run.judge_summary()
    specs = run.specs
    meta = frame_meta(run.frame)
    if judge:
        meta["judge"] = judge
    totals = Totals(specs)
    paths = {"parquet": parquet}
    files = ordered_files(parquet)
    if not document:
        wanted = [c for spec in specs for c in _result_columns(spec)] + list(STATUS_COLUMNS)
        for chunk in read_chunks(files, columns=wanted):
            totals.add(scored_table(chunk, specs, meta))
        return {"paths": paths, "totals": totals, "judge": judge}
    paths.update(json=out / "results.json", csv=out / "results.csv", html=out / "report.html")
    template = scored_table(pd.DataFrame(), specs, meta)
    root = document_root(template)
    root["metadata"] = results_metadata(template, root.get("metadata") or {})
    report = StreamedReport(template, out)
    try:
        with atomic_write(paths["csv"], "w", encoding="utf-8", newline="") as csv_handle:
            written = [False]

            def items() -> Iterator[dict]:
                for chunk in whole_items(read_chunks(files)):
                    table = scored_table(chunk, specs, meta)
                    totals.add(table)
                    write_frame(csv_frame(table), csv_handle, header=not written[0])
                    written[0] = True
                    report.add(table)
                    yield from iter_items(table)

            root["items"] = items()
            with atomic_write(paths["json"]) as handle:
                write_document(root, handle)
            if not written[0]:
                write_frame(csv_frame(template), csv_handle)
        report.finish(paths["html"], template, totals, judge)
    finally:
        report.close()
    return {"paths": paths, "totals": totals, "judge": judge}


def _result_columns(spec: dict) -> list[str]:
    from evalkit.documents.columns import score_column
    from evalkit.evaluators.base import RESULT_COLUMNS

    key = spec["key"]
    return [score_column(key)] + [f"{key}_{part}" for part in RESULT_COLUMNS[1:]]


def frame_meta(sdf) -> dict:
    """What an evaluated frame says about itself (scored evaluators, document root, source), less ``scored``."""
    from evalkit.spark.batch import frame_meta as described

    meta = described(sdf)
    meta.pop("scored", None)
    return meta


def ordered_files(folder: Path) -> list[Path]:
    """The Parquet files of a written frame in item order (by their smallest item, then by name)."""
    import pyarrow.parquet as pq

    keyed = []
    for path in sorted(folder.glob("part-*.parquet")):
        metadata = pq.ParquetFile(path).metadata
        if metadata.num_rows == 0:
            continue
        column = metadata.schema.names.index("item")
        stats = metadata.row_group(0).column(column).statistics
        smallest = stats.min if stats is not None and stats.has_min_max else None
        keyed.append((smallest is None, smallest or 0, path.name, path))
    return [path for *_, path in sorted(keyed)]


def read_chunks(files: list[Path], columns: list[str] | None = None) -> Iterator[pd.DataFrame]:
    """The rows of ``files`` in order, ``CHUNK_ROWS`` at a time, as pandas frames (Spark's column types)."""
    import pyarrow.parquet as pq

    for path in files:
        handle = pq.ParquetFile(path)
        wanted = None if columns is None else [c for c in columns if c in handle.schema_arrow.names]
        for batch in handle.iter_batches(batch_size=CHUNK_ROWS, columns=wanted):
            yield batch.to_pandas()
