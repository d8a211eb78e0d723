"""What ``spans stream`` runs in the Python workers: OTLP lines into span rows, closed sessions into results.

Both steps use the functions ``spans serve`` uses, so a session gets the same verdicts online on one machine and
on Spark: span documents are read by ``evalkit.spans.reading.loading`` (OTLP JSON requests or flat span documents),
sessions are sampled by ``evalkit.spans.online.server.sampled`` (the sha256 of the session id) and filtered by its
``Filter`` / ``session_matches``, and evaluated by ``evaluate_groups`` (the calls of ``evaluate_spans``, on
sessions read from their documents with ``payload.session_spans``, as the receiver reads them) with the
evaluators of the run, which are resolved (code-based ones imported) once per worker process and query.

The closed sessions of an Arrow batch are evaluated together, by one ``evaluate_groups`` call, so that a
judge's calls for all of them are in the judge pool at once; each session still gets the entries it would get
alone. LLM-as-judge evaluators (``Builtin.<Name>``, ``<name>.json``) are judged through one ``SpanJudges``
per worker process and query, kept from batch to batch like the evaluators: its judge pool carries its adaptive
concurrency limit (the worker's share of the executor's ``concurrency``) and its 429 back-off over the query's
life, and its judge cache (by default a SQLite file on the executor's local disk) and HTTP client are opened
once. The judge model is the driver's settings completed with the key from this worker's environment
(``judge_keys.executor_model_config``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pandas as pd

from evalkit.documents.json_input import JsonInputError, parse_json_text
from evalkit.spans.llm_judges.judge_runner import SpanJudges
from evalkit.spans.online.session_evaluation import passed, service_name
from evalkit.spans.online.session_tracking import parse_filters, record_session_ids, sampled, session_matches
from evalkit.spans.reading import loading
from evalkit.spans.reading.event_record import is_record, record_key
from evalkit.spans.reading.session_ids import assign_sessions

#: Columns of the parsed span rows.
SPAN_SCHEMA = "session_id string, trace_id string, span_id string, end_time timestamp, document string"
#: Columns of the evaluated result rows (one row per result entry).
RESULT_SCHEMA = (
    "session_id string, position int, session_end timestamp, evaluator string, passed boolean, entry string"
)

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode
_EVALUATORS: dict[str, list] = {}
_WORKERS = None
_JUDGES: dict[str, SpanJudges] = {}


def parse_lines(settings: dict, batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """Lines (``value``: one OTLP export request, traces or logs, or one span or record document per line) ->
    sampled span and event record rows.

    A span without a session attribute (``reading.session_ids``) takes the session of the spans of its trace
    in the same line (one exported request), else, when its trace's root span is in the line, the trace id
    (the trace is its own session); an event record joins as ``spans serve`` joins it
    (``record_session_ids``: its own session id, else its span's, else its trace's), from the spans and
    records of the same Arrow batch of lines (the Collector writes traces and logs as separate lines). What
    finds no session is dropped, as are unsampled sessions and lines that are not JSON. Times are the spans'
    end times and the records' times (event time of the session windows); a record's ``span_id`` column is
    its span's id and its ``record_key`` digest, so retries are dropped and a record is never taken for its
    span.
    """
    percentage = settings["sampling"]
    for batch in batches:
        rows: dict[str, list] = {
            "session_id": [],
            "trace_id": [],
            "span_id": [],
            "end_ns": [],
            "document": [],
        }
        attribute = settings.get("session_attribute")
        parsed = [
            pair
            for text in batch["value"].tolist()
            for pair in _spans(text, settings.get("encoding", "lines"), attribute)
        ]
        for session, doc in _join_records(parsed, attribute):
            if session is None or not sampled(session, percentage):
                continue
            rows["session_id"].append(session)
            rows["trace_id"].append(doc.get("traceId") or "")
            if is_record(doc):
                trace, span, digest = record_key(doc)
                rows["span_id"].append(f"{span}:{digest}")
                rows["end_ns"].append(doc["timeUnixNano"])
            else:
                rows["span_id"].append(doc["spanId"])
                rows["end_ns"].append(doc["endTimeUnixNano"])
            rows["document"].append(_dumps(doc))
        end_ns = rows.pop("end_ns")
        frame = pd.DataFrame(
            {k: pd.Series(v, dtype=object) for k, v in rows.items()}
        )  # object even when empty
        microseconds = pd.Series(end_ns, dtype="int64") // 1000  # Spark's timestamps are microseconds
        frame.insert(3, "end_time", pd.to_datetime(microseconds, unit="us", utc=True))
        yield frame


def _spans(text, encoding: str = "lines", attribute: str | None = None) -> list[tuple[str | None, dict]]:
    """The span documents of one line or Kafka message, with their session ids (``reading.session_ids``:
    a span without a session attribute takes its trace's session in the same message, else its trace id)."""
    if encoding == "otlp_proto":
        from evalkit.spans.online.intake import BadRequest, protobuf_dict

        try:
            value = protobuf_dict(bytes(text or b""))
        except BadRequest:
            return []
    else:
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", "replace")
        if not isinstance(text, str) or not text.strip():
            return []
        try:
            value = parse_json_text(text)
        except JsonInputError:
            return []
    docs: list[dict] = []
    loading.read_object(value, ("stream", ""), docs, [], [])
    sessions, _ = assign_sessions(docs, attribute, partial=True)
    return list(zip(sessions, docs))


class _Known:
    """The sessions of the spans and records of one batch of lines, as ``record_session_ids`` asks a store."""

    def __init__(self, pairs: list[tuple[str | None, dict]]):
        self.spans: dict[tuple[str, str], str] = {}
        self.traces: dict[str, str] = {}
        for session, doc in pairs:
            if session is None or not doc.get("traceId"):
                continue
            self.traces.setdefault(doc["traceId"], session)
            if not is_record(doc):
                self.spans.setdefault((doc["traceId"], doc["spanId"]), session)

    def span_sessions(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        return {k: self.spans[k] for k in keys if k in self.spans}

    def trace_sessions(self, trace_ids: list[str]) -> dict[str, str]:
        return {t: self.traces[t] for t in trace_ids if t in self.traces}


def _join_records(
    pairs: list[tuple[str | None, dict]], attribute: str | None = None
) -> list[tuple[str | None, dict]]:
    """``(session, document)`` pairs of a batch with each event record's session found
    (``record_session_ids`` over the batch's spans and records)."""
    at = [i for i, (_, doc) in enumerate(pairs) if is_record(doc)]
    if not at:
        return pairs
    known = _Known(pairs)
    found = record_session_ids([pairs[i][1] for i in at], known, attribute)
    out = list(pairs)
    for i, session in zip(at, found):
        out[i] = (session, pairs[i][1])
    return out


def evaluate_sessions(settings: dict, batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """Closed sessions (``session_id``, ``session_end``, ``documents``) -> one row per result entry.

    A session that no filter rejects is evaluated by every evaluator of the run; a rejected one gives no row
    (``spans serve`` marks it skipped and exports nothing for it either). Each entry carries ``passed`` and
    ``service`` as in ``spans serve``.
    """
    evaluators = _evaluators(settings)
    judges = _judges(settings)
    filters = parse_filters(settings["filters"])
    for batch in batches:
        out: dict[str, list] = {
            k: [] for k in ("session_id", "position", "session_end", "evaluator", "passed", "entry")
        }
        kept = []
        for session_id, end, documents in zip(batch["session_id"], batch["session_end"], batch["documents"]):
            docs = sorted((json.loads(d) for d in documents), key=_order)
            docs = list({_identity(d): d for d in docs}.values())  # exporter retries
            if evaluators and session_matches(docs, filters):
                kept.append((session_id, end, docs))
        results = _evaluate(kept, evaluators, judges, settings["timeout"])
        for session_id, end, docs in kept:
            service = service_name(docs)
            for position, entry in enumerate(results.get(session_id, [])):
                entry["passed"] = passed(entry, evaluators)
                entry["service"] = service
                out["session_id"].append(session_id)
                out["position"].append(position)
                out["session_end"].append(end)
                out["evaluator"].append(entry["evaluatorName"])
                out["passed"].append(entry["passed"])
                out["entry"].append(_dumps(entry))
        frame = pd.DataFrame(
            {k: pd.Series(v, dtype=object) for k, v in out.items()}
        )  # object even when empty
        frame["position"] = frame["position"].astype("int32")
        frame["passed"] = frame["passed"].astype(bool)
        frame["session_end"] = pd.to_datetime(frame["session_end"], utc=True)
        yield frame


def _order(doc: dict) -> tuple:
    """Spans by start, records by time (as ``sessionSpans`` orders them), then by ids."""
    time = doc["timeUnixNano"] if is_record(doc) else doc["startTimeUnixNano"]
    return time, doc.get("traceId") or "", doc.get("spanId") or ""


def _identity(doc: dict) -> tuple:
    """A span's ``(traceId, spanId)``, a record's ``record_key``: equal for a retry's copy only."""
    return record_key(doc) if is_record(doc) else (doc["traceId"], doc["spanId"])


def _evaluate(sessions: list, evaluators: list, judges: SpanJudges | None, timeout: float) -> dict[str, list]:
    """The result entries of each of ``sessions`` (``(id, end, documents)``), by session id.

    All the sessions of a batch go through one ``evaluate_groups`` call (each session read from its documents
    with ``payload.session_spans``, as ``spans serve`` reads it: no span frame), so that an LLM judge's calls
    for all of them reach the judge pool together and run ``concurrency`` at a time (one session at a time
    would rarely have more than one call in flight), and the code-based evaluators' worker processes (kept for
    the Python worker's life) serve every batch.
    Each session's entries are those, and in the order, that evaluating it alone gives.
    """
    if not sessions:
        return {}
    from evalkit.spans.evaluation import evaluate_groups
    from evalkit.spans.lambdas.payload import session_spans

    groups = [session_spans(session_id, docs) for session_id, _, docs in sessions]
    by_session: dict[str, list] = {}
    for entry in evaluate_groups(groups, evaluators, timeout=timeout, judges=judges, workers=_workers()):
        by_session.setdefault(entry["context"]["spanContext"]["sessionId"], []).append(entry)
    return by_session


def _workers():
    """The code-based evaluators' worker processes of this Python worker, kept from batch to batch (they end
    with it)."""
    global _WORKERS
    if _WORKERS is None:
        from evalkit.spans.lambdas.evaluator_workers import EvaluatorWorkers

        _WORKERS = EvaluatorWorkers()
    return _WORKERS


def _evaluators(settings: dict) -> list:
    """The run's span evaluators, resolved once per worker process (``spans serve``'s resolution)."""
    token = settings["token"]
    if token not in _EVALUATORS:
        from evalkit.spans.evaluator_specs import resolve_span_evaluator
        from evalkit.spark.shipping import locate

        folder = locate(settings["custom"])
        _EVALUATORS[token] = [resolve_span_evaluator(spec, folder) for spec in settings["evaluators"]]
    return _EVALUATORS[token]


def _judges(settings: dict) -> SpanJudges | None:
    """The run's judge model, pool and cache, made once per worker process; None without LLM judges."""
    if settings.get("judge") is None:
        return None
    token = settings["token"]
    if token not in _JUDGES:
        from evalkit.judges.cache import JudgeCache
        from evalkit.judges.pool import JudgePool
        from evalkit.spark.judge_keys import executor_cache, executor_model_config

        cache = executor_cache(settings["cache"])
        pool = JudgePool(
            settings["concurrency"],
            timeout=settings["judge_timeout"],
            cache=JudgeCache() if cache is True else (cache or None),
        )
        _JUDGES[token] = SpanJudges(executor_model_config(settings["judge"]), pool=pool)
    return _JUDGES[token]
