"""The sink of ``spans stream``: each micro-batch's results as ``results.jsonl`` / ``metrics.jsonl`` parts (or
Parquet), written so that a query killed and restarted produces each session's results exactly once.

Spark's ``foreachBatch`` is at-least-once: a batch whose output was written but whose commit was not recorded
(the driver died in between) runs again after a restart, with the same input and the same state, hence the same
sessions. Every batch therefore writes files named by its batch id, each replaced atomically: a replay rewrites
the same files with the same content instead of adding to them. Rows are sorted (session end, session, entry)
and numbered after the last line of the previous part, so even the ``sequence`` numbers are those of the first
attempt.

Layout of the sink folder: ``results/part-<batch>.jsonl`` (one ``gen_ai.evaluation.result`` event per line) and
``metrics/part-<batch>.jsonl`` (CloudWatch EMF), the lines ``spans serve`` writes to results.jsonl and
metrics.jsonl; or, with ``format="parquet"``, ``results.parquet/batch=<batch>/`` with one row per result.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from evalkit.documents.files.atomic import atomic_write
from evalkit.spans.online.exports import NAMESPACE, metric_record, result_event
from evalkit.spans.online.exports import last_sequence as last_export_sequence

_PART = re.compile(r"part-(\d+)\.jsonl$")
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def part_name(batch_id: int) -> str:
    return f"part-{batch_id:010d}.jsonl"


class SessionSink:
    """``foreachBatch`` function writing a micro-batch of result rows (see ``stream_executor.RESULT_SCHEMA``)."""

    def __init__(self, folder: str | os.PathLike, output_format: str = "jsonl", namespace: str = NAMESPACE):
        self.folder = Path(folder)
        self.format = output_format
        self.namespace = namespace
        self.written = 0  # result lines written by this process (replays included)

    def __call__(self, batch, batch_id: int) -> None:
        from pyspark.sql import functions as F

        if self.format == "parquet":
            target = self.folder / "results.parquet" / f"batch={batch_id}"
            batch.drop("position").write.mode("overwrite").parquet(str(target))
            return
        ordered = (
            batch.select(F.unix_millis("session_end").alias("end_ms"), "session_id", "position", "entry")
            .repartition(1)
            .sortWithinPartitions("end_ms", "session_id", "position")
        )
        rows = (
            ordered.toLocalIterator()
        )  # one job; the evaluation upstream runs in parallel before the shuffle
        first = next(rows, None)
        if first is None:
            return
        results_dir, metrics_dir = self.folder / "results", self.folder / "metrics"
        sequence = last_sequence(results_dir, batch_id)
        name = part_name(batch_id)
        with atomic_write(results_dir / name) as results, atomic_write(metrics_dir / name) as metrics:
            for row in _chain(first, rows):
                sequence += 1
                timestamp = row["end_ms"] / 1000.0
                entry = json.loads(row["entry"])
                results.write(_dumps(result_event(sequence, timestamp, entry)) + "\n")
                record = metric_record(self.namespace, sequence, timestamp, entry)
                if record is not None:
                    metrics.write(_dumps(record) + "\n")
                self.written += 1


def _chain(first, rest):
    yield first
    yield from rest


def last_sequence(folder: Path, batch_id: int) -> int:
    """The last ``sequence`` written by the batches before ``batch_id`` (0 when there is none)."""
    earlier = sorted(
        (int(m.group(1)), path)
        for path in (folder.iterdir() if folder.is_dir() else [])
        if (m := _PART.match(path.name)) and int(m.group(1)) < batch_id
    )
    return last_export_sequence(earlier[-1][1]) if earlier else 0


def read_parts(folder: str | os.PathLike, kind: str = "results") -> list[dict]:
    """Every line of the ``kind`` parts of a sink folder, in batch order (for tests and notebooks)."""
    directory = Path(folder) / kind
    if not directory.is_dir():
        return []
    lines = []
    for path in sorted(p for p in directory.iterdir() if _PART.match(p.name)):
        lines.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return lines
