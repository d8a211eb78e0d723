"""Online evaluation: receive live OTLP spans, wait for sessions to end, score a sample of them continuously.

This is the local counterpart of AgentCore Evaluations' online mode, with the same Lambda-style evaluators as
``evalkit spans eval``:

    server = serve("online-store", evaluators=["schema_check"], session_timeout=900, sampling=10)
    server.start()          # OTLP/HTTP receiver on http://127.0.0.1:4318/v1/traces
    ...
    server.stop()

* **Receiver.** ``POST /v1/traces`` accepts what OTLP/HTTP exporters send: protobuf
  (``application/x-protobuf``) or JSON (``application/json``), optionally gzip-compressed, and answers like a
  collector (200 with an empty ``ExportTraceServiceResponse`` in the request's encoding, or a
  ``partialSuccess`` naming rejected spans). A malformed body gets 400, a body over ``max_body`` bytes 413, a
  missing or wrong ``Authorization: Bearer`` token (when one is set) 401. The spans are converted with the
  functions of ``loading`` so online and offline evaluators see identical span documents.
* **Durability.** Spans are committed to ``DIR/store.sqlite3`` before the 200 (see ``store``): an
  acknowledged span is never lost, and duplicates (exporter retries) are ignored.
* **Sessions.** A session is complete after ``session_timeout`` seconds without a new span (by received
  time). Sampling is decided by a hash of the session id, ``sha256(id) % 10000 < sampling * 100``, so every
  process (and a restart) decides the same way for the same session.
* **Filters.** ``KEY=VALUE`` (Equals), ``KEY!=VALUE`` (NotEquals), ``KEY~=VALUE`` (Contains), ``KEY>NUMBER``
  (GreaterThan), ``KEY<NUMBER`` (LessThan) on span attributes (or resource attributes). A session is evaluated
  only when every filter is satisfied by at least one of its spans; otherwise it is ``skipped``.
* **Evaluation.** Up to 10 evaluators (as AgentCore allows) run on each sampled complete session with
  ``evaluate_spans``; the results and the ``evaluated`` mark are committed together, so a crash never
  evaluates a session twice and never loses one.
* **Outputs.** ``DIR/results.jsonl``: one OTel ``gen_ai.evaluation.result`` event per line;
  ``DIR/metrics.jsonl``: CloudWatch Embedded Metric Format, namespace ``Bedrock-AgentCore/Evaluations``,
  metric name = evaluator name, dimensions ``service.name`` and ``label``. Each line carries the result's
  ``sequence`` number; after a crash the export resumes after the last complete line.
* **Alarm.** With ``alarm_threshold``, when an evaluator's pass rate over ``alarm_window`` drops below it, a
  warning is logged (and, with ``alarm_webhook``, a JSON POST is sent); it fires again only after recovering.

A result passes when it is not an error and its ``value`` is at least 1.0, or, without a value, its label
is one of ``PASS``, ``PASSED``, ``TRUE``, ``YES`` (any case).
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import logging
import os
import re
import threading
import time
import urllib.request
import zlib
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.errors import EvalkitError
from evalkit.spans import loading
from evalkit.spans.lambda_runner import DEFAULT_TIMEOUT, SpanEvaluator, evaluate_spans, load_span_evaluator
from evalkit.spans.store import Store

log = logging.getLogger("evalkit.spans.online")

#: AgentCore's limit on evaluators per online evaluation configuration.
MAX_EVALUATORS = 10
#: Largest accepted request body (after decompression), in bytes.
MAX_BODY = 4 * 1024 * 1024
NAMESPACE = "Bedrock-AgentCore/Evaluations"
PASS_VALUE = 1.0
PASS_LABELS = frozenset({"PASS", "PASSED", "TRUE", "YES"})
RESULTS_FILE = "results.jsonl"
METRICS_FILE = "metrics.jsonl"

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*")
_UNITS = {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


# --- configuration ----------------------------------------------------------------------------------------


def parse_duration(text: str | float) -> float:
    """Seconds from ``"15m"``, ``"1h"``, ``"0.5s"``, ``"250ms"``, ``"2d"`` or a plain number of seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        match = _DURATION.fullmatch(str(text))
        if not match:
            raise EvalkitError(f"{text!r} is not a duration: write 15m, 1h, 30s or 250ms")
        value = float(match.group(1)) * _UNITS[match.group(2)]
    if not value > 0:
        raise EvalkitError(f"{text!r}: a duration must be more than 0")
    return value


def sampled(session_id: str, percentage: float) -> bool:
    """Whether a session is in a ``percentage`` (0-100) sample: stable across processes and restarts."""
    bucket = int.from_bytes(hashlib.sha256(session_id.encode("utf-8")).digest()[:8], "big") % 10_000
    return bucket < round(percentage * 100)


class Filter:
    """One span attribute condition, written ``KEY=VALUE``, ``KEY!=VALUE``, ``KEY~=VALUE``, ``KEY>N``, ``KEY<N``.

    Equals, NotEquals and Contains compare text (a non-string attribute as its JSON text, so ``true`` and
    ``3`` match booleans and numbers); GreaterThan and LessThan compare numbers.
    """

    _PATTERN = re.compile(r"([^=!~<>]+)(!=|~=|=|>|<)(.*)", re.S)
    OPERATORS = {"=": "Equals", "!=": "NotEquals", "~=": "Contains", ">": "GreaterThan", "<": "LessThan"}

    def __init__(self, text: str):
        match = self._PATTERN.fullmatch(text)
        if not match or not match.group(1).strip():
            raise EvalkitError(f"filter {text!r}: write KEY=VALUE, KEY!=VALUE, KEY~=VALUE, KEY>N or KEY<N")
        self.key, self.op, self.value = match.group(1).strip(), match.group(2), match.group(3)
        self.number = None
        if self.op in "<>":
            try:
                self.number = float(self.value)
            except ValueError:
                raise EvalkitError(f"filter {text!r}: {self.value!r} is not a number") from None
        self.text = text

    def __repr__(self) -> str:
        return f"Filter({self.text!r})"

    def matches(self, doc: dict) -> bool:
        """Whether this span document satisfies the condition (an absent attribute satisfies none)."""
        attrs = doc.get("attributes") or {}
        value = attrs.get(self.key)
        if value is None:
            value = ((doc.get("resource") or {}).get("attributes") or {}).get(self.key)
        if value is None:
            return False
        if self.number is not None:
            try:
                number = float(value)
            except (TypeError, ValueError):
                return False
            return number > self.number if self.op == ">" else number < self.number
        text = value if isinstance(value, str) else json.dumps(value)
        if self.op == "=":
            return text == self.value
        if self.op == "!=":
            return text != self.value
        return self.value in text


def session_matches(docs: list[dict], filters: list[Filter]) -> bool:
    """Every filter is satisfied by at least one span of the session (no filters: every session)."""
    return all(any(f.matches(d) for d in docs) for f in filters)


def passed(entry: dict) -> bool:
    """A result passes: no error, and value >= 1.0 (or, without a value, a PASS-like label)."""
    if "errorCode" in entry:
        return False
    value = entry.get("value")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value >= PASS_VALUE
    return str(entry.get("label", "")).strip().upper() in PASS_LABELS


# --- decoding OTLP requests ------------------------------------------------------------------------------


class BadRequest(Exception):
    """The request cannot be accepted: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def decode_request(body: bytes, content_type: str, encoding: str, limit: int = MAX_BODY) -> tuple[list, list]:
    """An OTLP/HTTP trace export body -> ``(span documents, problems)``; raises ``BadRequest``."""
    encoding = (encoding or "identity").strip().lower()
    if encoding == "gzip":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            body = inflater.decompress(body, limit + 1)
        except zlib.error as exc:
            raise BadRequest(400, f"the body is not valid gzip: {exc}") from None
        if len(body) > limit or inflater.unconsumed_tail:
            raise BadRequest(413, f"the decompressed body is larger than {limit} bytes")
    elif encoding not in ("identity", ""):
        raise BadRequest(415, f"Content-Encoding {encoding!r} is not supported (use gzip or none)")
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind == "application/x-protobuf":
        request = _protobuf_dict(body)
    elif kind == "application/json":
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadRequest(400, f"the body is not valid JSON: {exc}") from None
    else:
        raise BadRequest(
            415, f"Content-Type {kind or 'none'!r}: use application/x-protobuf or application/json"
        )
    if not isinstance(request, dict):
        raise BadRequest(400, "the body is not an ExportTraceServiceRequest (expected a JSON object)")
    if not request:
        return [], []
    if "resourceSpans" not in request:
        raise BadRequest(400, "the body is not an ExportTraceServiceRequest ('resourceSpans' is missing)")
    docs: list[dict] = []
    wheres: list = []
    problems: list[str] = []
    loading._read_otlp(request, ("request", ""), docs, wheres, problems)
    return docs, problems


def _protobuf_dict(body: bytes) -> dict:
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise BadRequest(400, f"the body is not a valid ExportTraceServiceRequest protobuf: {exc}") from None
    return MessageToDict(message, preserving_proto_field_name=False)


def _response(kind: str, rejected: int, message: str) -> tuple[bytes, str]:
    """An ``ExportTraceServiceResponse`` in the request's encoding (empty unless spans were rejected)."""
    if kind == "application/x-protobuf":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        response = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
        return response.SerializeToString(), kind
    body = {"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": message}} if rejected else {}
    return _dumps(body).encode(), "application/json"


# --- the server ------------------------------------------------------------------------------------------


class OnlineEvaluation:
    """The receiver, the store and the evaluation loop of one store folder; ``start()`` and ``stop()``.

    Build it with ``serve``. ``port`` is the bound port once started (pass ``port=0`` for a free one).
    """

    def __init__(
        self,
        store: str | os.PathLike,
        *,
        evaluators: list[SpanEvaluator | str] = (),
        custom_dir: str | os.PathLike | None = None,
        host: str = "127.0.0.1",
        port: int = 4318,
        session_timeout: float | str = 900.0,
        sampling: float = 100.0,
        filters: list[str | Filter] = (),
        token: str | None = None,
        alarm_threshold: float | None = None,
        alarm_window: float | str = 3600.0,
        alarm_webhook: str | None = None,
        namespace: str = NAMESPACE,
        poll_interval: float = 1.0,
        max_body: int = MAX_BODY,
        evaluator_timeout: float = DEFAULT_TIMEOUT,
    ):
        evaluators = list(evaluators)
        if len(evaluators) > MAX_EVALUATORS:
            raise EvalkitError(
                f"{len(evaluators)} evaluators: an online evaluation takes at most {MAX_EVALUATORS}"
            )
        if not 0 <= sampling <= 100:
            raise EvalkitError(f"sampling {sampling!r} is not a percentage between 0 and 100")
        if alarm_threshold is not None and not 0 <= alarm_threshold <= 1:
            raise EvalkitError(f"alarm threshold {alarm_threshold!r} is not a rate between 0 and 1")
        self.evaluators = [e if isinstance(e, SpanEvaluator) else _load(e, custom_dir) for e in evaluators]
        names = [e.name for e in self.evaluators]
        if len(set(names)) != len(names):
            raise EvalkitError(f"an evaluator is named twice: {', '.join(names)}")
        self.folder = Path(store)
        self.host, self.requested_port = host, port
        self.session_timeout = parse_duration(session_timeout)
        self.sampling = float(sampling)
        self.filters = [f if isinstance(f, Filter) else Filter(f) for f in filters]
        self.token = token
        self.alarm_threshold = alarm_threshold
        self.alarm_window = parse_duration(alarm_window)
        self.alarm_webhook = alarm_webhook
        self.namespace = namespace
        self.poll_interval = poll_interval
        self.max_body = max_body
        self.evaluator_timeout = evaluator_timeout
        self.store: Store | None = None
        self.alarms: list[dict] = []
        self._alarming: set[str] = set()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self.port: int | None = None

    # lifecycle

    def start(self) -> OnlineEvaluation:
        """Open the store, export results a previous process left unexported, bind and start serving."""
        self.store = Store(self.folder)
        self._export()
        handler = type("Handler", (_Handler,), {"app": self})
        self._httpd = http.server.ThreadingHTTPServer((self.host, self.requested_port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._stop.clear()
        self._threads = [
            threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True),
            threading.Thread(target=self._loop, name="evalkit-online-loop", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        log.info("receiving OTLP spans on http://%s:%d/v1/traces", self.host, self.port)
        return self

    def stop(self) -> None:
        """Stop receiving, let the loop finish its current session, close the store."""
        self._stop.set()
        self._wake.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        for thread in self._threads:
            thread.join(timeout=30)
        if self.store is not None:
            self.store.close()
            self.store = None

    def __enter__(self) -> OnlineEvaluation:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1/traces"

    # ingest

    def ingest(self, body: bytes, content_type: str, encoding: str = "") -> tuple[int, bytes, str]:
        """Decode, store (committed) and answer one export request: ``(status, body, content type)``."""
        kind = (content_type or "").split(";")[0].strip().lower()
        try:
            docs, problems = decode_request(body, content_type, encoding, self.max_body)
        except BadRequest as exc:
            return exc.status, _error_body(kind, str(exc)), _error_type(kind)
        if docs:
            sessions = self._session_ids(docs)
            added = self.store.add_spans(docs, sessions, lambda s: sampled(s, self.sampling))
            log.debug("stored %d new span(s) of %d", added, len(docs))
        if problems and not docs:
            return 400, _error_body(kind, "no valid span: " + "; ".join(problems[:5])), _error_type(kind)
        message = "; ".join(problems[:5]) + (
            f"; ... and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        payload, ctype = _response(kind, len(problems), message)
        return 200, payload, ctype

    def _session_ids(self, docs: list[dict]) -> list[str | None]:
        """Each span's session id: its own or its resource's ``session.id``, else that of its trace."""
        ids = [
            loading._session_id(d.get("attributes") or {}, (d.get("resource") or {}).get("attributes") or {})
            for d in docs
        ]
        by_trace: dict[str, str] = {}
        for doc, session in zip(docs, ids):
            if session is not None:
                by_trace.setdefault(doc["traceId"], session)
        missing = sorted({d["traceId"] for d, s in zip(docs, ids) if s is None} - set(by_trace))
        by_trace.update(self.store.trace_sessions(missing))
        return [s if s is not None else by_trace.get(d["traceId"]) for d, s in zip(docs, ids)]

    # the evaluation loop

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # keep the loop alive: the next pass retries what was not committed
                log.exception("online evaluation pass failed")
            self._wake.wait(self.poll_interval)
            self._wake.clear()

    def run_once(self) -> int:
        """One pass: complete idle sessions, evaluate (or skip) the complete ones, export, check alarms.

        Returns how many sessions were finished.
        """
        store = self.store
        store.complete_idle(self.session_timeout)
        finished = 0
        while not self._stop.is_set():
            batch = store.complete_sessions()
            if not batch:
                break
            for session_id, is_sampled, _ in batch:
                if self._stop.is_set():
                    break
                finished += self._finish(session_id, is_sampled)
            self._export()
        if finished:
            self._check_alarms()
        return finished

    def _finish(self, session_id: str, is_sampled: bool) -> bool:
        store = self.store
        if not is_sampled or not self.evaluators:
            return store.finish(session_id, "skipped", [])
        docs = store.session_documents(session_id)
        if not session_matches(docs, self.filters):
            return store.finish(session_id, "skipped", [])
        frame = loading.from_documents(docs, f"session {session_id}")
        frame.loc[frame["session_id"].isna(), "session_id"] = session_id
        results = evaluate_spans(frame, self.evaluators, session=session_id, timeout=self.evaluator_timeout)
        service = _service_name(docs)
        for entry in results:
            entry["passed"] = passed(entry)
            entry["service"] = service
        return store.finish(session_id, "evaluated", results)

    # outputs

    def _export(self) -> None:
        """Append the results not yet in results.jsonl / metrics.jsonl to them (resuming after a crash)."""
        for name, render in ((RESULTS_FILE, _result_event), (METRICS_FILE, self._metric_record)):
            path = self.folder / name
            last = _last_sequence(path)
            rows = self.store.results_after(last)
            if not rows:
                continue
            lines = []
            for seq, timestamp, text in rows:
                record = render(seq, timestamp, json.loads(text))
                if record is not None:
                    lines.append(_dumps(record) + "\n")
            with open(path, "a", encoding="utf-8") as handle:
                handle.write("".join(lines))
                handle.flush()
                os.fsync(handle.fileno())

    def _metric_record(self, seq: int, timestamp: float, entry: dict) -> dict | None:
        """One CloudWatch EMF record: the result's value as the metric named after its evaluator."""
        value = entry.get("value")
        if "errorCode" in entry or not isinstance(value, (int, float)):
            value = 1.0 if entry["passed"] else 0.0
        name = entry["evaluatorName"]
        ctx = entry["context"]["spanContext"]
        record = {
            "_aws": {
                "Timestamp": int(timestamp * 1000),
                "CloudWatchMetrics": [
                    {
                        "Namespace": self.namespace,
                        "Dimensions": [["service.name", "label"]],
                        "Metrics": [{"Name": name, "Unit": "None"}],
                    }
                ],
            },
            "service.name": entry.get("service") or "unknown",
            "label": entry.get("label") or entry.get("errorCode") or "ERROR",
            name: value,
            "session.id": ctx.get("sessionId"),
            "sequence": seq,
        }
        if "traceId" in ctx:
            record["trace_id"] = ctx["traceId"]
        return record

    def _check_alarms(self) -> None:
        if self.alarm_threshold is None:
            return
        now = time.time()
        for name, (ok, total) in self.store.pass_rates(now - self.alarm_window).items():
            rate = ok / total if total else 1.0
            if rate < self.alarm_threshold and name not in self._alarming:
                self._alarming.add(name)
                alarm = {
                    "alarm": "evalkit.online.pass_rate",
                    "state": "ALARM",
                    "evaluator": name,
                    "passRate": rate,
                    "passed": ok,
                    "results": total,
                    "threshold": self.alarm_threshold,
                    "windowSeconds": self.alarm_window,
                    "timestamp": int(now * 1000),
                }
                self.alarms.append(alarm)
                log.warning(
                    "ALARM %s: pass rate %.1f%% (%d of %d) over the last %gs is below %.1f%%",
                    name, 100 * rate, ok, total, self.alarm_window, 100 * self.alarm_threshold,
                )  # fmt: skip
                if self.alarm_webhook:
                    _post(self.alarm_webhook, alarm)
            elif rate >= self.alarm_threshold and name in self._alarming:
                self._alarming.discard(name)
                log.warning("OK %s: pass rate %.1f%% is back above the threshold", name, 100 * rate)


def serve(store: str | os.PathLike, **options: Any) -> OnlineEvaluation:
    """An online evaluation of store folder ``store`` (not started): see ``OnlineEvaluation``."""
    return OnlineEvaluation(store, **options)


def _load(spec: str, custom_dir) -> SpanEvaluator:
    name, _, level = spec.partition(":")
    return load_span_evaluator(name, custom_dir, level=level or None)


def _service_name(docs: list[dict]) -> str:
    for doc in docs:
        name = ((doc.get("resource") or {}).get("attributes") or {}).get("service.name")
        if name:
            return str(name)
    return "unknown"


def _result_event(seq: int, timestamp: float, entry: dict) -> dict:
    """The OTel ``gen_ai.evaluation.result`` event of one result entry."""
    ctx = entry["context"]["spanContext"]
    attributes: dict[str, Any] = {"gen_ai.evaluation.name": entry["evaluatorName"]}
    if "value" in entry:
        attributes["gen_ai.evaluation.score.value"] = entry["value"]
    if "label" in entry:
        attributes["gen_ai.evaluation.score.label"] = entry["label"]
    if "explanation" in entry:
        attributes["gen_ai.evaluation.explanation"] = entry["explanation"]
    if "errorCode" in entry:
        attributes["error.type"] = entry["errorCode"]
        attributes["gen_ai.evaluation.error.message"] = entry.get("errorMessage", "")
    attributes["gen_ai.evaluation.evaluator.id"] = entry["evaluatorId"]
    attributes["session.id"] = ctx["sessionId"]
    if "traceId" in ctx:
        attributes["trace_id"] = ctx["traceId"]
    if "spanId" in ctx:
        attributes["span_id"] = ctx["spanId"]
    attributes["service.name"] = entry.get("service") or "unknown"
    return {
        "name": "gen_ai.evaluation.result",
        "attributes": attributes,
        "timestamp": int(timestamp * 1000),
        "sequence": seq,
    }


def _last_sequence(path: Path) -> int:
    """The ``sequence`` of the last complete line of a JSONL export; a torn last line is cut off."""
    try:
        handle = open(path, "rb+")
    except FileNotFoundError:
        return 0
    with handle:
        size = handle.seek(0, os.SEEK_END)
        if not size:
            return 0
        chunk = min(size, 1 << 16)
        handle.seek(size - chunk)
        tail = handle.read(chunk)
        if not tail.endswith(b"\n"):
            cut = tail.rfind(b"\n")
            keep = size - chunk + cut + 1 if cut >= 0 else 0
            handle.truncate(keep)
            tail = tail[: cut + 1] if cut >= 0 else b""
        lines = tail.rstrip(b"\n").rsplit(b"\n", 1)
        try:
            return int(json.loads(lines[-1])["sequence"]) if lines[-1] else 0
        except (ValueError, KeyError, TypeError):
            return 0


def _post(url: str, payload: dict) -> None:
    request = urllib.request.Request(
        url, data=_dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            response.read()
    except OSError as exc:
        log.warning("alarm webhook %s failed: %s", url, exc)


def _error_type(kind: str) -> str:
    return "application/json" if kind == "application/json" else "text/plain; charset=utf-8"


def _error_body(kind: str, message: str) -> bytes:
    if kind == "application/json":
        return _dumps({"code": 3, "message": message}).encode()
    return message.encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    """``POST /v1/traces``; everything else is 404 (or 405 for another method on that path)."""

    app: OnlineEvaluation
    protocol_version = "HTTP/1.1"
    server_version = "evalkit-online"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's signature
        log.debug("%s " + format, self.address_string(), *args)

    def _send(self, status: int, body: bytes, ctype: str = "text/plain; charset=utf-8", close=False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.split("?")[0] == "/health":
            self._send(200, b"ok\n")
        else:
            self._send(404, b"not found\n")

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        app = self.app
        if self.path.split("?")[0] != "/v1/traces":
            self._send(404, b"not found: POST spans to /v1/traces\n", close=True)
            return
        if app.token is not None and self.headers.get("Authorization", "") != f"Bearer {app.token}":
            self._send(401, b"missing or wrong Authorization: Bearer token\n", close=True)
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.strip().isdigit():
            self._send(411, b"Content-Length is required\n", close=True)
            return
        size = int(length)
        if size > app.max_body:
            self._send(413, f"the body is larger than {app.max_body} bytes\n".encode(), close=True)
            return
        body = self.rfile.read(size)
        try:
            status, payload, ctype = app.ingest(
                body, self.headers.get("Content-Type", ""), self.headers.get("Content-Encoding", "")
            )
        except Exception as exc:  # the store failed: 503 asks the exporter to retry
            log.exception("cannot store spans")
            self._send(503, f"cannot store the spans: {exc}\n".encode(), close=True)
            return
        self._send(status, payload, ctype)


# --- reading a store --------------------------------------------------------------------------------------

FRAME_COLUMNS = (
    "sequence",
    "timestamp",
    "session_id",
    "evaluator",
    "trace_id",
    "span_id",
    "label",
    "value",
    "explanation",
    "error_code",
    "passed",
    "service",
)


def online_frame(store: str | os.PathLike) -> pd.DataFrame:
    """The results of an online evaluation store folder, one row per result (``FRAME_COLUMNS``)."""
    try:
        db = Store(store, readonly=True)
    except FileNotFoundError:
        raise EvalkitError(f"{store}: no online evaluation store here (store.sqlite3 is missing)") from None
    try:
        rows = db.results_rows()
    finally:
        db.close()
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    frame["timestamp"] = pd.to_datetime(frame["timestamp"].astype("float64"), unit="s", utc=True)
    frame["passed"] = frame["passed"].astype(bool)
    frame["value"] = pd.to_numeric(frame["value"])
    return frame


def status(store: str | os.PathLike, now: float | None = None) -> dict:
    """Sessions per state, stored spans, and per-evaluator ``(passed, total)`` over the last hour and day."""
    try:
        db = Store(store, readonly=True)
    except FileNotFoundError:
        raise EvalkitError(f"{store}: no online evaluation store here (store.sqlite3 is missing)") from None
    now = time.time() if now is None else now
    try:
        return {
            "counts": db.counts(),
            "hour": db.pass_rates(now - 3600),
            "day": db.pass_rates(now - 86400),
        }
    finally:
        db.close()


def pass_rate_over_time(frame: pd.DataFrame, freq: str = "5min"):
    """A plotly figure: each evaluator's pass rate per ``freq`` interval, from ``online_frame``."""
    import plotly.graph_objects as go

    figure = go.Figure()
    if len(frame):
        bins = frame.set_index("timestamp").groupby("evaluator")["passed"].resample(freq).mean().dropna()
        for name in bins.index.get_level_values(0).unique():
            series = bins.loc[name]
            figure.add_trace(go.Scatter(x=series.index, y=series.values, mode="lines+markers", name=name))
    figure.update_layout(
        title="Online evaluation pass rate",
        xaxis_title="time",
        yaxis_title="pass rate",
        yaxis_range=[0, 1.05],
    )
    return figure


def _gzip(data: bytes) -> bytes:
    """gzip-compress (what an exporter with compression=gzip sends); used by the tests and the benchmark."""
    return gzip.compress(data, compresslevel=1)
