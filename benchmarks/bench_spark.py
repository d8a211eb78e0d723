"""Spark benchmark: evalkit.spark.evaluate on local[2] against the pandas engine, driver memory, spans stream.

Prints numbers; asserts nothing (targets live in the issue, not in timed unit tests). Each measurement runs in
its own process, so peak memory (the high-water mark of resident memory) belongs to that measurement alone.

    .venv/bin/python benchmarks/bench_spark.py                       # 1,000,000 rows, 20,000 sessions
    .venv/bin/python benchmarks/bench_spark.py --rows 200000 --skip-pandas

Measured:
* batch: a generated case table in Parquet (ExactMatch + PartialMatch + Citations on every row) scored by
  ``evalkit.spark.evaluate(spark.read.parquet(...))`` and written to Parquet; rows per second exclude the JVM's
  start and a warm-up run on 20,000 rows (Python workers started, modules imported). Driver memory is the peak RSS of the driver's Python process and of its JVM (in local mode the JVM
  also runs the executors' tasks; the Python workers that score the rows are separate processes).
* cli: ``evalkit run TABLE.parquet --engine spark`` (ordered output plus the totals pass on the driver).
* document: ``evalkit run DOC.json --engine spark`` on a generated eval document of ``--doc-items`` items
  (ExactMatch + PartialMatch, recorded responses, every tenth item a thread): the driver parses the document,
  then streams results.json, results.csv and report.html from results.parquet. Its line is the driver's peak
  RSS for that many rows, report included (the document's parse and case table are most of it).
* pandas: the same table read with ``pandas.read_parquet`` and scored by ``evalkit.evaluate``, one process.
* stream: ``evalkit spans stream --once`` over Collector-style OTLP JSONL files, spans per second.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[1]
WORDS = (
    "policy leave vacation days salary benefits employee manager approval portal form travel expense "
    "report remote work office hours contract review payroll bonus insurance health dental vision plan"
).split()
EVALUATORS = json.dumps({"ExactMatch": {}, "PartialMatch": {}, "Citations": {"citation_format": "mixed"}})
CHUNK = 100_000


def write_table(path: Path, rows: int, seed: int = 7) -> None:
    """A case table of ``rows`` single-turn items, written 100,000 rows at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed)
    schema = pa.schema(
        [("item", pa.int64()), ("prompt", pa.string()), ("expected_response", pa.string()),
         ("response", pa.string()), ("citations", pa.string()), ("evaluators", pa.string())]
    )  # fmt: skip
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, CHUNK):
            items, prompts, expected, responses = [], [], [], []
            for i in range(start, min(rows, start + CHUNK)):
                answer = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) + "."
                words = answer.rstrip(".").split()
                if i % 3:
                    rng.shuffle(words)
                    response = " ".join(words[: max(1, len(words) - rng.randint(0, 6))]) + "."
                else:
                    response = answer
                items.append(i)
                prompts.append(f"Question {i}: {words[0]}?")
                expected.append(answer)
                responses.append(response + ("", "[1]", "\u30101:0\u2020doc\u3011")[i % 3])
            n = len(items)
            writer.write_table(
                pa.table([items, prompts, expected, responses, ["[]"] * n, [EVALUATORS] * n], schema=schema)
            )


def write_document(path: Path, items: int, seed: int = 7) -> int:
    """An eval document of ``items`` items (every tenth a thread of 2-3 turns); its number of rows."""
    rng = random.Random(seed)
    rows = 0

    def entry(i: int) -> dict:
        answer = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
        roll = rng.random()
        if roll < 0.4:
            response = answer
        elif roll < 0.8:
            response = " ".join(answer.split()[:4] + [rng.choice(WORDS) for _ in range(3)])
        else:
            response = " ".join(rng.choice(WORDS) for _ in range(8))
        case = {
            "prompt": f"Question {i}: {rng.choice(WORDS)}?",
            "response": response,
            "expected_response": answer,
        }
        if rng.random() < 0.02:
            del case["response"]  # an error row
        return case

    entries = []
    for i in range(items):
        if i % 10 == 3:
            turns = [entry(i * 10 + t) for t in range(rng.randint(2, 3))]
            entries.append({"name": f"thread {i}", "turns": turns})
            rows += len(turns)
        else:
            entries.append(entry(i))
            rows += 1
    document = {
        "schemaVersion": "1.11.0",
        "metadata": {"name": f"bench {items}"},
        "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}},
        "items": entries,
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    return rows


def write_spans(folder: Path, sessions: int, spans_per_session: int = 4, per_file: int = 5_000) -> int:
    """OTLP JSONL files as the Collector's file exporter writes them: one export request per line."""
    folder.mkdir(parents=True, exist_ok=True)
    t0 = 1_760_000_000_000_000_000
    lines = []
    written = 0
    for s in range(sessions + 1):
        session = f"session-{s}" if s < sessions else "clock"  # the last one moves event time past the rest
        when = t0 + (s * 10**9 if s < sessions else (sessions + 7200) * 10**9)
        spans = []
        for k in range(spans_per_session if s < sessions else 1):
            attributes = [{"key": "session.id", "value": {"stringValue": session}}]
            if k == 1:
                attributes.append({"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}})
            spans.append({"traceId": f"{s + 1:032x}", "spanId": f"{k + 1:016x}", "name": "invoke_agent",
                          "startTimeUnixNano": str(when + k * 1000), "endTimeUnixNano": str(when + k * 1000 + 500),
                          "attributes": attributes})  # fmt: skip
        resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]}
        request = {
            "resourceSpans": [
                {"resource": resource, "scopeSpans": [{"scope": {"name": "b"}, "spans": spans}]}
            ]
        }
        lines.append(json.dumps(request))
        written += len(spans)
        if len(lines) == per_file or s == sessions:
            (folder / f"spans-{s:08d}.json").write_text("\n".join(lines) + "\n")
            lines = []
    return written


def _peaks(pid: int | None = None) -> dict:
    """Peak resident memory (MB) of this process and of its JVM child, if there is one."""
    import resource

    import psutil

    out = {"python_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    for child in psutil.Process().children(recursive=True):
        try:
            if "java" in child.name():
                status = Path(f"/proc/{child.pid}/status").read_text()
                hwm = next(line for line in status.splitlines() if line.startswith("VmHWM"))
                out["jvm_peak_mb"] = int(hwm.split()[1]) / 1024
        except (psutil.Error, OSError, StopIteration):
            pass
    return out


def measure(kind: str, args) -> dict:
    """Run one measurement in a fresh process; its JSON line."""
    proc = subprocess.run(
        [PYTHON, __file__, "--measure", kind, *map(str, args)],
        capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": PYTHON},
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _session(master: str):
    from evalkit.spark.session import get_session

    return get_session(master, app_name="evalkit-bench", config={"spark.ui.enabled": "false"})


def run_measurement(kind: str, table: str, work: str, master: str) -> dict:
    started = time.perf_counter()
    if kind == "pandas":
        import pandas as pd

        import evalkit
        from evalkit.spark.frames import case_table

        frame = case_table(pd.read_parquet(table))
        loaded = time.perf_counter()
        scored = evalkit.evaluate(frame, progress=False)
        seconds = time.perf_counter() - loaded
        return {"rows": len(scored), "seconds": seconds, "load_seconds": loaded - started, **_peaks()}
    spark = _session(master)
    jvm = time.perf_counter() - started
    if kind == "document":  # the whole command, the document's parse included: what a user's driver holds
        from evalkit.cli import main

        code = main(["run", table, "--engine", "spark", "--master", master, "--out", str(Path(work) / "doc")])
        assert code == 0
        seconds = time.perf_counter() - started
        rows = spark.read.parquet(str(Path(work) / "doc" / "results.parquet")).count()
        return {"rows": rows, "seconds": seconds, "jvm_start_seconds": jvm, **_peaks()}
    if kind in ("batch", "cli"):  # warm up: Python workers started, modules imported, the JVM's code compiled
        from evalkit import spark as es

        es.evaluate(spark.read.parquet(table).limit(20_000)).write.format("noop").mode("overwrite").save()
    ready = time.perf_counter()
    if kind == "batch":
        from evalkit import spark as es

        scored = es.evaluate(spark.read.parquet(table))
        scored.write.mode("overwrite").parquet(str(Path(work) / "batch.parquet"))
        rows = spark.read.parquet(str(Path(work) / "batch.parquet")).count()
    elif kind == "cli":
        from evalkit.cli import main

        code = main(["run", table, "--engine", "spark", "--out", str(Path(work) / "cli")])
        assert code == 0
        rows = spark.read.parquet(str(Path(work) / "cli" / "results.parquet")).count()
    else:  # stream
        from evalkit.cli import main

        custom = Path(work) / "custom-evaluators" / "tool_used"
        custom.mkdir(parents=True, exist_ok=True)
        (custom / "tool_used.py").write_text(
            'EVALUATION_LEVEL = "SESSION"\n\ndef lambda_handler(event, context):\n'
            '    spans = event["evaluationInput"]["sessionSpans"]\n'
            '    used = any(s["attributes"].get("gen_ai.tool.name") for s in spans)\n'
            '    return {"label": "PASS" if used else "FAIL", "value": float(used)}\n'
        )
        code = main(["spans", "stream", "--source", table, "--sink", str(Path(work) / "sink"), "--evaluator",
                     "tool_used", "--custom-dir", str(custom.parent), "--session-timeout", "60s",
                     "--watermark", "10s", "--once"])  # fmt: skip
        assert code == 0
        rows = sum(1 for p in (Path(work) / "sink" / "results").iterdir() for _ in p.open())
    seconds = time.perf_counter() - ready
    return {"rows": rows, "seconds": seconds, "jvm_start_seconds": jvm, **_peaks()}


def document_run(work: Path, items: int, master: str) -> str:
    """The document measurement's line: the driver's peak RSS of ``evalkit run DOC --engine spark``."""
    document = work / "document.json"
    rows = write_document(document, items)
    r = measure("document", [document, work, master])
    return (
        f"document: driver peak RSS {r['python_peak_mb']:,.0f} MB for {rows:,} rows ({items:,} items), "
        f"report included; whole command {r['seconds']:.1f} s (JVM start included)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--skip-pandas", action="store_true")
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--doc-items", type=int, default=200_000, help="items of the document run (0: skip)")
    parser.add_argument(
        "--measure", nargs=4, metavar=("KIND", "TABLE", "WORK", "MASTER"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.measure:
        kind, table, work, master = args.measure
        print(json.dumps(run_measurement(kind, table, work, master)))
        return
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-spark-") as tmp:
        work = Path(tmp)
        table = work / "cases.parquet"
        started = time.perf_counter()
        write_table(table, args.rows)
        size = table.stat().st_size / 2**20
        print(
            f"case table: {args.rows:,} rows, {size:.0f} MB Parquet, generated in {time.perf_counter() - started:.1f} s"
        )
        print(f"machine: {os.cpu_count()} cores; Spark master {args.master}")
        kinds = ["batch"] + ([] if args.skip_cli else ["cli"]) + ([] if args.skip_pandas else ["pandas"])
        results = {kind: measure(kind, [table, work, args.master]) for kind in kinds}
        for kind, r in results.items():
            rate = r["rows"] / r["seconds"]
            memory = f"driver Python peak {r['python_peak_mb']:,.0f} MB"
            if "jvm_peak_mb" in r:
                memory += f", driver JVM peak {r['jvm_peak_mb']:,.0f} MB (local mode: executors' tasks too)"
            extra = f" (+{r['jvm_start_seconds']:.1f} s JVM start)" if "jvm_start_seconds" in r else ""
            extra += f" (+{r['load_seconds']:.1f} s read)" if "load_seconds" in r else ""
            print(
                f"{kind:>7}: {r['rows']:,} rows in {r['seconds']:.1f} s{extra} = {rate:,.0f} rows/s; {memory}"
            )
        if "pandas" in results:
            ratio = (results["batch"]["rows"] / results["batch"]["seconds"]) / (
                results["pandas"]["rows"] / results["pandas"]["seconds"]
            )
            print(f"spark local[2] / pandas: {ratio:.2f}x rows per second")
        if args.doc_items:
            print(document_run(work, args.doc_items, args.master))
        folder = work / "spans"
        spans = write_spans(folder, args.sessions)
        r = measure("stream", [folder, work, args.master])
        print(
            f" stream: {spans:,} spans, {args.sessions:,} sessions ({r['rows']:,} results) in {r['seconds']:.1f} s "
            f"= {spans / r['seconds']:,.0f} spans/s (+{r['jvm_start_seconds']:.1f} s JVM start); "
            f"driver Python peak {r['python_peak_mb']:,.0f} MB"
        )


if __name__ == "__main__":
    main()
