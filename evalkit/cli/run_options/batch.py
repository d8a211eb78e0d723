"""``evalkit run --batch``: every judge call of the run through the OpenAI / Azure OpenAI Batch API.

The run uploads the judge requests as JSONL batches, waits for them (a progress bar shows their state; a
batch can take up to its 24 h window), and reads the answers into the judge cache; its judge cost is at the
batch price (``evalkit.judges.prices``). A run stopped while waiting picks the same batches up again when it
is run again (``evalkit.judges.batch``). The summary gets a ``Batch:`` line under the ``Judge:`` line.
"""

from __future__ import annotations

from evalkit.errors import EvalkitError


def add_batch_option(parser) -> None:
    parser.add_argument(
        "--batch",
        action="store_true",
        help="send the judge calls through the Batch API (OpenAI / Azure OpenAI global batch): about half the "
        "price, answers within 24 h; a stopped run resumes waiting for the same batches",
    )


def check_batch(args) -> None:
    if getattr(args, "batch", False) and args.engine == "spark":
        raise EvalkitError(
            "--batch runs with the pandas engine: drop --engine spark, or drop --batch to judge directly"
        )


def batch_line(judge: dict) -> str | None:
    """``Batch: 1 batch (batch_abc), 32 lines sent, 0 retried, 0 failed, waited 4.1 s``, for a batch run
    (with ``; the cost is at the batch price`` when the judge has a price)."""
    from evalkit.analysis.formatting import count

    report = judge.get("batch")
    if not report:
        return None
    ids = report["batches"] + [b for b in report["resumed"] if b not in report["batches"]]
    if not ids:
        return "Batch: no batch needed (every judgment was in the judge cache)"
    batches = count(len(ids), "batch", "batches")
    batches += " (" + ", ".join(ids[:3]) + (f", ... {len(ids) - 3} more" if len(ids) > 3 else "") + ")"
    if report["resumed"]:
        batches += ", " + count(len(report["resumed"]), "batch", "batches") + " resumed"
    priced = "; the cost is at the batch price" if (judge.get("cost") or {}).get("usd") is not None else ""
    return (
        f"Batch: {batches}, {count(report['lines'], 'line')} sent, {report['retried']} retried, "
        f"{report['failed']} failed, waited {report['waited_s']:.1f} s{priced}"
    )
