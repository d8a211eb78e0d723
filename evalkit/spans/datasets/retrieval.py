"""Retrieval hits carried by a trace's spans, as the upstream ``diagnostics.retrieval_executions``.

Two forms are read:

OpenInference retriever spans
    ``retrieval.documents.N.document.content`` (the hit's text), ``.document.id``, ``.document.score``,
    ``.document.metadata`` (a URL in it, ``url`` / ``source`` / ``webUrl`` / ``link``, becomes ``webUrl``);
    the query is the span's ``input.value``. One execution per retriever span, capability
    ``openinference.span.kind`` lower-cased (``retriever``).
search tools
    a tool call whose result is a JSON object with a list of hits under ``hits``, ``documents``, ``results``
    or ``retrievalHits``, each an object with its text in ``text``, ``content``, ``page_content``,
    ``snippet`` or ``extract`` (the bundled demo agent's ``search_knowledge`` answers so). The hit's rank is
    its ``rank`` (else its position, from 1), its URL the first of ``webUrl``, ``url``, ``source``, ``link``;
    the query is the call's argument ``query`` (or ``q``, ``queryString``, ``search_query``), else the
    result's ``query``; ``totalResultCount`` its ``total`` / ``totalResultCount`` when an integer. The
    capability is the tool's name.

Anything else is not guessed at: a trace without these forms has no retrieval executions.
"""

from __future__ import annotations

from typing import Any

from evalkit.spans.reading.message_text import indexed, parse_json

HIT_LISTS = ("hits", "documents", "results", "retrievalHits")
TEXT_KEYS = ("text", "content", "page_content", "snippet", "extract")
URL_KEYS = ("webUrl", "url", "source", "link")
QUERY_KEYS = ("query", "q", "queryString", "search_query")
TOTAL_KEYS = ("total", "totalResultCount")


def retriever_execution(doc: dict) -> dict | None:
    """The execution an OpenInference retriever span records, or None when it records no document."""
    attrs = doc.get("attributes") or {}
    documents = indexed(attrs, "retrieval.documents")
    hits = []
    for position, entry in enumerate(documents, start=1):
        text = entry.get("document.content")
        if not isinstance(text, str) or not text.strip():
            continue
        hit: dict[str, Any] = {"rank": position, "extracts": [{"text": text}]}
        metadata = parse_json(entry.get("document.metadata"))
        url = _first_text(metadata, URL_KEYS) if isinstance(metadata, dict) else None
        if url is not None:
            hit["webUrl"] = url
        if entry.get("document.id") is not None:
            hit["id"] = str(entry["document.id"])
        if isinstance(entry.get("document.score"), (int, float)):
            hit["score"] = entry["document.score"]
        hits.append(hit)
    if not hits:
        return None
    kind = attrs.get("openinference.span.kind")
    query = attrs.get("input.value")
    return _execution(str(kind).lower() if kind else None, query if isinstance(query, str) else None, hits)


def tool_execution(name: str, arguments: Any, result: str | None) -> dict | None:
    """The execution a search tool's call records (module docstring), or None when its result holds no hits."""
    found = parse_json(result) if isinstance(result, str) else result
    if not isinstance(found, dict):
        return None
    listed = next((found[k] for k in HIT_LISTS if isinstance(found.get(k), list)), None)
    if not listed:
        return None
    hits = []
    for position, entry in enumerate(listed, start=1):
        text = _first_text(entry, TEXT_KEYS) if isinstance(entry, dict) else None
        if text is None:
            continue
        rank = entry.get("rank")
        hit: dict[str, Any] = {"rank": rank if _is_int(rank) else position, "extracts": [{"text": text}]}
        url = _first_text(entry, URL_KEYS)
        if url is not None:
            hit["webUrl"] = url
        hits.append(hit)
    if not hits:
        return None
    query = _first_text(arguments, QUERY_KEYS) if isinstance(arguments, dict) else None
    if query is None:
        query = _first_text(found, QUERY_KEYS)
    execution = _execution(name, query, hits)
    total = next((found[k] for k in TOTAL_KEYS if _is_int(found.get(k))), None)
    if total is not None:
        execution["totalResultCount"] = total
    return execution


def _execution(capability: str | None, query: str | None, hits: list[dict]) -> dict:
    execution: dict[str, Any] = {"capability": capability, "status": "success"}
    if query is not None:
        execution["queries"] = [{"queryString": query}]
    execution["retrievalHits"] = hits
    return execution


def _first_text(holder: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = holder.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
