"""Online evaluation: receive live OTLP spans, wait for sessions to end, score a sample of them continuously.

This is the local counterpart of AgentCore Evaluations' online mode, with the same Lambda-style evaluators as
``evalkit spans eval``:

    server = serve("online-store", evaluators=["schema_check"], session_timeout=900, sampling=10)
    server.start()          # OTLP/HTTP receiver on http://127.0.0.1:4318/v1/traces
    ...
    server.stop()

``OnlineEvaluation`` wires the parts together and runs them: an HTTP server thread and an evaluation loop.

* **Receiver** (``intake``, ``receiver``). ``POST /v1/traces`` (spans) and ``POST /v1/logs`` (event records:
  the OTel log records that carry a span's prompts and answers, ``logs_url``) accept what OTLP/HTTP exporters
  send: protobuf or JSON, optionally gzip-compressed, and answer like a collector; a body over ``max_body`` bytes gets 413, a
  missing or wrong ``Authorization: Bearer`` token (when one is set: ``token``, ``token_file`` or the
  environment variable ``EVALKIT_RECEIVER_TOKEN``, see ``receiver_token``) 401. aiohttp's server keeps connections
  alive and closes those idle for ``idle_timeout`` seconds; with ``tls_cert`` and ``tls_key`` it speaks HTTPS.
  A ``token`` on an address other than loopback needs TLS (a bearer token sent in clear text over a network
  is a leaked token) unless ``insecure=True``.
* **One receiver per store** (``store_lock``). A second receiver on the same store folder refuses to start,
  naming the running one (its pid, host and URL).
* **Durability** (``store``). Spans and records are committed to ``DIR/store.sqlite3`` before the 200: an
  acknowledged span or record is never lost, and duplicates (exporter retries) are ignored. A record joins
  its session by its own ``session.id``, else its span's, else its trace's, also when they arrive later.
* **Sessions** (``session_tracking``). A session is complete after ``session_timeout`` seconds without a new
  span (at most 1440 minutes, as AgentCore); sampling (0.01-100 %, as AgentCore) is decided by a hash of the
  session id, so a restart decides the same way; ``filters``
  select the sessions to evaluate.
* **Evaluation** (``session_evaluation``). Up to 10 evaluators (as AgentCore allows; code-based and
  LLM-as-judge ones such as ``Builtin.Helpfulness``, judged through one ``SpanJudges``: the model from the
  environment, the judge pool and cache) run on each sampled complete session, once; the results and the
  ``evaluated`` mark are committed together. Code-based evaluators run in worker processes
  (``evaluator_workers``, one pool for the receiver's life): a call that hangs is killed at
  ``evaluator_timeout`` (``Timeout``), one that crashes its process gives ``EvaluatorCrashed``, and intake
  never waits for either. A session whose evaluation raises (hostile span content, a stored row that no
  longer reads) gets one ``SessionEvaluationFailed`` error result per evaluator and the loop moves on: one
  session never holds up the ones after it.
* **Outputs** (``exports``). ``DIR/results.jsonl`` (OTel ``gen_ai.evaluation.result`` events) and
  ``DIR/metrics.jsonl`` (CloudWatch EMF), both carrying the configuration name (``config_name``, default the
  store folder's name) as AgentCore's ``onlineEvaluationConfigId``, resumed after a crash; with ``alarm_threshold``, an alarm when an
  evaluator's pass rate over ``alarm_window`` drops below it.

``online_views`` reads a store back (``online_frame``, ``status``, ``pass_rate_over_time``).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from evalkit.documents.redaction import install_log_redaction, register_secret, register_url_credentials
from evalkit.errors import EvalkitError
from evalkit.spans.evaluation import MAX_EVALUATORS
from evalkit.spans.lambdas.evaluator_workers import EvaluatorWorkers
from evalkit.spans.lambdas.invocation import DEFAULT_TIMEOUT
from evalkit.spans.lambdas.span_evaluator import SpanEvaluator
from evalkit.spans.llm_judges.judge_runner import SpanJudges, needs_judges
from evalkit.spans.llm_judges.llm_evaluator import LLMSpanEvaluator
from evalkit.spans.online.exports import NAMESPACE, PassRateAlarm, export_results
from evalkit.spans.online.intake import MAX_BODY, SIGNALS, ingest_request
from evalkit.spans.online.receiver import IDLE_TIMEOUT, ReceiverServer, is_loopback, tls_context
from evalkit.spans.online.receiver_token import TOKEN_ENV, receiver_token
from evalkit.spans.online.session_evaluation import evaluate_session, load_evaluator
from evalkit.spans.online.session_tracking import (
    SESSION_TIMEOUT_MINUTES_RANGE,
    Filter,
    check_sampling,
    check_session_timeout,
    parse_duration,
    parse_filters,
)
from evalkit.spans.online.store import Store
from evalkit.spans.online.store_lock import StoreLock

log = logging.getLogger("evalkit.spans.online")


class OnlineEvaluation:
    """The receiver, the store and the evaluation loop of one store folder; ``start()`` and ``stop()``.

    Build it with ``serve``. ``port`` is the bound port once started (pass ``port=0`` for a free one).
    """

    def __init__(
        self,
        store: str | os.PathLike,
        *,
        evaluators: list[SpanEvaluator | LLMSpanEvaluator | str] = (),
        custom_dir: str | os.PathLike | None = None,
        host: str = "127.0.0.1",
        port: int = 4318,
        session_timeout: float | str = 900.0,
        sampling: float = 100.0,
        filters: list[str | Filter] = (),
        token: str | None = None,
        token_file: str | os.PathLike | None = None,
        alarm_threshold: float | None = None,
        alarm_window: float | str = 3600.0,
        alarm_webhook: str | None = None,
        namespace: str = NAMESPACE,
        poll_interval: float = 1.0,
        max_body: int = MAX_BODY,
        evaluator_timeout: float = DEFAULT_TIMEOUT,
        judges: SpanJudges | None = None,
        config_name: str | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
        tls_cert: str | os.PathLike | None = None,
        tls_key: str | os.PathLike | None = None,
        insecure: bool = False,
        session_attribute: str | None = None,
    ):
        self.ssl_context = tls_context(tls_cert, tls_key)
        token = receiver_token(token, token_file)  # --token, else --token-file, else $EVALKIT_RECEIVER_TOKEN
        if token is not None and self.ssl_context is None and not is_loopback(host) and not insecure:
            raise EvalkitError(
                f"a bearer token (--token, --token-file or {TOKEN_ENV}) with --host {host} and no TLS would "
                "cross the network in clear text: pass --tls-cert and --tls-key, bind to 127.0.0.1, or pass "
                "--insecure to accept it"
            )
        if not idle_timeout > 0:
            raise EvalkitError(f"idle timeout {idle_timeout!r}: write a number of seconds above 0")
        self.idle_timeout = float(idle_timeout)
        evaluators = list(evaluators)
        if len(evaluators) > MAX_EVALUATORS:
            raise EvalkitError(
                f"{len(evaluators)} evaluators: an online evaluation takes at most {MAX_EVALUATORS}"
            )
        check_sampling(sampling)
        if alarm_threshold is not None and not 0 <= alarm_threshold <= 1:
            raise EvalkitError(f"alarm threshold {alarm_threshold!r} is not a rate between 0 and 1")
        self.evaluators = [
            e if isinstance(e, (SpanEvaluator, LLMSpanEvaluator)) else load_evaluator(e, custom_dir)
            for e in evaluators
        ]
        names = [e.name for e in self.evaluators]
        if len(set(names)) != len(names):
            raise EvalkitError(f"an evaluator is named twice: {', '.join(names)}")
        llm = needs_judges(self.evaluators)
        if llm and judges is None:  # no judge model configured: an error before the receiver binds
            judges = SpanJudges(what=f"Span evaluator {llm[0]}")
        self.judges = judges
        self.folder = Path(store)
        self.host, self.requested_port = host, port
        self.session_timeout = parse_duration(session_timeout)
        if self.session_timeout > SESSION_TIMEOUT_MINUTES_RANGE[1] * 60:
            check_session_timeout(self.session_timeout, session_timeout)
        self.config_name = config_name or self.folder.resolve().name or "online"
        if not isinstance(self.config_name, str) or not self.config_name.strip():
            raise EvalkitError(f"configuration name {config_name!r}: write a non-empty name")
        self.sampling = float(sampling)
        self.session_attribute = session_attribute
        self.filters = parse_filters(filters)
        self.token = token
        register_secret(token)  # never in a log line (a request's headers, an error)
        register_url_credentials(alarm_webhook)
        install_log_redaction()
        self.alarm_threshold = alarm_threshold
        self.alarm_window = parse_duration(alarm_window)
        self.alarm_webhook = alarm_webhook
        self.namespace = namespace
        self.poll_interval = poll_interval
        self.max_body = max_body
        self.evaluator_timeout = evaluator_timeout
        self.store: Store | None = None
        self._alarm = PassRateAlarm(alarm_threshold, self.alarm_window, alarm_webhook)
        self.alarms: list[dict] = self._alarm.fired
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._server: ReceiverServer | None = None
        self._lock: StoreLock | None = None
        self._threads: list[threading.Thread] = []
        self._workers = EvaluatorWorkers()
        self.port: int | None = None

    # lifecycle

    def start(self) -> OnlineEvaluation:
        """Lock the store folder, open the store, export results a previous process left unexported, bind
        and start serving. ``EvalkitError`` if another receiver holds the store, ``OSError`` if the address
        cannot be bound (the lock is released again)."""
        self._lock = StoreLock(self.folder).acquire()
        try:
            self.store = Store(self.folder)
            export_results(self.folder, self.store, self.namespace)
            self._server = ReceiverServer(
                self,
                self.host,
                self.requested_port,
                ssl_context=self.ssl_context,
                idle_timeout=self.idle_timeout,
            )
            self.port = self._server.start()
        except BaseException:
            self._server = None
            if self.store is not None:
                self.store.close()
                self.store = None
            self._lock.release()
            raise
        self._lock.update(self.url)
        self._stop.clear()
        self._threads = [threading.Thread(target=self._loop, name="evalkit-online-loop", daemon=True)]
        for thread in self._threads:
            thread.start()
        log.info("receiving OTLP spans on %s", self.url)
        return self

    def stop(self) -> None:
        """Stop receiving, let the loop finish its current session, close the store."""
        self._stop.set()
        self._wake.set()
        if self._server is not None:
            self._server.stop()
            self._server = None
        for thread in self._threads:
            thread.join(timeout=30)
        self._workers.close()
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> OnlineEvaluation:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}/v1/traces"

    @property
    def logs_url(self) -> str:
        """Where OTLP/HTTP log exporters send event records (``url`` is the traces endpoint)."""
        return self.url[: -len("traces")] + "logs"

    # ingest

    def ingest(
        self, body: bytes, content_type: str, encoding: str = "", signal: str = "traces"
    ) -> tuple[int, bytes, str]:
        """Decode, store (committed) and answer one export request of ``signal`` (``"traces"``: spans,
        ``"logs"``: event records): ``(status, body, content type)``."""
        return ingest_request(
            self.store,
            body,
            content_type,
            encoding,
            max_body=self.max_body,
            sampling=self.sampling,
            session_attribute=self.session_attribute,
            signal=SIGNALS[signal],
        )

    # the evaluation loop

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # the store failed (a session's own failure is an error result): retried
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
                finished += evaluate_session(
                    store,
                    session_id,
                    is_sampled,
                    self.evaluators,
                    self.filters,
                    self.evaluator_timeout,
                    self.judges,
                    config_id=self.config_name,
                    workers=self._workers,
                )
            export_results(self.folder, store, self.namespace)
        if finished:
            self._alarm.check(store)
        return finished


def serve(store: str | os.PathLike, **options: Any) -> OnlineEvaluation:
    """An online evaluation of store folder ``store`` (not started): see ``OnlineEvaluation``."""
    return OnlineEvaluation(store, **options)
