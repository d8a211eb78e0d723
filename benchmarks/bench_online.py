"""Benchmark of the online evaluation receiver: ingest rate, completion-to-result delay, memory.

    .venv/bin/python benchmarks/bench_online.py [--spans 20000] [--batch 100]

* ingest rate: OTLP JSON and protobuf, on one keep-alive connection and on four (one load generator process
  each), 100 spans per request, while the receiver evaluates the sessions that complete (10 spans per session,
  session timeout 0.5 s, one code evaluator); spans/s = acknowledged (committed) spans / wall time, and the
  median time per request. Targets: >= 5,000 spans/s of JSON and >= 10,000 of protobuf on one connection.
  Each figure is the median of ``--rounds`` runs (default 3), with the slowest and fastest beside it: on a
  2-core machine a busy neighbour moves a single run by a third.
* spans + records: sessions of 10 spans and 10 event records (ADOT's split form: each record in the body of
  an OTLP log record, without ``session.id``, joined to its span by trace and span id), protobuf, through
  the receiver end to end: a ``/v1/traces`` request of 100 spans and then a ``/v1/logs`` request of those
  spans' 100 records, alternating on one keep-alive connection; (spans + records)/s = acknowledged
  (committed) items / wall time. Target: >= 5,000 on one connection. Same rounds and range as ingest.
* decode: one 100-span protobuf request into OTLP JSON dicts, evalkit's walk against ``MessageToDict``.
* evaluation: the receiver process's wall and CPU time per session of 10 spans (read from the store,
  evaluated by one code evaluator in its worker process, results committed), the work that shares the
  machine with intake.
* delay: sessions completing one by one (timeout 0.5 s); the delay from the moment a session became complete
  (last span + timeout) to its line in results.jsonl.
* memory: the receiver process's peak RSS with every span stored, and the store size on disk.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit.spans.online.server import serve  # noqa: E402

EVALUATOR = """EVALUATION_LEVEL = "SESSION"

def lambda_handler(event, context):
    return {"label": "PASS", "value": 1.0}
"""


def _request(first: int, count: int, session_size: int, hex_ids: bool) -> dict:
    spans = []
    for n in range(first, first + count):
        trace, span = n.to_bytes(16, "big"), n.to_bytes(8, "big")
        spans.append(
            {
                "traceId": trace.hex() if hex_ids else base64.b64encode(trace).decode(),
                "spanId": span.hex() if hex_ids else base64.b64encode(span).decode(),
                "name": "execute_tool lookup",
                "kind": 1,
                "startTimeUnixNano": str(1_700_000_000_000_000_000 + n),
                "endTimeUnixNano": str(1_700_000_000_000_000_000 + n + 1000),
                "attributes": [
                    {"key": "session.id", "value": {"stringValue": f"session-{n // session_size}"}},
                    {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
                    {"key": "gen_ai.tool.call.result", "value": {"stringValue": '{"price": 101.5}'}},
                ],
            }
        )
    resource_ = {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]}
    return {
        "resourceSpans": [{"resource": resource_, "scopeSpans": [{"scope": {"name": "b"}, "spans": spans}]}]
    }


def _body(first: int, count: int, kind: str) -> bytes:
    if kind == "json":
        return json.dumps(_request(first, count, 10, True)).encode()
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return ParseDict(_request(first, count, 10, False), ExportTraceServiceRequest()).SerializeToString()


def _records_body(first: int, count: int) -> bytes:
    """A protobuf ``ExportLogsServiceRequest`` of one event record per span ``first .. first + count - 1`` of
    ``_request`` (ids from the span's, no ``session.id``: each joins its span's session)."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    records = []
    for n in range(first, first + count):
        body = {
            "input": {"messages": [{"role": "user", "content": {"content": '[{"text": "price of AAPL?"}]'}}]},
            "output": {"messages": [{"role": "assistant", "content": {"message": "AAPL is at $182.45"}}]},
        }
        records.append(
            {
                "traceId": base64.b64encode(n.to_bytes(16, "big")).decode(),
                "spanId": base64.b64encode(n.to_bytes(8, "big")).decode(),
                "timeUnixNano": str(1_700_000_000_000_000_000 + n + 500),
                "observedTimeUnixNano": str(1_700_000_000_000_000_000 + n + 600),
                "severityNumber": 9,
                "eventName": "strands.telemetry.tracer",
                "attributes": [{"key": "event.name", "value": {"stringValue": "strands.telemetry.tracer"}}],
                "body": _any(body),
            }
        )
    resource_ = {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]}
    request = {
        "resourceLogs": [
            {"resource": resource_, "scopeLogs": [{"scope": {"name": "b"}, "logRecords": records}]}
        ]
    }
    return ParseDict(request, ExportLogsServiceRequest()).SerializeToString()


def _any(value) -> dict:
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _any(v)} for k, v in value.items()]}}
    return {"stringValue": str(value)}


def _bodies(kind: str, first: int, total: int, batch: int) -> list[tuple[str, bytes]]:
    """``(path, body)`` of every request of one load generator (``mixed``: spans, then their records)."""
    if kind != "mixed":
        return [("/v1/traces", _body(n, batch, kind)) for n in range(first, first + total, batch)]
    out = []
    for n in range(first, first + total // 2, batch):
        out += [("/v1/traces", _body(n, batch, "protobuf")), ("/v1/logs", _records_body(n, batch))]
    return out


def _client(port: int, kind: str, first: int, total: int, batch: int, ready, go, answers) -> None:
    """One load generator: encode every body first (not timed), then send them on one keep-alive connection."""
    ctype = "application/json" if kind == "json" else "application/x-protobuf"
    bodies = _bodies(kind, first, total, batch)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.connect()
    ready.release()
    go.wait()
    sent, times = 0, []
    for path, body in bodies:
        started = time.perf_counter()
        connection.request("POST", path, body=body, headers={"Content-Type": ctype})
        response = connection.getresponse()
        response.read()
        times.append(time.perf_counter() - started)
        if response.status != 200:
            raise RuntimeError(f"status {response.status}")
        sent += batch
    connection.close()
    answers.put((sent, times))


def _ingest(port: int, kind: str, first: int, total: int, batch: int, clients: int) -> tuple[float, float]:
    """``(spans/s, median seconds per request)`` of ``clients`` keep-alive connections sending ``total``."""
    context = multiprocessing.get_context("spawn")
    ready, go, answers = context.Semaphore(0), context.Event(), context.Queue()
    per = total // clients
    workers = [
        context.Process(target=_client, args=(port, kind, first + i * per, per, batch, ready, go, answers))
        for i in range(clients)
    ]
    for worker in workers:
        worker.start()
    for _ in workers:
        ready.acquire()
    started = time.perf_counter()
    go.set()
    results = [answers.get() for _ in workers]
    elapsed = time.perf_counter() - started
    for worker in workers:
        worker.join()
    sent = sum(r[0] for r in results)
    return sent / elapsed, statistics.median(t for r in results for t in r[1])


def _delay(port: int, folder: Path, rounds: int = 20) -> list[float]:
    delays = []
    for i in range(rounds):
        request = _request(10**12 + i * 10, 1, 10, True)
        request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][0]["value"]["stringValue"] = (
            f"delay-{i}"
        )
        connection = http.client.HTTPConnection("127.0.0.1", port)
        connection.request(
            "POST", "/v1/traces", json.dumps(request).encode(), {"Content-Type": "application/json"}
        )
        connection.getresponse().read()
        acked = time.time()
        connection.close()
        path = folder / "results.jsonl"
        while True:
            if path.exists() and f'"delay-{i}"' in path.read_text():
                break
            time.sleep(0.005)
        delays.append(time.time() - (acked + 0.5))
    return delays


def _decode(batch: int) -> None:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from evalkit.spans.reading.otlp_protobuf import message_dict

    message = ExportTraceServiceRequest()
    message.ParseFromString(_body(1, batch, "protobuf"))
    walk = min(timeit.repeat(lambda: message_dict(message), number=50, repeat=5)) / 50
    general = min(timeit.repeat(lambda: MessageToDict(message), number=50, repeat=5)) / 50
    print(f"decode  : {batch}-span protobuf request: walk {walk * 1000:.2f} ms, MessageToDict "
          f"{general * 1000:.2f} ms ({general / walk:.1f}x)")  # fmt: skip


def _evaluation(folder: Path, sessions: int = 1000) -> None:
    from evalkit.spans.lambdas.evaluator_workers import EvaluatorWorkers
    from evalkit.spans.online.intake import ingest_request
    from evalkit.spans.online.session_evaluation import evaluate_session, load_evaluator
    from evalkit.spans.online.store import Store

    store = Store(folder / "store3")
    for n in range(1, sessions * 10 + 1, 100):
        body = _body(n, 100, "protobuf")
        ingest_request(store, body, "application/x-protobuf", "", max_body=1 << 22, sampling=100)
    store.complete_idle(0, now=time.time() + 10)
    evaluators = [load_evaluator("ok", folder / "ce")]
    ids = [s for s, _, _ in store.complete_sessions(limit=sessions)]
    with EvaluatorWorkers() as workers:
        evaluate_session(store, ids[0], True, evaluators, [], 60, workers=workers)  # starts the worker
        wall, cpu = time.perf_counter(), time.process_time()
        for session_id in ids[1:]:
            evaluate_session(store, session_id, True, evaluators, [], 60, workers=workers)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    store.close()
    n = len(ids) - 1
    print(f"evaluate: {wall / n * 1000:.2f} ms wall, {cpu / n * 1000:.2f} ms receiver CPU per session of 10 "
          f"spans (one code evaluator in its worker process, {n:,} sessions)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spans", type=int, default=20_000, help="spans per measurement (default 20000)")
    parser.add_argument("--batch", type=int, default=100, help="spans per request (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per ingest figure (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "ce" / "ok").mkdir(parents=True)
        (folder / "ce" / "ok" / "ok.py").write_text(EVALUATOR)
        # Sessions of 10 spans complete 0.5 s after their last span: they are evaluated while spans arrive.
        server = serve(
            folder / "store", evaluators=["ok"], custom_dir=folder / "ce", port=0, session_timeout=0.5,
            poll_interval=0.05,
        ).start()  # fmt: skip
        try:
            runs = [(kind, clients) for kind in ("json", "protobuf") for clients in (1, 4)] + [("mixed", 1)]
            first = 1
            for kind, clients in runs:
                rates, medians = [], []
                for _ in range(args.rounds):
                    rate, median = _ingest(server.port, kind, first, args.spans, args.batch, clients)
                    first += 10 * args.spans
                    rates.append(rate)
                    medians.append(median)
                if kind == "mixed":
                    print(f"ingest spans+records protobuf 1 connection: {statistics.median(rates):9,.0f} "
                          f"spans+records/s (runs {min(rates):,.0f}-{max(rates):,.0f}), median "
                          f"{statistics.median(medians) * 1000:5.1f} ms/request ({args.spans // 2:,} spans + "
                          f"{args.spans // 2:,} records, sessions of 10 + 10, {args.batch} per request, traces "
                          f"and logs requests alternating, {args.rounds} runs)", flush=True)  # fmt: skip
                    continue
                print(f"ingest {kind:8} {clients} connection(s): {statistics.median(rates):9,.0f} spans/s "
                      f"(runs {min(rates):,.0f}-{max(rates):,.0f}), median {statistics.median(medians) * 1000:5.1f} "
                      f"ms/request ({args.spans:,} spans, {args.batch} per request, {args.rounds} runs)",
                      flush=True)  # fmt: skip
            time.sleep(1.0)
            evaluated = server.store.counts()["evaluated"]
            print(f"sessions evaluated (ingest + 1 s): {evaluated:,}")
            counts = server.store.counts()
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            size = sum(p.stat().st_size for p in (folder / "store").glob("store.sqlite3*")) / 2**20
            print(
                f"memory  : peak RSS {rss:.0f} MiB with {counts['spans']:,} spans and {counts['records']:,} "
                f"records stored; store {size:.0f} MiB"
            )
        finally:
            server.stop()
        server = serve(
            folder / "store2", evaluators=["ok"], custom_dir=folder / "ce", port=0, session_timeout=0.5,
            poll_interval=0.05,
        ).start()  # fmt: skip
        try:
            delays = _delay(server.port, folder / "store2")
        finally:
            server.stop()
        _decode(args.batch)
        _evaluation(folder)
        print(
            f"delay   : session complete -> result line: median {statistics.median(delays) * 1000:.0f} ms, "
            f"max {max(delays) * 1000:.0f} ms (timeout 0.5 s, poll 0.05 s, {len(delays)} sessions)"
        )


if __name__ == "__main__":
    main()
