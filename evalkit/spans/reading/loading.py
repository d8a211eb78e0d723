"""OpenTelemetry spans in: span files (OTLP JSON or flat span documents as JSONL) -> one DataFrame row per span.

The input forms are told apart by content rather than by file name:

* OTLP JSON as the OTLP/HTTP JSON exporter writes it (``{"resourceSpans": [...]}``, and ``{"resourceLogs":
  [...]}`` for event records), one such object per file or one per line: converted by ``otlp_json`` and
  ``event_record``;
* flat span documents, one JSON object per line, as CloudWatch keeps them in the ``aws/spans`` log group
  (``traceId``, ``spanId``, ``name``, ``startTimeUnixNano``, ``attributes`` as a plain object, and so on):
  normalised by ``span_document``;
* flat event records, as CloudWatch keeps an agent's OTel log records (no ``name``, a ``body`` with the
  ``input`` / ``output`` messages, ``timeUnixNano``, ``traceId`` + ``spanId`` of their span): normalised by
  ``event_record``. Spans and records may share a file.

Each becomes the same canonical flat document (the ``document`` column, what a Lambda evaluator receives in
``sessionSpans``), so the two forms of the same spans give identical frames; ``span_frame`` builds the frame
and its derived columns. This module reads the files (plain or gzip, whole-file JSON or JSON lines), drops
spans repeated across overlapping exports, and reports problems.

Malformed spans do not stop the load: each is reported as ``file: line N: 'field' problem`` in
``df.attrs["problems"]`` (and one warning), and the valid spans are kept. Only a file with no valid span at
all is an error.
"""

from __future__ import annotations

import gc
import gzip
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.documents.json_input import (
    JsonInputError,
    max_document_bytes,
    parse_json,
    read_limited,
    too_large,
)
from evalkit.errors import EvalkitError
from evalkit.spans.reading.event_record import flat_record, looks_like_record, read_otlp_logs, record_key
from evalkit.spans.reading.otlp_json import read_otlp
from evalkit.spans.reading.span_document import BadSpan, flat_document, location, type_name
from evalkit.spans.reading.span_frame import build_frame

if TYPE_CHECKING:
    import pandas as pd

_SUFFIXES = (".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz")
#: How many problems go into the warning and the error message (all are kept in ``attrs``).
SHOWN_PROBLEMS = 10


def load(path: str | os.PathLike, *, warn: bool = True) -> pd.DataFrame:
    """Read a span file (or every ``*.json``/``*.jsonl``/``*.ndjson`` in a folder) into a span frame.

    One row per span, ordered by start time (stable), with the columns in ``COLUMNS``. Problems with
    individual lines or spans are collected in ``df.attrs["problems"]`` (and, with ``warn``, announced by one
    warning); a file with no valid span at all raises ``EvalkitError``.
    """
    # Loading builds a few containers per span and frees none: the cyclic collector's repeated full scans of
    # the growing heap would only cost time (about 30% at 100,000 spans).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(Path(path), warn)
    finally:
        if was_enabled:
            gc.enable()


def _load(source: Path, warn: bool) -> pd.DataFrame:
    if source.is_dir():
        files = sorted(p for p in source.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES))
        if not files:
            raise EvalkitError(f"{source}: no span files (*.json, *.jsonl, *.ndjson) in this folder")
    elif source.exists():  # a file, or a device or pipe (/dev/stdin, <(zcat spans.gz)): read up to the limit
        files = [source]
    else:
        raise EvalkitError(f"{source}: span file not found")
    docs: list[dict] = []
    wheres: list[tuple[str, str]] = []
    problems: list[str] = []
    for file in files:
        _read_file(file, docs, wheres, problems)
    if not docs:
        shown = problems[:SHOWN_PROBLEMS]
        more = len(problems) - len(shown)
        if more:
            shown.append(f"... and {more} more")
        raise EvalkitError(f"{source}: no valid span found", shown)
    docs = _drop_duplicates(docs, wheres, problems)
    frame = build_frame(docs, problems, str(source))
    frame.attrs["problems"] = problems
    frame.attrs["source"] = str(source)
    if warn and problems:
        _warn(str(source), problems)
    return frame


def from_documents(documents: list[dict], source: str = "<captured spans>") -> pd.DataFrame:
    """The spans frame of flat span documents already in memory (for example an agent's captured spans)."""
    return build_frame(list(documents), [], source)


# --- reading ------------------------------------------------------------------------------------------


def _read_file(file: Path, docs: list, wheres: list, problems: list) -> None:
    """Append the valid spans of ``file`` to ``docs`` (with where they came from) and its problems.

    Files (decompressed, for ``.gz``) are read up to the document size limit (``EVALKIT_MAX_DOCUMENT_BYTES``)
    and parsed by the shared JSON reader, which refuses excessive nesting, duplicate keys and lone surrogates.
    """
    label = str(file)
    limit = max_document_bytes()
    if file.name.endswith(".gz"):
        try:
            with gzip.open(file, "rb") as handle:
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
    text = text.lstrip("\ufeff")
    if not text.strip():
        problems.append(f"{label}: the file is empty")
        return
    # A whole-file JSON document (pretty-printed OTLP JSON, a JSON array of spans) or JSON lines? A JSON lines
    # file fails here at the end of its first line, so trying costs next to nothing.
    try:
        whole = parse_json(text)
    except JsonInputError as exc:
        if not exc.syntax:  # JSON, but refused (duplicate keys, too deep, lone surrogates)
            problems.append(f"{label}: {exc}")
            return
        whole = _NOT_JSON
    if whole is not _NOT_JSON:
        if isinstance(whole, list):
            for index, item in enumerate(whole):
                read_object(item, (label, f"[{index}]"), docs, wheres, problems)
        else:
            read_object(whole, (label, ""), docs, wheres, problems)
        return
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
        read_object(item, where, docs, wheres, problems)


_NOT_JSON = object()


def _json_reason(exc: JsonInputError) -> str:
    decode_error = exc.decode_error
    if decode_error is not None:
        return f"not valid JSON ({decode_error.msg} at column {decode_error.colno})"
    return f"not valid JSON ({exc})" if exc.syntax else str(exc)


def read_object(item: Any, where: tuple[str, str], docs: list, wheres: list, problems: list) -> None:
    """One JSON value: an OTLP export request (``resourceSpans``) or a flat span document."""
    if not isinstance(item, dict):
        problems.append(f"{location(where)}: expected a span (a JSON object), found {type_name(item)}")
        return
    if "resourceSpans" in item:
        read_otlp(item, where, docs, wheres, problems)
        return
    if "resourceLogs" in item:
        read_otlp_logs(item, where, docs, wheres, problems)
        return
    try:
        docs.append(flat_record(item) if looks_like_record(item) else flat_document(item))
    except BadSpan as exc:
        problems.append(f"{location(where)}: {exc}")
        return
    wheres.append(where)


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

    shown = problems[:SHOWN_PROBLEMS]
    more = len(problems) - len(shown)
    text = "\n  ".join(shown) + (f"\n  ... and {more} more (see df.attrs['problems'])" if more else "")
    warnings.warn(
        f"{source}: {len(problems)} problem(s) while loading spans:\n  {text}", EvalkitWarning, stacklevel=3
    )
