"""OpenTelemetry spans in: OTLP JSON or flat span documents (JSONL) -> one DataFrame row per span.

Two input forms are read, and told apart by content rather than by file name:

* OTLP JSON as the OTLP/HTTP JSON exporter writes it: ``{"resourceSpans": [...]}`` with attribute lists of
  ``{"key", "value": {"stringValue": ...}}``, hex ids and int64 times as strings; one such object per file or
  one per line. Base64 ids (what protobuf's own JSON mapping, ``MessageToJson``, writes) are accepted too.
* Flat span documents, one JSON object per line, as CloudWatch keeps them in the ``aws/spans`` log group:
  ``traceId``, ``spanId``, ``name``, ``startTimeUnixNano``, ``attributes`` as a plain object, and so on.

Both become the same canonical flat document (the ``document`` column, what a Lambda evaluator receives in
``sessionSpans``), so the two forms of the same spans give identical frames. The derived columns
(``is_tool``, ``tool_name``, ``tool_output``, ``response_text``) follow the attribute lists of the AgentCore
reference evaluators, so a local evaluator and a notebook see the spans the same way.

Malformed spans do not stop the load: each is reported as ``file: line N: 'field' problem`` in
``df.attrs["problems"]`` (and one warning), and the valid spans are kept. Only a file with no valid span at
all is an error.
"""

from __future__ import annotations

import base64
import binascii
import gc
import gzip
import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.errors import EvalkitError

#: Frame columns, in order.
COLUMNS = (
    "session_id",
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "kind",
    "start_ns",
    "end_ns",
    "status_code",
    "operation",
    "is_tool",
    "tool_name",
    "tool_output",
    "response_text",
    "document",
)

#: Attribute names, first non-blank one wins (the order of the AgentCore reference evaluators).
TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
TOOL_OUTPUT_KEYS = (
    "gen_ai.tool.call.result",
    "traceloop.entity.output",
    "tool.output",
    "tool.result",
    "output.value",
    "gen_ai.tool.output",
)
RESPONSE_KEYS = (
    "gen_ai.task.output",
    "traceloop.entity.output",
    "gen_ai.completion.0.content",
    "gen_ai.completion",
    "output.value",
)
#: Span events that carry message text, and the event attribute holding it.
RESPONSE_EVENTS = {"gen_ai.choice": "message", "gen_ai.user.message": "content"}
TOOL_PREFIX = "execute_tool "

_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
_HEX16 = re.compile(r"[0-9a-fA-F]{16}")
_SUFFIXES = (".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz")
#: How many problems go into the warning and the error message (all are kept in ``attrs``).
SHOWN_PROBLEMS = 10


class _Bad(Exception):
    """One span is unusable: the message names the field, the caller prefixes file and line."""


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
    elif source.is_file():
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
    frame = _frame(docs, problems, str(source))
    frame.attrs["problems"] = problems
    frame.attrs["source"] = str(source)
    if warn and problems:
        _warn(str(source), problems)
    return frame


def sessions(spans: pd.DataFrame) -> pd.DataFrame:
    """One row per session, in order of first span: its traces, spans, tool calls and time range.

    Spans without a session id are left out (they cannot be evaluated).
    """
    known = spans[spans["session_id"].notna()]
    grouped = known.groupby("session_id", sort=False)
    table = pd.DataFrame(
        {
            "traces": grouped["trace_id"].nunique(),
            "spans": grouped.size(),
            "tool_calls": grouped["is_tool"].sum().astype("int64"),
            "start_ns": grouped["start_ns"].min(),
            "end_ns": grouped["end_ns"].max(),
        }
    )
    table.index.name = "session_id"
    return table.reset_index()


# --- reading ------------------------------------------------------------------------------------------


def _read_file(file: Path, docs: list, wheres: list, problems: list) -> None:
    """Append the valid spans of ``file`` to ``docs`` (with where they came from) and its problems."""
    label = str(file)
    try:
        if file.name.endswith(".gz"):
            with gzip.open(file, "rt", encoding="utf-8") as handle:
                text = handle.read()
        else:
            text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise EvalkitError(f"{label}: cannot read the span file: {exc}") from None
    text = text.lstrip("\ufeff")
    if not text.strip():
        problems.append(f"{label}: the file is empty")
        return
    # A whole-file JSON document (pretty-printed OTLP JSON, a JSON array of spans) or JSON lines? A JSON lines
    # file fails here at the end of its first line, so trying costs next to nothing.
    try:
        whole = json.loads(text)
    except ValueError:
        whole = _NOT_JSON
    if whole is not _NOT_JSON:
        if isinstance(whole, list):
            for index, item in enumerate(whole):
                _read_object(item, (label, f"[{index}]"), docs, wheres, problems)
        else:
            _read_object(whole, (label, ""), docs, wheres, problems)
        return
    # JSON lines: split on "\n" only (str.splitlines would also split on U+2028 inside JSON strings).
    loads = json.loads
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = (label, f"line {lineno}")
        try:
            item = loads(line)
        except ValueError as exc:
            problems.append(f"{label}: line {lineno}: not valid JSON ({_json_reason(exc)})")
            continue
        _read_object(item, where, docs, wheres, problems)


_NOT_JSON = object()


def _json_reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return str(exc)


def _at(where: tuple[str, str]) -> str:
    """``file: location`` for a problem message (just ``file`` for a whole-file document)."""
    label, loc = where
    return f"{label}: {loc}" if loc else label


def _read_object(item: Any, where: tuple[str, str], docs: list, wheres: list, problems: list) -> None:
    """One JSON value: an OTLP export request (``resourceSpans``) or a flat span document."""
    if not isinstance(item, dict):
        problems.append(f"{_at(where)}: expected a span (a JSON object), found {_type(item)}")
        return
    if "resourceSpans" in item:
        _read_otlp(item, where, docs, wheres, problems)
        return
    try:
        docs.append(_flat_document(item))
    except _Bad as exc:
        problems.append(f"{_at(where)}: {exc}")
        return
    wheres.append(where)


def _read_otlp(request: dict, place: tuple[str, str], docs: list, wheres: list, problems: list) -> None:
    where = _at(place)
    label, loc = place
    resource_spans = request["resourceSpans"]
    if not isinstance(resource_spans, list):
        problems.append(f"{where}: 'resourceSpans' must be a list, found {_type(resource_spans)}")
        return
    for r, block in enumerate(resource_spans):
        at = f"resourceSpans[{r}]"
        if not isinstance(block, dict):
            problems.append(f"{where}: '{at}' must be an object, found {_type(block)}")
            continue
        try:
            resource = _otlp_resource(block.get("resource"), at)
        except _Bad as exc:
            problems.append(f"{where}: {exc}")
            continue
        scope_spans = block.get("scopeSpans", block.get("instrumentationLibrarySpans", []))
        if not isinstance(scope_spans, list):
            problems.append(f"{where}: '{at}.scopeSpans' must be a list, found {_type(scope_spans)}")
            continue
        for s, scope_block in enumerate(scope_spans):
            sat = f"{at}.scopeSpans[{s}]"
            if not isinstance(scope_block, dict):
                problems.append(f"{where}: '{sat}' must be an object, found {_type(scope_block)}")
                continue
            try:
                scope = _otlp_scope(scope_block.get("scope", scope_block.get("instrumentationLibrary")), sat)
            except _Bad as exc:
                problems.append(f"{where}: {exc}")
                continue
            spans = scope_block.get("spans", [])
            if not isinstance(spans, list):
                problems.append(f"{where}: '{sat}.spans' must be a list, found {_type(spans)}")
                continue
            for i, span in enumerate(spans):
                span_place = (label, f"{loc}: {sat}.spans[{i}]" if loc else f"{sat}.spans[{i}]")
                if not isinstance(span, dict):
                    problems.append(
                        f"{_at(span_place)}: expected a span (a JSON object), found {_type(span)}"
                    )
                    continue
                try:
                    docs.append(_otlp_document(span, resource, scope))
                except _Bad as exc:
                    problems.append(f"{_at(span_place)}: {exc}")
                    continue
                wheres.append(span_place)


# --- canonical span documents ---------------------------------------------------------------------------


def _otlp_document(span: dict, resource: dict | None, scope: dict | None) -> dict:
    """An OTLP JSON span as a flat span document: ids in hex, times as ints, attributes as a plain object."""
    doc: dict[str, Any] = {}
    if resource is not None:
        doc["resource"] = resource
    if scope is not None:
        doc["scope"] = scope
    for key, value in span.items():
        if key == "attributes" and not isinstance(value, dict):
            value = _otlp_attributes(value, "attributes")
        elif key == "events":
            value = [_otlp_event(e, f"events[{i}]") for i, e in enumerate(_list(value, "events"))]
        elif key == "links":
            value = [_otlp_link(x, f"links[{i}]") for i, x in enumerate(_list(value, "links"))]
        doc[key] = value
    doc["traceId"] = _otlp_id(_required_id(span, "traceId"), 16)
    doc["spanId"] = _otlp_id(_required_id(span, "spanId"), 8)
    parent = span.get("parentSpanId")
    doc["parentSpanId"] = _otlp_id(parent, 8) if isinstance(parent, str) else parent
    return _finish(doc)


def _flat_document(span: dict) -> dict:
    """A flat span document, normalised (kind and status names, int times, empty lists dropped)."""
    doc = dict(span)
    _required_id(doc, "traceId")
    _required_id(doc, "spanId")
    attributes = doc.get("attributes")
    if isinstance(attributes, list):
        doc["attributes"] = _otlp_attributes(attributes, "attributes")
    elif attributes is not None and not isinstance(attributes, dict):
        raise _Bad(f"'attributes' must be an object, found {_type(attributes)}")
    resource = doc.get("resource")
    if resource is not None:
        if not isinstance(resource, dict):
            raise _Bad(f"'resource' must be an object, found {_type(resource)}")
        if isinstance(resource.get("attributes"), list):
            doc["resource"] = {**resource, "attributes": _otlp_attributes(resource["attributes"], "resource")}
    events = doc.get("events")
    if events is not None:
        doc["events"] = [_flat_event(e, f"events[{i}]") for i, e in enumerate(_list(events, "events"))]
    return _finish(doc)


def _finish(doc: dict) -> dict:
    """The checks and normalisations shared by both forms."""
    name = doc.get("name")
    if name is None:
        raise _Bad("'name' is missing")
    if not isinstance(name, str):
        raise _Bad(f"'name' must be a string, found {_type(name)}")
    doc["startTimeUnixNano"] = _time(doc.get("startTimeUnixNano"), "startTimeUnixNano")
    doc["endTimeUnixNano"] = _time(doc.get("endTimeUnixNano"), "endTimeUnixNano")
    if doc["endTimeUnixNano"] < doc["startTimeUnixNano"]:
        raise _Bad("'endTimeUnixNano' is before 'startTimeUnixNano'")
    parent = doc.get("parentSpanId")
    if parent in (None, ""):
        doc.pop("parentSpanId", None)
    elif not isinstance(parent, str):
        raise _Bad(f"'parentSpanId' must be a string, found {_type(parent)}")
    doc["kind"] = _kind(doc.get("kind"))
    doc["status"] = _status(doc.get("status"))
    if doc.get("attributes") is None:
        doc["attributes"] = {}
    for key in ("events", "links"):
        if key in doc and not doc[key]:
            del doc[key]
    return doc


def _required_id(span: dict, key: str) -> str:
    value = span.get(key)
    if value is None:
        raise _Bad(f"'{key}' is missing")
    if not isinstance(value, str):
        raise _Bad(f"'{key}' must be a string, found {_type(value)}")
    if not value:
        raise _Bad(f"'{key}' is empty")
    return value


def _otlp_id(value: str, size: int) -> str:
    """Lower-case hex for an OTLP id written in hex (the OTLP JSON rule) or in base64 (protobuf's mapping)."""
    if (_HEX32 if size == 16 else _HEX16).fullmatch(value):
        return value.lower()
    if value and len(value) == 4 * ((size + 2) // 3):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return value
        if len(raw) == size:
            return raw.hex()
    return value


def _time(value: Any, key: str) -> int:
    if value is None:
        raise _Bad(f"'{key}' is missing")
    if type(value) is int:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    raise _Bad(f"'{key}' must be an integer (nanoseconds since the epoch), found {value!r}")


def _kind(value: Any) -> str:
    if value is None:
        return "UNSPECIFIED"
    if type(value) is int:
        return _KINDS.get(value, str(value))
    if isinstance(value, str):
        return value.upper().removeprefix("SPAN_KIND_")
    raise _Bad(f"'kind' must be a string or an integer, found {_type(value)}")


def _status(value: Any) -> dict:
    if value is None:
        return {"code": "UNSET"}
    if isinstance(value, str):
        value = {"code": value}
    if not isinstance(value, dict):
        raise _Bad(f"'status' must be an object, found {_type(value)}")
    code = value.get("code", 0)
    if type(code) is int:
        code = _STATUS.get(code, str(code))
    elif isinstance(code, str):
        code = code.upper().removeprefix("STATUS_CODE_")
    else:
        raise _Bad(f"'status.code' must be a string or an integer, found {_type(code)}")
    status = {**value, "code": code}
    if not status.get("message"):
        status.pop("message", None)
    return status


def _list(value: Any, field: str) -> list:
    if not isinstance(value, list):
        raise _Bad(f"'{field}' must be a list, found {_type(value)}")
    return value


def _otlp_resource(resource: Any, at: str) -> dict | None:
    if resource is None:
        return None
    if not isinstance(resource, dict):
        raise _Bad(f"'{at}.resource' must be an object, found {_type(resource)}")
    attributes = _otlp_attributes(resource.get("attributes", []), f"{at}.resource.attributes")
    if not attributes:
        return None
    return {**resource, "attributes": attributes}


def _otlp_scope(scope: Any, at: str) -> dict | None:
    if scope is None:
        return None
    if not isinstance(scope, dict):
        raise _Bad(f"'{at}.scope' must be an object, found {_type(scope)}")
    if not scope:
        return None
    if "attributes" in scope:
        return {**scope, "attributes": _otlp_attributes(scope["attributes"], f"{at}.scope.attributes")}
    return dict(scope)


def _otlp_event(event: Any, field: str) -> dict:
    if not isinstance(event, dict):
        raise _Bad(f"'{field}' must be an object, found {_type(event)}")
    out = dict(event)
    if "attributes" in out:
        out["attributes"] = _otlp_attributes(out["attributes"], f"{field}.attributes")
    if "timeUnixNano" in out:
        out["timeUnixNano"] = _time(out["timeUnixNano"], f"{field}.timeUnixNano")
    return out


def _flat_event(event: Any, field: str) -> dict:
    if not isinstance(event, dict):
        raise _Bad(f"'{field}' must be an object, found {_type(event)}")
    out = dict(event)
    attributes = out.get("attributes")
    if isinstance(attributes, list):
        out["attributes"] = _otlp_attributes(attributes, f"{field}.attributes")
    elif attributes is not None and not isinstance(attributes, dict):
        raise _Bad(f"'{field}.attributes' must be an object, found {_type(attributes)}")
    if "timeUnixNano" in out:
        out["timeUnixNano"] = _time(out["timeUnixNano"], f"{field}.timeUnixNano")
    return out


def _otlp_link(link: Any, field: str) -> dict:
    if not isinstance(link, dict):
        raise _Bad(f"'{field}' must be an object, found {_type(link)}")
    out = dict(link)
    if isinstance(out.get("traceId"), str):
        out["traceId"] = _otlp_id(out["traceId"], 16)
    if isinstance(out.get("spanId"), str):
        out["spanId"] = _otlp_id(out["spanId"], 8)
    if "attributes" in out:
        out["attributes"] = _otlp_attributes(out["attributes"], f"{field}.attributes")
    return out


def _otlp_attributes(items: Any, field: str) -> dict:
    """``[{"key": k, "value": AnyValue}, ...]`` -> ``{k: plain value}`` (a later duplicate key wins)."""
    if not isinstance(items, list):
        raise _Bad(f"'{field}' must be a list of {{key, value}}, found {_type(items)}")
    out: dict[str, Any] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _Bad(f"'{field}[{i}]' must be an object, found {_type(item)}")
        key = item.get("key")
        if not isinstance(key, str):
            raise _Bad(
                f"'{field}[{i}].key' is missing" if key is None else f"'{field}[{i}].key' must be a string"
            )
        out[key] = _any_value(item.get("value"), f"{field}[{i}].value")
    return out


def _any_value(value: Any, field: str) -> Any:
    """An OTLP ``AnyValue`` as a plain value (int64 strings to ints, arrays to lists, kvlists to dicts)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Bad(f"'{field}' must be an AnyValue object, found {_type(value)}")
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise _Bad(f"'{field}.intValue' must be an integer, found {raw!r}") from None
    if "doubleValue" in value:
        raw = value["doubleValue"]
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise _Bad(f"'{field}.doubleValue' must be a number, found {raw!r}") from None
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        values = (value["arrayValue"] or {}).get("values", [])
        return [_any_value(v, f"{field}.arrayValue.values[{i}]") for i, v in enumerate(_list(values, field))]
    if "kvlistValue" in value:
        return _otlp_attributes((value["kvlistValue"] or {}).get("values", []), f"{field}.kvlistValue.values")
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


# --- the frame ------------------------------------------------------------------------------------------


def _drop_duplicates(docs: list, wheres: list, problems: list) -> list:
    """Keep the first of spans repeated with one (traceId, spanId): exports overlap, tool calls must not."""
    seen: dict[tuple[str, str], int] = {}
    keep = []
    for index, doc in enumerate(docs):
        key = (doc["traceId"], doc["spanId"])
        first = seen.setdefault(key, index)
        if first == index:
            keep.append(doc)
            continue
        label, loc = wheres[first]
        original = loc if label == wheres[index][0] and loc else _at(wheres[first])
        problems.append(
            f"{_at(wheres[index])}: duplicate of the span at {original} "
            f"(traceId {key[0]}, spanId {key[1]}); ignored"
        )
    return keep


def from_documents(documents: list[dict], source: str = "<captured spans>") -> pd.DataFrame:
    """The spans frame of flat span documents already in memory (for example an agent's captured spans)."""
    return _frame(list(documents), [], source)


def _frame(docs: list[dict], problems: list, source: str) -> pd.DataFrame:
    """The span frame, built column by column from the canonical documents."""
    order = sorted(range(len(docs)), key=[d["startTimeUnixNano"] for d in docs].__getitem__)
    docs = [docs[i] for i in order]
    attrs = [d["attributes"] for d in docs]
    resources = [(d.get("resource") or {}).get("attributes") or {} for d in docs]
    names = [d["name"] for d in docs]
    trace_ids = [d["traceId"] for d in docs]

    session_ids = [_session_id(a, r) for a, r in zip(attrs, resources)]
    # A span without session.id belongs to the session of its trace (instrumentations often set it on the
    # root span only).
    by_trace: dict[str, str] = {}
    for trace, session in zip(trace_ids, session_ids):
        if session is not None:
            by_trace.setdefault(trace, session)
    session_ids = [s if s is not None else by_trace.get(t) for s, t in zip(session_ids, trace_ids)]
    orphans = sum(s is None for s in session_ids)
    if orphans:
        problems.append(
            f"{source}: {orphans} span(s) carry no 'session.id' attribute (on the span, its resource or its "
            "trace); they are loaded but belong to no session and cannot be evaluated"
        )

    is_tool = [_is_tool(n, a) for n, a in zip(names, attrs)]
    frame = pd.DataFrame(
        {
            "session_id": pd.Series(session_ids, dtype=object),
            "trace_id": trace_ids,
            "span_id": [d["spanId"] for d in docs],
            "parent_span_id": pd.Series([d.get("parentSpanId") for d in docs], dtype=object),
            "name": names,
            "kind": [d["kind"] for d in docs],
            "start_ns": pd.Series([d["startTimeUnixNano"] for d in docs], dtype="int64"),
            "end_ns": pd.Series([d["endTimeUnixNano"] for d in docs], dtype="int64"),
            "status_code": [d["status"]["code"] for d in docs],
            "operation": pd.Series([_text(a.get("gen_ai.operation.name")) for a in attrs], dtype=object),
            "is_tool": pd.Series(is_tool, dtype=bool),
            "tool_name": pd.Series(
                [_tool_name(n, a) if t else None for n, a, t in zip(names, attrs, is_tool)], dtype=object
            ),
            "tool_output": pd.Series(
                [_first_text(a, TOOL_OUTPUT_KEYS) if t else None for a, t in zip(attrs, is_tool)],
                dtype=object,
            ),
            "response_text": pd.Series([_response_text(d, a) for d, a in zip(docs, attrs)], dtype=object),
            "document": pd.Series(docs, dtype=object),
        },
        columns=list(COLUMNS),
    )
    return frame


def _session_id(attrs: dict, resource: dict) -> str | None:
    value = attrs.get("session.id")
    if value is None or value == "":
        value = resource.get("session.id")
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


def _is_tool(name: str, attrs: dict) -> bool:
    """A tool-call span: ``execute_tool ...`` by name, or a ``gen_ai.tool.name``, or Traceloop's tool kind."""
    return (
        name.startswith(TOOL_PREFIX)
        or bool(attrs.get("gen_ai.tool.name"))
        or (attrs.get("traceloop.span.kind") == "tool")
    )


def _tool_name(name: str, attrs: dict) -> str:
    found = _first_text(attrs, TOOL_NAME_KEYS)
    if found is not None:
        return found
    return name[len(TOOL_PREFIX) :].strip() if name.startswith(TOOL_PREFIX) else name


def _response_text(doc: dict, attrs: dict) -> str | None:
    """The first response attribute; failing that, the text of the span's message events, one per line."""
    found = _first_text(attrs, RESPONSE_KEYS)
    if found is not None or "events" not in doc:
        return found
    texts = []
    for event in doc["events"]:
        key = RESPONSE_EVENTS.get(event.get("name"))
        if key is not None:
            text = _text((event.get("attributes") or {}).get(key))
            if text is not None:
                texts.append(text)
    return "\n".join(texts) if texts else None


def _first_text(attrs: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            text = _text(value)
            if text is not None:
                return text
    return None


def _text(value: Any) -> str | None:
    """A non-blank string as is; other non-empty values as compact JSON; blank or empty values as None."""
    if isinstance(value, str):
        return value if value.strip() else None
    if value is None or value == [] or value == {}:
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _warn(source: str, problems: list[str]) -> None:
    from evalkit.documents.versions import EvalkitWarning

    shown = problems[:SHOWN_PROBLEMS]
    more = len(problems) - len(shown)
    text = "\n  ".join(shown) + (f"\n  ... and {more} more (see df.attrs['problems'])" if more else "")
    warnings.warn(
        f"{source}: {len(problems)} problem(s) while loading spans:\n  {text}", EvalkitWarning, stacklevel=3
    )
