"""OpenTelemetry spans in: span files of every shape people keep -> one DataFrame row per span or event record.

The input forms are told apart by content rather than by file name (``shapes`` recognises each JSON value and
names it; one INFO log line per file says what was read, e.g. ``spans.jsonl: 12 span(s) + 10 event record(s)
(OpenTelemetry Collector file exporter lines: ...)``):

* OTLP JSON as the OTLP/HTTP JSON exporter writes it (``{"resourceSpans": [...]}``, and ``{"resourceLogs":
  [...]}`` for event records), one such object per file or one per line: converted by ``otlp_json`` and
  ``event_record``;
* flat span documents, one JSON object per line, as CloudWatch keeps them in the ``aws/spans`` log group
  (``traceId``, ``spanId``, ``name``, ``startTimeUnixNano``, ``attributes`` as a plain object, and so on):
  normalised by ``span_document``;
* flat event records, as CloudWatch keeps an agent's OTel log records (no ``name``, a ``body`` with the
  ``input`` / ``output`` messages, ``timeUnixNano``, ``traceId`` + ``spanId`` of their span): normalised by
  ``event_record``. Spans and records may share a file;
* the OpenTelemetry Collector's file exporter lines: one ``TracesData`` / ``LogsData`` (OTLP JSON) object per
  line, traces and logs mixed (metrics lines are skipped);
* snake_case span dicts (``trace_id``, ``span_id``, ``start_time`` in nanoseconds, ``span_events``, whose
  bodies are event records): ``snake_spans``;
* the OpenTelemetry Python SDK's ``to_json()`` spans and log records, as JSON lines or as the console
  exporters print them (pretty-printed objects one after another, ``json_stream``): ``sdk_json``;
* any of these in an object's ``spans`` list, as strands-agents/evals dumps a session
  (``{"session_id", "span_count", "spans": [...]}``): read like a bare list of spans.

Each becomes the same canonical flat document (the ``document`` column, what a Lambda evaluator receives in
``sessionSpans``), so the two forms of the same spans give identical frames; ``span_frame`` builds the frame
and its derived columns. This module reads the files (plain or gzip, whole-file JSON or JSON lines), drops
spans repeated across overlapping exports, and reports problems. Session ids follow ``session_ids``.

Malformed spans do not stop the load: each is reported as ``file: line N: 'field' problem`` in
``df.attrs["problems"]`` (and one warning), and the valid spans are kept. Only a file with no valid span at
all is an error.
"""

from __future__ import annotations

import gc
import gzip
import logging
import os
import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.documents.files.input_files import open_input
from evalkit.documents.json_input import (
    JsonInputError,
    max_document_bytes,
    parse_json,
    read_limited,
    too_large,
)
from evalkit.errors import EvalkitError, shown
from evalkit.spans.reading.event_record import is_record, record_key
from evalkit.spans.reading.json_stream import looks_like_stream, split_stream
from evalkit.spans.reading.shapes import describe, read_value, shape_of
from evalkit.spans.reading.span_document import location
from evalkit.spans.reading.span_frame import build_frame

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)
_SUFFIXES = (".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz")
#: How many problems go into the warning and the error message (all are kept in ``attrs``).
SHOWN_PROBLEMS = 10


def load(path: str | os.PathLike, *, warn: bool = True, session_attribute: str | None = None) -> pd.DataFrame:
    """Read a span file (or every ``*.json``/``*.jsonl``/``*.ndjson`` in a folder) into a span frame.

    One row per span or event record, ordered by start time (stable), with the columns in ``COLUMNS``.
    Problems with individual lines or spans are collected in ``df.attrs["problems"]`` (and, with ``warn``,
    announced by one warning); a file with no valid span at all raises ``EvalkitError``. ``session_attribute``
    names the attribute holding the session id (default: ``session_ids.SESSION_ATTRIBUTES``); a trace with
    none is its own session, said once in the problems. ``df.attrs["files"]`` says what each file held.
    """
    # Loading builds a few containers per span and frees none: the cyclic collector's repeated full scans of
    # the growing heap would only cost time (about 30% at 100,000 spans).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(Path(path), warn, session_attribute)
    finally:
        if was_enabled:
            gc.enable()


def _load(source: Path, warn: bool, session_attribute: str | None) -> pd.DataFrame:
    if source.is_dir():
        files = sorted(p for p in source.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES))
        if not files:
            raise EvalkitError(f"{shown(source)}: no span files (*.json, *.jsonl, *.ndjson) in this folder")
    elif source.exists():  # a regular file; a pipe, device or socket is refused when it is opened
        files = [source]
    else:
        raise EvalkitError(f"{shown(source)}: span file not found")
    docs: list[dict] = []
    wheres: list[tuple[str, str]] = []
    problems: list[str] = []
    read = [_read_file(file, docs, wheres, problems) for file in files]
    if not docs:
        listed = problems[:SHOWN_PROBLEMS] or [entry["summary"] for entry in read]
        more = len(problems) - len(listed)
        if more:
            listed.append(f"... and {more} more")
        raise EvalkitError(f"{shown(source)}: no valid span found", listed)
    docs = _drop_duplicates(docs, wheres, problems)
    frame = build_frame(docs, problems, str(source), session_attribute)
    frame.attrs["problems"] = problems
    frame.attrs["source"] = str(source)
    frame.attrs["files"] = read
    if warn and problems:
        _warn(shown(source), problems)
    return frame


def from_documents(documents: list[dict], source: str = "<captured spans>") -> pd.DataFrame:
    """The spans frame of flat span documents already in memory (for example an agent's captured spans)."""
    return build_frame(list(documents), [], source)


# --- reading ------------------------------------------------------------------------------------------


def _read_file(file: Path, docs: list, wheres: list, problems: list) -> dict:
    """Append the valid spans and records of ``file`` to ``docs`` (with where they came from) and its problems;
    returns what the file held (``layout``, ``shapes`` counted, ``spans``, ``records``, ``summary``), also
    logged at INFO.

    Files (decompressed, for ``.gz``) are read up to the document size limit (``EVALKIT_MAX_DOCUMENT_BYTES``)
    and parsed by the shared JSON reader, which refuses excessive nesting, duplicate keys and lone surrogates.
    """
    label = shown(file)
    before = len(docs)
    shapes: Counter = Counter()
    layout = _read_values(label, _read_text(file, label), docs, wheres, problems, shapes)
    records = sum(1 for d in docs[before:] if is_record(d))
    spans = len(docs) - before - records
    summary = describe(label, layout, shapes, spans, records)
    log.info("%s", summary)
    return {
        "file": label,
        "layout": layout,
        "shapes": dict(shapes),
        "spans": spans,
        "records": records,
        "summary": summary,
    }


def _read_text(file: Path, label: str) -> str:
    limit = max_document_bytes()
    if file.name.endswith(".gz"):
        try:
            with open_input(file, "span file") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as handle:
                data = handle.read(limit + 1)
        except (OSError, EOFError) as exc:
            raise EvalkitError(f"{label}: cannot read the span file: {exc}") from None
        if len(data) > limit:
            raise EvalkitError(too_large(f"{label} (decompressed)", limit))
    else:
        data = read_limited(file, limit, what="span file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvalkitError(f"{label}: cannot read the span file: {exc}") from None
    return text.lstrip("\ufeff")


def _read_values(label: str, text: str, docs: list, wheres: list, problems: list, shapes: Counter) -> str:
    """Read the JSON values of one file's text; returns its layout (``empty``, ``whole``, ``array``,
    ``lines`` or ``stream``)."""
    if not text.strip():
        problems.append(f"{label}: the file is empty")
        return "empty"
    # A whole-file JSON document (pretty-printed OTLP JSON, a JSON array of spans) or JSON lines? A JSON lines
    # file fails here at the end of its first line, so trying costs next to nothing.
    try:
        whole = parse_json(text)
    except JsonInputError as exc:
        if not exc.syntax:  # JSON, but refused (duplicate keys, too deep, lone surrogates)
            problems.append(f"{label}: {exc}")
            return "whole"
        whole = _NOT_JSON
    if whole is not _NOT_JSON:
        if isinstance(whole, list):
            for index, item in enumerate(whole):
                read_object(item, (label, f"[{index}]"), docs, wheres, problems, shapes)
            return "array"
        read_object(whole, (label, ""), docs, wheres, problems, shapes)
        return "whole"
    if looks_like_stream(text):  # pretty-printed objects one after another (the SDK's console exporters)
        for number, (lineno, item) in enumerate(split_stream(text), 1):
            where = (label, f"object {number} (line {lineno})")
            if isinstance(item, JsonInputError):
                problems.append(f"{location(where)}: {_json_reason(item)}")
            else:
                read_object(item, where, docs, wheres, problems, shapes)
        return "stream"
    # JSON lines: split on "\n" only (str.splitlines would also split on U+2028 inside JSON strings).
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = (label, f"line {lineno}")
        try:
            item = parse_json(line)
        except JsonInputError as exc:
            problems.append(f"{label}: line {lineno}: {_json_reason(exc)}")
            continue
        read_object(item, where, docs, wheres, problems, shapes)
    return "lines"


_NOT_JSON = object()


def _json_reason(exc: JsonInputError) -> str:
    decode_error = exc.decode_error
    if decode_error is not None:
        return f"not valid JSON ({decode_error.msg} at column {decode_error.colno})"
    return f"not valid JSON ({exc})" if exc.syntax and not str(exc).startswith("not valid") else str(exc)


def read_object(
    item: Any, where: tuple[str, str], docs: list, wheres: list, problems: list, shapes: Counter | None = None
) -> None:
    """One JSON value of any shape ``shapes`` recognises (OTLP JSON, a flat span document or event record, a
    snake_case span dict, the OpenTelemetry SDK's ``to_json()``), or an object of no such shape holding a
    ``spans`` list (strands-agents/evals' session dumps, ``{"session_id", "span_count", "spans": [...]}``),
    read like a bare list of spans."""
    if isinstance(item, dict) and isinstance(item.get("spans"), list) and shape_of(item) is None:
        label, position = where
        for index, span in enumerate(item["spans"]):
            inner = f"{position}: spans[{index}]" if position else f"spans[{index}]"
            read_value(span, (label, inner), docs, wheres, problems, shapes)
        return
    read_value(item, where, docs, wheres, problems, shapes)


def _drop_duplicates(docs: list, wheres: list, problems: list) -> list:
    """Keep the first of spans repeated with one (traceId, spanId), and of records sent twice whole: exports
    overlap, tool calls must not."""
    seen: dict[tuple, int] = {}
    keep = []
    for index, doc in enumerate(docs):
        key = (doc["traceId"], doc["spanId"]) if "startTimeUnixNano" in doc else record_key(doc)
        first = seen.setdefault(key, index)
        if first == index:
            keep.append(doc)
            continue
        label, loc = wheres[first]
        original = loc if label == wheres[index][0] and loc else location(wheres[first])
        what = "span" if len(key) == 2 else "event record"
        problems.append(
            f"{location(wheres[index])}: duplicate of the {what} at {original} "
            f"(traceId {key[0]}, spanId {key[1]}); ignored"
        )
    return keep


def _warn(source: str, problems: list[str]) -> None:
    from evalkit.documents.versions import EvalkitWarning

    listed = problems[:SHOWN_PROBLEMS]
    more = len(problems) - len(listed)
    text = "\n  ".join(listed) + (f"\n  ... and {more} more (see df.attrs['problems'])" if more else "")
    warnings.warn(
        f"{source}: {len(problems)} problem(s) while loading spans:\n  {text}", EvalkitWarning, stacklevel=3
    )
