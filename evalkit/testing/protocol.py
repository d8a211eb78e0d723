"""The chat-completions wire protocol of ``ModelServer``: request records in, OpenAI / Azure OpenAI shapes out.

Why here: what a request looks like once parsed (path, query, headers with keys redacted, JSON body, which
API and deployment) and what a response looks like on the wire (a chat completion, its server-sent-event
stream, the model list, the OpenAI error object) are the same whatever decides the answer, so the server
(``evalkit.testing.server``) and the HTTP handler (``evalkit.testing.http_server``) only pass these along.
Standard library only.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "DEFAULT_MODEL",
    "MODEL_PATHS",
    "REDACTED",
    "Response",
    "chat_response",
    "error_response",
    "estimate_tokens",
    "json_response",
    "message_text",
    "model_list",
    "parse_request",
]

DEFAULT_MODEL = "evalkit-test-model"
REDACTED = "[redacted]"
_SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "openai-api-key",
        "ocp-apim-subscription-key",
        "cookie",
    }
)
_SECRET_QUERY = frozenset({"api-key", "api_key", "key", "code", "sig", "token"})
_CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions", "/openai/v1/chat/completions"})
MODEL_PATHS = frozenset({"/v1/models", "/models", "/openai/models", "/openai/v1/models"})
_AZURE_CHAT = re.compile(r"^/openai/deployments/(?P<deployment>[^/]+)/chat/completions$")

# status -> (error type, error code), as the OpenAI API reports them.
_ERROR_KINDS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    408: ("timeout", None),
    409: ("conflict", None),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}
_ERROR_MESSAGES = {
    400: "Bad request.",
    401: "Incorrect API key provided.",
    404: "Resource not found.",
    429: "Rate limit reached for requests. Please retry after the time given in Retry-After.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
}


@dataclass
class Response:
    """What the HTTP handler sends: status, body, headers, and how long to wait before sending it."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate: round(words / 0.75), 0 for text without words."""
    words = len(text.split())
    return math.floor(words / 0.75 + 0.5) if words else 0


def message_text(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") if isinstance(part, dict) else str(part)
            for part in content
            if part is not None
        )
    return "" if content is None else str(content)


# Requests ------------------------------------------------------------------------------------------------
def parse_request(
    method: str, target: str, headers: Mapping[str, str], raw: bytes
) -> tuple[dict, str | None]:
    """The redacted request record (``index`` 0, the server numbers it) and the presented API key."""
    parts = urlsplit(target)
    path = re.sub(r"/{2,}", "/", parts.path).rstrip("/") or "/"
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    lowered = {k.lower(): v for k, v in headers.items()}
    key = lowered.get("api-key")
    bearer = lowered.get("authorization", "")
    if key is None and bearer.lower().startswith("bearer "):
        key = bearer[7:].strip()
    elif key is None and bearer:
        key = bearer  # another scheme (Basic ...): the credentials as presented
    body: Any = None
    if raw:
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
    azure = _AZURE_CHAT.match(path)
    record = {
        "index": 0,
        "time": time.time(),
        "method": method,
        "path": path,
        "query": {k: (REDACTED if k.lower() in _SECRET_QUERY else v) for k, v in query.items()},
        "headers": {k: (REDACTED if k in _SECRET_HEADERS else v) for k, v in lowered.items()},
        "body": body,
        "api": "azure" if azure else ("openai" if path in _CHAT_PATHS else None),
        "deployment": azure.group("deployment") if azure else None,
        "model": (azure.group("deployment") if azure else None)
        or (body.get("model") if isinstance(body, dict) else None),
    }
    return record, key


# Responses -----------------------------------------------------------------------------------------------
def json_response(status: int, payload: Any, delay: float = 0.0) -> Response:
    body = json.dumps(payload).encode()
    return Response(status, body, {"Content-Type": "application/json"}, delay)


def error_response(status: int, detail: Any = None, delay: float = 0.0) -> Response:
    """``{"error": {"message", "type", "param", "code"}}``; ``detail`` is the message or fields over it."""
    kind, code = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    error = {
        "message": _ERROR_MESSAGES.get(status, f"HTTP {status}."),
        "type": kind,
        "param": None,
        "code": code,
    }
    if isinstance(detail, Mapping):
        error.update(detail)
    elif detail is not None:
        error["message"] = str(detail)
    return json_response(status, {"error": error}, delay=delay)


def model_list(models: set[str]) -> dict:
    """The ``GET /v1/models`` answer: the given model names and ``DEFAULT_MODEL``."""
    ids = sorted(models | {DEFAULT_MODEL})
    return {
        "object": "list",
        "data": [{"id": i, "object": "model", "created": 0, "owned_by": "evalkit"} for i in ids],
    }


def chat_response(record: dict, reply: Any, delay: float) -> Response:
    """The wire response for ``reply`` to the chat-completions request ``record``: a chat completion (or its
    stream), the OpenAI error object for an error status, or the raw body."""
    headers = {str(k): str(v) for k, v in (reply.headers or {}).items()}
    if reply.retry_after is not None:
        seconds = float(reply.retry_after)
        headers.setdefault("Retry-After", f"{seconds:g}")
        headers.setdefault("retry-after-ms", str(int(round(seconds * 1000))))
    headers.setdefault("x-request-id", f"req_evalkit_{record['index']:08d}")
    if reply.raw_body is not None:
        raw = reply.raw_body.encode() if isinstance(reply.raw_body, str) else bytes(reply.raw_body)
        return Response(reply.status, raw, {"Content-Type": "application/json", **headers}, delay)
    if reply.status != 200:
        response = error_response(reply.status, reply.content, delay=delay)
        response.headers.update(headers)
        return response
    body = record["body"]
    content = reply.content
    if content is not None and not isinstance(content, str):
        content = json.dumps(content)
    tool_calls = _tool_calls(reply.tool_calls, record["index"]) if reply.tool_calls else None
    finish = reply.finish_reason or ("tool_calls" if tool_calls else "stop")
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    prompt = reply.prompt_tokens
    if prompt is None:
        prompt = estimate_tokens(
            " ".join(message_text(m.get("content")) for m in body["messages"] if isinstance(m, dict))
        )
    completion = reply.completion_tokens
    if completion is None:
        completion = estimate_tokens(content or "") + (
            estimate_tokens(json.dumps(tool_calls)) if tool_calls else 0
        )
    n = body.get("n") or 1
    n = n if isinstance(n, int) and 0 < n <= 128 else 1
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion * n,
        "total_tokens": prompt + completion * n,
    }
    model = record["model"] or DEFAULT_MODEL
    ident = f"chatcmpl-evalkit{record['index']:08d}"
    created = int(time.time())
    if body.get("stream"):
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if include_usage:
            record["usage"] = dict(usage)  # what the server billed, for ``ModelServer.tokens_reported``
        stream = _sse(ident, created, model, message, finish, n, usage if include_usage else None)
        return Response(200, stream, {"Content-Type": "text/event-stream", **headers}, delay)
    record["usage"] = dict(usage)
    payload = {
        "id": ident,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {"index": i, "message": message, "logprobs": None, "finish_reason": finish} for i in range(n)
        ],
        "usage": usage,
        "system_fingerprint": "fp_evalkit",
    }
    response = json_response(200, payload, delay=delay)
    response.headers.update(headers)
    return response


def _tool_calls(calls: list[dict], index: int) -> list[dict]:
    """OpenAI tool-call dicts from ``{"name", "arguments"}`` shorthands (full dicts pass through)."""
    made = []
    for i, call in enumerate(calls):
        if "function" in call:
            made.append({"id": f"call_evalkit_{index}_{i}", "type": "function", **call})
            continue
        arguments = call.get("arguments", {})
        made.append(
            {
                "id": call.get("id") or f"call_evalkit_{index}_{i}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return made


def _sse(ident, created, model, message, finish, n, usage) -> bytes:
    """A whole chat-completions stream as server-sent events (content in word-sized pieces)."""

    def event(choices, **extra) -> str:
        chunk = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}
        chunk.update(choices=choices, **extra)
        return f"data: {json.dumps(chunk)}\n\n"

    content = message.get("content") or ""
    pieces = re.findall(r"\S+\s*|\s+", content)
    out = []
    for i in range(n):
        out.append(
            event([{"index": i, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        )
        for piece in pieces:
            out.append(event([{"index": i, "delta": {"content": piece}, "finish_reason": None}]))
        for position, call in enumerate(message.get("tool_calls") or []):
            delta = {"tool_calls": [{"index": position, **call}]}
            out.append(event([{"index": i, "delta": delta, "finish_reason": None}]))
        out.append(event([{"index": i, "delta": {}, "finish_reason": finish}]))
    if usage is not None:
        out.append(event([], usage=usage))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()
