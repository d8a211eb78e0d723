"""OTLP JSON in: an ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) -> flat span documents.

This is the JSON the OTLP/HTTP JSON exporter writes, with attribute lists of ``{"key", "value":
{"stringValue": ...}}``, hex ids and int64 times as strings; base64 ids (what protobuf's own JSON mapping,
``MessageToJson``, writes) are accepted too. ``read_otlp`` serves both span files (``loading``) and the online
receiver (``intake``), so offline and online evaluators see identical span documents. Each span's resource and
scope are copied into its document.
"""

from __future__ import annotations

from typing import Any

from evalkit.spans.reading.span_document import (
    BadSpan,
    as_list,
    finish,
    location,
    nanoseconds,
    otlp_attributes,
    otlp_id,
    required_id,
    type_name,
)


def read_otlp(request: dict, place: tuple[str, str], docs: list, wheres: list, problems: list) -> None:
    """Append the spans of an OTLP export request to ``docs`` (with where each came from) and its problems."""
    where = location(place)
    label, loc = place
    resource_spans = request["resourceSpans"]
    if not isinstance(resource_spans, list):
        problems.append(f"{where}: 'resourceSpans' must be a list, found {type_name(resource_spans)}")
        return
    for r, block in enumerate(resource_spans):
        at = f"resourceSpans[{r}]"
        if not isinstance(block, dict):
            problems.append(f"{where}: '{at}' must be an object, found {type_name(block)}")
            continue
        try:
            resource = _otlp_resource(block.get("resource"), at)
        except BadSpan as exc:
            problems.append(f"{where}: {exc}")
            continue
        scope_spans = block.get("scopeSpans", block.get("instrumentationLibrarySpans", []))
        if not isinstance(scope_spans, list):
            problems.append(f"{where}: '{at}.scopeSpans' must be a list, found {type_name(scope_spans)}")
            continue
        for s, scope_block in enumerate(scope_spans):
            sat = f"{at}.scopeSpans[{s}]"
            if not isinstance(scope_block, dict):
                problems.append(f"{where}: '{sat}' must be an object, found {type_name(scope_block)}")
                continue
            try:
                scope = _otlp_scope(scope_block.get("scope", scope_block.get("instrumentationLibrary")), sat)
            except BadSpan as exc:
                problems.append(f"{where}: {exc}")
                continue
            spans = scope_block.get("spans", [])
            if not isinstance(spans, list):
                problems.append(f"{where}: '{sat}.spans' must be a list, found {type_name(spans)}")
                continue
            for i, span in enumerate(spans):
                span_place = (label, f"{loc}: {sat}.spans[{i}]" if loc else f"{sat}.spans[{i}]")
                if not isinstance(span, dict):
                    problems.append(
                        f"{location(span_place)}: expected a span (a JSON object), found {type_name(span)}"
                    )
                    continue
                try:
                    docs.append(_otlp_document(span, resource, scope))
                except BadSpan as exc:
                    problems.append(f"{location(span_place)}: {exc}")
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
            value = otlp_attributes(value, "attributes")
        elif key == "events":
            value = [_otlp_event(e, f"events[{i}]") for i, e in enumerate(as_list(value, "events"))]
        elif key == "links":
            value = [_otlp_link(x, f"links[{i}]") for i, x in enumerate(as_list(value, "links"))]
        doc[key] = value
    doc["traceId"] = otlp_id(required_id(span, "traceId"), 16)
    doc["spanId"] = otlp_id(required_id(span, "spanId"), 8)
    parent = span.get("parentSpanId")
    doc["parentSpanId"] = otlp_id(parent, 8) if isinstance(parent, str) else parent
    return finish(doc)


def _otlp_resource(resource: Any, at: str) -> dict | None:
    if resource is None:
        return None
    if not isinstance(resource, dict):
        raise BadSpan(f"'{at}.resource' must be an object, found {type_name(resource)}")
    attributes = otlp_attributes(resource.get("attributes", []), f"{at}.resource.attributes")
    if not attributes:
        return None
    return {**resource, "attributes": attributes}


def _otlp_scope(scope: Any, at: str) -> dict | None:
    if scope is None:
        return None
    if not isinstance(scope, dict):
        raise BadSpan(f"'{at}.scope' must be an object, found {type_name(scope)}")
    if not scope:
        return None
    if "attributes" in scope:
        return {**scope, "attributes": otlp_attributes(scope["attributes"], f"{at}.scope.attributes")}
    return dict(scope)


def _otlp_event(event: Any, field: str) -> dict:
    if not isinstance(event, dict):
        raise BadSpan(f"'{field}' must be an object, found {type_name(event)}")
    out = dict(event)
    if "attributes" in out:
        out["attributes"] = otlp_attributes(out["attributes"], f"{field}.attributes")
    if "timeUnixNano" in out:
        out["timeUnixNano"] = nanoseconds(out["timeUnixNano"], f"{field}.timeUnixNano")
    return out


def _otlp_link(link: Any, field: str) -> dict:
    if not isinstance(link, dict):
        raise BadSpan(f"'{field}' must be an object, found {type_name(link)}")
    out = dict(link)
    if isinstance(out.get("traceId"), str):
        out["traceId"] = otlp_id(out["traceId"], 16)
    if isinstance(out.get("spanId"), str):
        out["spanId"] = otlp_id(out["spanId"], 8)
    if "attributes" in out:
        out["attributes"] = otlp_attributes(out["attributes"], f"{field}.attributes")
    return out
