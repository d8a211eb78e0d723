"""A real HTTP model server on loopback that speaks the OpenAI and Azure OpenAI chat-completions protocols.

Why: evalkit's LLM paths (azure-ai-evaluation's evaluators, promptflow prompty judges, plain ``openai``
clients) are tested end to end through the real client libraries, never mocks. This server stands in for
the model service: standard library only (``http.server.ThreadingHTTPServer`` in a background thread),
HTTP/1.1 with keep-alive, one thread per connection, so 64+ requests in flight are fine.

    from evalkit.testing import ModelServer, Reply

    with ModelServer() as server:                       # 127.0.0.1, a free port
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="k")
        config = {"azure_endpoint": server.azure_endpoint, "azure_deployment": "judge",
                  "api_key": "k", "api_version": "2024-12-01-preview"}
        server.fail_next(2, status=429, retry_after=0.1)   # then normal answers
        ...
        server.requests[-1]["body"]["messages"]           # what the client sent (keys redacted)

In pytest, add ``pytest_plugins = ["evalkit.testing.pytest_plugin"]`` and take the ``model_server`` fixture.

Endpoints
    ``POST /v1/chat/completions``, ``POST /chat/completions``, ``POST /openai/v1/chat/completions``
        OpenAI style; the reply's ``model`` is the request's ``model``.
    ``POST /openai/deployments/{deployment}/chat/completions?api-version=...``
        Azure OpenAI style (``api-key`` header or ``Authorization: Bearer``); the reply's ``model`` is the
        deployment name; a missing ``api-version`` is a 400.
    ``GET /v1/models`` (and ``/models``, ``/openai/models``): a minimal model list. ``GET /health``: ok.
    Anything else is a 404 in the OpenAI error shape ``{"error": {"message", "type", "param", "code"}}``.
    ``stream: true`` is answered as server-sent events (``chat.completion.chunk``s, then ``[DONE]``);
    ``n`` > 1 gives n identical choices.

What it answers (first that applies)
    1. ``require_key`` set and the key differs: 401 ``invalid_api_key``.
    2. A queued fault (``fail_next``), else a random fault (``fail_randomly``, seeded RNG).
    3. ``script``: a callable ``script(request) -> Reply | str | dict | None`` or a list of replies consumed
       in order. A str is the message content, a dict is JSON-encoded as the content, None (or an exhausted
       list) falls through to 4.
    4. ``heuristic_judge(request)``: deterministic answers that azure-ai-evaluation's prompt judges and
       evalkit's ``.prompty`` judges parse into a 1-5 score (rule documented on ``heuristic_judge``).
    ``latency`` seconds are added before every chat-completions response (faults included).

Token usage: given by the Reply, else estimated as round(words / 0.75) of the prompt's message texts and of
the reply content (0 for no words), so it is deterministic.

Keys: ``api-key``, ``Authorization`` and similar headers (and key-like query parameters) are checked, then
replaced by ``[redacted]`` before anything is stored; the server never logs or keeps an API key.

Keeping promptflow / azure-ai-evaluation off the network (tests and demos should do the same)
    * Evaluator classes called directly and promptflow ``load_flow(prompty)(...)`` contact only the configured
      endpoint (tests/test_testing_server.py asserts it with a ``socket.connect`` audit hook).
    * ``PF_DISABLE_TRACING=true``: promptflow creates no trace spans. The installed promptflow defaults it to
      "true", older releases to "false", so set it explicitly.
    * ``PF_TRACING_SKIP_LOCAL_SETUP=true``: ``start_trace()`` becomes a no-op, so promptflow never launches its
      local trace service (pfs). ``start_trace`` runs in ``PFClient`` runs (``pf.run``, ``pf.test``) and
      wherever user code calls it.
    * promptflow's App Insights telemetry has no environment switch; it is attached to ``PFClient``
      operations only (not to prompty calls). Turn it off with ``pf config set telemetry.enabled=false`` or a
      ``pf.yaml`` holding ``telemetry.enabled: false`` in ``$PF_HOME_DIRECTORY``.
    * azure-ai-evaluation's ``evaluate()`` uses its own run submitter by default, not ``PFClient``.
    ``evalkit.testing.pytest_plugin`` sets both variables (unless already set) when it is loaded.

Retries worth knowing: the openai client retries 429/5xx twice by default (honouring ``Retry-After`` and
``retry-after-ms``); azure-ai-evaluation's prompty retries up to 10 times and promptflow's prompty up to 10
times with exponential backoff, so fault tests should use ``openai`` with ``max_retries=0`` or a small
``retry_after``.
"""

from __future__ import annotations

import json
import logging
import math
import random
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["ModelServer", "Reply", "heuristic_judge", "extract_fields", "judge_score", "estimate_tokens"]

logger = logging.getLogger(__name__)

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
_MODEL_PATHS = frozenset({"/v1/models", "/models", "/openai/models", "/openai/v1/models"})
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
class Reply:
    """One scripted answer, for full control over what the server sends back.

    ``content``: the assistant message text (a dict/list is JSON-encoded). For an error status it is the
    error message, or a dict merged over the error object (e.g. ``{"type": "insufficient_quota"}``).
    ``status``: HTTP status; anything but 200 is sent as ``{"error": {...}}`` in the OpenAI shape.
    ``headers``: extra response headers. ``delay``: seconds to wait before answering (on top of latency).
    ``prompt_tokens`` / ``completion_tokens``: usage to report; None means estimated.
    ``raw_body``: sent verbatim instead of any JSON (e.g. ``b"not json"``), with ``status``.
    ``tool_calls``: ``[{"name": ..., "arguments": {...} or "json"}]`` (or full OpenAI tool-call dicts);
    the finish reason becomes ``tool_calls``. ``retry_after``: seconds, sent as ``Retry-After`` and
    ``retry-after-ms``. ``finish_reason``: overrides "stop" / "tool_calls" (e.g. "length").
    """

    content: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    raw_body: bytes | str | None = None
    tool_calls: list[dict] | None = None
    retry_after: float | None = None
    finish_reason: str | None = None


@dataclass
class _Fault:
    """A fault as given to ``fail_next`` / ``fail_randomly``."""

    status: int
    retry_after: float | None
    malformed: bool
    hang: float
    raw_body: bytes | str | None
    message: str | None

    def reply(self) -> Reply | None:
        """The Reply this fault forces, or None when it only delays a normal answer (``hang``)."""
        if self.raw_body is not None:
            return Reply(raw_body=self.raw_body, status=self.status, retry_after=self.retry_after)
        if self.status != 200:
            return Reply(content=self.message, status=self.status, retry_after=self.retry_after)
        if self.malformed:
            return Reply(
                content=self.message or "This is not JSON {score: five", retry_after=self.retry_after
            )
        return None


@dataclass
class _Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate: round(words / 0.75), 0 for text without words."""
    words = len(text.split())
    return math.floor(words / 0.75 + 0.5) if words else 0


class ModelServer:
    """A local OpenAI / Azure OpenAI chat-completions server in a background thread (see module docs).

    ``script``: None (heuristic judge), a callable ``script(request) -> Reply | str | dict | None`` (given
    the stored, redacted request record; do not mutate it) or a list of such replies consumed in order. It
    may be reassigned at any time.
    ``latency``: seconds added to every chat-completions response. ``seed``: for ``fail_randomly``.
    ``require_key``: when set, requests must carry this key (``api-key`` or ``Authorization: Bearer``).
    ``host`` / ``port``: where to listen; port 0 picks a free port.
    """

    def __init__(
        self,
        script: Callable[[dict], Any] | Iterable[Any] | None = None,
        latency: float = 0.0,
        seed: int = 0,
        *,
        require_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.latency = latency
        self.require_key = require_key
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        self._requests: list[dict] = []
        self._count = 0
        self._faults: deque[_Fault] = deque()
        self._random_fault: tuple[float, _Fault] | None = None
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []  # exceptions raised by a script callable, as "Type: message"
        self.script = script

    # Lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> ModelServer:
        """Bind and serve in a daemon thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("ModelServer already started")
        self._stopping.clear()
        self._httpd = _HTTPServer((self._host, self._port), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="evalkit-model-server"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open keep-alive connections and wake delayed answers. Idempotent."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        httpd.drop_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self._httpd else "stopped"
        return f"<ModelServer {where} requests={self.request_count}>"

    # Addresses ----------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        if self._httpd is None:
            raise RuntimeError("ModelServer is not running; call start() or use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def openai_base_url(self) -> str:
        """Base URL for ``openai.OpenAI(base_url=...)`` and OpenAI model configurations."""
        return self.url + "/v1"

    @property
    def azure_endpoint(self) -> str:
        """Endpoint for ``openai.AzureOpenAI(azure_endpoint=...)`` and Azure model configurations."""
        return self.url

    # Script, faults, records ---------------------------------------------------------------------------
    @property
    def script(self):
        return self._script

    @script.setter
    def script(self, value) -> None:
        with self._lock:
            if value is None or callable(value):
                self._script, self._queue = value, None
            elif isinstance(value, (str, bytes, dict, Reply)):
                raise TypeError("script must be a callable or a list of replies, not a single reply")
            else:
                self._queue = deque(value)
                self._script = list(self._queue)

    def fail_next(
        self,
        n: int = 1,
        status: int | None = None,
        *,
        retry_after: float | None = None,
        malformed: bool = False,
        hang: float = 0.0,
        raw_body: bytes | str | None = None,
        message: str | None = None,
    ) -> None:
        """Make the next ``n`` chat-completions requests fail (queued after any earlier ``fail_next``).

        ``status``: error status (429 with ``retry_after`` seconds sends ``Retry-After`` and
        ``retry-after-ms``). ``malformed``: a 200 whose message content is not JSON. ``raw_body``: a body sent
        verbatim (e.g. ``b"not json"``). ``hang``: seconds to wait before answering (for client timeouts);
        alone it delays a normal answer. ``status`` defaults to 500 unless malformed/raw_body/hang is given,
        then to 200. ``message``: the error message or malformed content.
        """
        fault = self._fault(status, retry_after, malformed, hang, raw_body, message)
        with self._lock:
            self._faults.extend(fault for _ in range(n))

    def fail_randomly(self, probability: float, status: int | None = None, **fault: Any) -> None:
        """Fail each chat-completions request with ``probability`` (seeded RNG); 0 turns it off.

        Takes the same keywords as ``fail_next``; queued faults are used first.
        """
        if not 0 <= probability <= 1:
            raise ValueError("probability must be within [0, 1]")
        made = self._fault(status, **fault)
        with self._lock:
            self._random_fault = (probability, made) if probability else None

    @staticmethod
    def _fault(
        status=None, retry_after=None, malformed=False, hang=0.0, raw_body=None, message=None
    ) -> _Fault:
        if status is None:
            status = 200 if (malformed or raw_body is not None or hang) else 500
        return _Fault(int(status), retry_after, bool(malformed), float(hang), raw_body, message)

    @property
    def requests(self) -> list[dict]:
        """Received requests, oldest first: ``index, time, method, path, query, headers, body, api,
        deployment, model``; secrets in headers and query are ``[redacted]``. A snapshot copy."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """How many HTTP requests have been received (all paths), thread-safe."""
        with self._lock:
            return self._count

    def reset(self) -> None:
        """Forget recorded requests, queued and random faults and script errors (the script stays)."""
        with self._lock:
            self._requests.clear()
            self._count = 0
            self._faults.clear()
            self._random_fault = None
            self.errors.clear()

    # Request handling (called from handler threads) -----------------------------------------------------
    def _record(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> tuple[dict, str | None]:
        """Build and store the redacted request record; returns it with the presented API key."""
        parts = urlsplit(target)
        path = re.sub(r"/{2,}", "/", parts.path).rstrip("/") or "/"
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        lowered = {k.lower(): v for k, v in headers.items()}
        key = lowered.get("api-key")
        bearer = lowered.get("authorization", "")
        if key is None and bearer.lower().startswith("bearer "):
            key = bearer[7:].strip()
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
        with self._lock:
            record["index"] = self._count
            self._count += 1
            self._requests.append(record)
        return record, key

    def _handle(self, record: dict, key: str | None) -> _Response:
        path, method = record["path"], record["method"]
        if path == "/health":
            return _json_response(200, {"status": "ok"})
        if path in _MODEL_PATHS:
            if method != "GET":
                return _error_response(405, f"{method} is not allowed on {path}.")
            return _json_response(200, self._models())
        if record["api"] is None:
            return _error_response(404, f"Resource not found: {method} {path}.")
        if method != "POST":
            return _error_response(405, f"{method} is not allowed on {path}.")
        return self._chat(record, key)

    def _models(self) -> dict:
        with self._lock:
            seen = {r["model"] for r in self._requests if r["model"]}
        ids = sorted(seen | {DEFAULT_MODEL})
        return {
            "object": "list",
            "data": [{"id": i, "object": "model", "created": 0, "owned_by": "evalkit"} for i in ids],
        }

    def _chat(self, record: dict, key: str | None) -> _Response:
        latency = float(self.latency or 0.0)
        if self.require_key is not None and key != self.require_key:
            return _error_response(401, delay=latency)
        if record["api"] == "azure" and not record["query"].get("api-version"):
            return _error_response(400, "Missing required query parameter 'api-version'.", delay=latency)
        body = record["body"]
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error_response(
                400, "The request body must be a JSON object with 'messages'.", delay=latency
            )
        hang = 0.0
        reply: Reply | None = None
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
            if fault is None and self._random_fault and self._rng.random() < self._random_fault[0]:
                fault = self._random_fault[1]
        if fault is not None:
            hang = fault.hang
            reply = fault.reply()
        if reply is None:
            reply = self._scripted(record)
        return self._render(record, reply, delay=latency + hang + float(reply.delay or 0.0))

    def _scripted(self, record: dict) -> Reply:
        """The script's answer for this request, else the heuristic judge's."""
        answer: Any = None
        with self._lock:
            queue, script = self._queue, self._script
            if queue is not None and queue:
                answer = queue.popleft()
        if queue is None and script is not None:
            try:
                answer = script(record)
            except Exception as exc:  # the test's script is broken: tell the client, keep serving
                message = f"ModelServer script raised {type(exc).__name__}: {exc}"
                logger.exception(message)
                with self._lock:
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                return Reply(content=message, status=500)
        if answer is None:
            return Reply(content=heuristic_judge(record))
        if isinstance(answer, Reply):
            return answer
        return Reply(content=answer)

    def _render(self, record: dict, reply: Reply, delay: float) -> _Response:
        headers = {str(k): str(v) for k, v in (reply.headers or {}).items()}
        if reply.retry_after is not None:
            seconds = float(reply.retry_after)
            headers.setdefault("Retry-After", f"{seconds:g}")
            headers.setdefault("retry-after-ms", str(int(round(seconds * 1000))))
        headers.setdefault("x-request-id", f"req_evalkit_{record['index']:08d}")
        if reply.raw_body is not None:
            raw = reply.raw_body.encode() if isinstance(reply.raw_body, str) else bytes(reply.raw_body)
            return _Response(reply.status, raw, {"Content-Type": "application/json", **headers}, delay)
        if reply.status != 200:
            response = _error_response(reply.status, reply.content, delay=delay)
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
                " ".join(_text(m.get("content")) for m in body["messages"] if isinstance(m, dict))
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
            stream = _sse(ident, created, model, message, finish, n, usage if include_usage else None)
            return _Response(200, stream, {"Content-Type": "text/event-stream", **headers}, delay)
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
        response = _json_response(200, payload, delay=delay)
        response.headers.update(headers)
        return response


# HTTP plumbing --------------------------------------------------------------------------------------------
class _HTTPServer(ThreadingHTTPServer):
    """Threading server that remembers its open connections so ``stop`` can drop idle keep-alives."""

    daemon_threads = True
    request_queue_size = 512  # listen backlog: bursts of hundreds of new connections are not refused

    def __init__(self, address, handler, model: ModelServer):
        self.model = model
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request, client_address):
        # A client that timed out or hung up mid-answer is normal in fault tests; anything else is a bug.
        if isinstance(sys.exc_info()[1], OSError):
            return
        logger.exception("ModelServer: error while handling a request from %s", client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx uses it
    server_version = "evalkit-model-server/1.0"
    sys_version = ""
    timeout = 60  # idle keep-alive connections are closed after a minute
    # TCP_NODELAY: headers and body are two writes; with Nagle on, the second waits for the client's delayed
    # ACK, which costs ~40 ms per keep-alive request.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # Not the raw request line: its query string could hold a key (``?api-key=``).
        logger.debug("ModelServer %s %s -> %s", self.command, urlsplit(self.path).path, code)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base-class signature
        logger.debug("ModelServer: " + format, *args)

    def do_POST(self) -> None:
        self._dispatch()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_POST

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _dispatch(self) -> None:
        model = self.server.model
        raw = self._read_body()
        record, key = model._record(self.command, self.path, dict(self.headers.items()), raw)
        try:
            response = model._handle(record, key)
        except Exception as exc:  # a bug here must still answer, or the client hangs until its timeout
            logger.exception("ModelServer: failed to answer %s %s", self.command, record["path"])
            response = _error_response(500, f"ModelServer internal error: {type(exc).__name__}: {exc}")
        if response.delay > 0 and model._stopping.wait(response.delay):
            self.close_connection = True
            return
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(response.body)
        self.wfile.flush()


def _json_response(status: int, payload: Any, delay: float = 0.0) -> _Response:
    body = json.dumps(payload).encode()
    return _Response(status, body, {"Content-Type": "application/json"}, delay)


def _error_response(status: int, detail: Any = None, delay: float = 0.0) -> _Response:
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
    return _json_response(status, {"error": error}, delay=delay)


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


# The heuristic judge --------------------------------------------------------------------------------------
_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our ours out over own same she should so some such than that the their theirs them then
    there these they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself role content assistant""".split()
)
_LABELS = {
    "query": (
        "query",
        "question",
        "user query",
        "user question",
        "conversation history",
        "conversation",
        "request",
        "user request",
        "prompt",
        "user prompt",
    ),
    "response": (
        "response",
        "answer",
        "predicted answer",
        "generated answer",
        "agent response",
        "assistant response",
        "tool calls to be evaluated",
        "tool calls",
    ),
    "ground_truth": (
        "ground truth",
        "correct answer",
        "expected answer",
        "expected response",
        "reference answer",
        "gold answer",
    ),
    "context": ("context", "contexts", "documents", "retrieved documents", "sources"),
    "other": ("tool definitions", "tool definition"),
}
_LABEL_ROLE = {label: role for role, labels in _LABELS.items() for label in labels}
_LABEL_LINE = re.compile(
    r"^\s*(?:[-*]\s+)?(?:\*\*|__)?(?P<label>[A-Za-z][A-Za-z _-]{0,40}?)(?:\*\*|__)?\s*:(?:\*\*|__)?[ \t]?(?P<rest>.*)$"
)
_HEADING = re.compile(r"^\s*(?P<hashes>#{1,6})\s+(?P<label>.*?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")
_DESCRIBES_LABEL = re.compile(r"^(?P<label>[A-Z][A-Z_ ]*[A-Z])\s+(?:is|are)\b")
_INSTRUCTION = re.compile(
    r"^\s*(?:your (?:output|answer|response|task)|expected output|output format|respond|reply|return|provide"
    r"|please)\b.*\b(?:json|score|format|output|rating|integer|keys)\b",
    re.IGNORECASE,
)
_DATA_SECTION = {"data", "input", "inputs"}


def _norm_label(label: str) -> str:
    return " ".join(label.replace("_", " ").replace("-", " ").lower().split())


def _text(content: Any) -> str:
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


def _data_region(lines: list[str]) -> list[str]:
    """The lines holding the data: after the last ``# Data``/``# Input`` heading (up to the next heading of
    the same or a higher level), or inside an underlined ``INPUT`` section, else all lines."""
    for i in range(len(lines) - 1, -1, -1):
        heading = _HEADING.match(lines[i])
        if heading and _norm_label(heading.group("label")) in _DATA_SECTION:
            level = len(heading.group("hashes"))
            end = len(lines)
            for j in range(i + 1, len(lines)):
                other = _HEADING.match(lines[j])
                if other and len(other.group("hashes")) <= level:
                    end = j
                    break
            return lines[i + 1 : end]
    for i in range(len(lines) - 2, -1, -1):
        if _norm_label(lines[i]) in _DATA_SECTION and _UNDERLINE.match(lines[i + 1]):
            end = len(lines)
            for j in range(i + 2, len(lines) - 1):
                if lines[j].strip() and _UNDERLINE.match(lines[j + 1]):
                    end = j
                    break
            return lines[i + 2 : end]
    return lines


def extract_fields(text: str) -> dict[str, str]:
    """The labelled fields of a judge prompt: ``query``, ``response``, ``ground_truth``, ``context``.

    A field starts at a line ``LABEL: value`` (also ``**Label:**``, ``- Label:``) or a markdown heading
    ``# Label`` and runs until the next label, heading, underlined heading, a line describing a label
    (``RESPONSE is ...``) or a line of output instructions (``Your output must be ... JSON``). Only the data
    region is read (see ``_data_region``); the last occurrence of a field wins, so few-shot examples
    before the data do not count.
    """
    lines = _data_region(text.splitlines())
    fields: dict[str, str] = {}
    role: str | None = None
    value: list[str] = []

    def close() -> None:
        if role is not None and role != "other":
            fields[role] = "\n".join(value).strip()

    for i, line in enumerate(lines):
        underlined = i + 1 < len(lines) and line.strip() and _UNDERLINE.match(lines[i + 1])
        heading = _HEADING.match(line)
        labelled = _LABEL_LINE.match(line)
        if heading or underlined:
            close()
            name = _norm_label(heading.group("label") if heading else line)
            role, value = _LABEL_ROLE.get(name), []
        elif labelled and _norm_label(labelled.group("label")) in _LABEL_ROLE:
            close()
            role, value = _LABEL_ROLE[_norm_label(labelled.group("label"))], [labelled.group("rest")]
        elif _UNDERLINE.match(line) and i > 0 and lines[i - 1].strip():
            continue
        elif role is not None:
            described = _DESCRIBES_LABEL.match(line)
            if (described and _norm_label(described.group("label")) in _LABEL_ROLE) or _INSTRUCTION.match(
                line
            ):
                close()
                role, value = None, []
            else:
                value.append(line)
    close()
    return fields


def _terms(text: str) -> set[str]:
    """Content words: lower-case alphanumeric runs (underscores split), minus stopwords, a plural "s" off."""
    words = set()
    for word in re.findall(r"[^\W_]+", text.lower()):
        if word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return words


def judge_score(fields: Mapping[str, str]) -> tuple[int, str]:
    """The heuristic 1-5 score and its reason for extracted fields (the rule is on ``heuristic_judge``)."""
    if not fields:
        return 3, "No labelled query/response fields were found in the prompt; neutral score 3."
    response = _terms(fields.get("response", ""))
    if not response:
        return 1, "The response is empty (no content words); score 1."
    measures = {"ground_truth": "f1", "context": "precision", "query": "recall"}
    role = next((role for role in measures if _terms(fields.get(role, ""))), None)
    if role is None:
        return 3, "There is no reference (ground truth, context or query) to compare with; neutral score 3."
    reference, measure = _terms(fields[role]), measures[role]
    shared = len(reference & response)
    if measure == "recall":
        overlap = shared / len(reference)
        what = f"{shared} of {len(reference)} content words of the query appear in the response"
    elif measure == "precision":
        overlap = shared / len(response)
        what = f"{shared} of {len(response)} content words of the response appear in the context"
    else:
        precision, recall = shared / len(response), shared / len(reference)
        overlap = 2 * precision * recall / (precision + recall) if shared else 0.0
        what = f"the response and the ground truth share {shared} content words (F1 {overlap:.2f})"
    score = 1 + math.floor(4 * overlap + 0.5)
    return score, f"Heuristic judge: {what}, so the score is {score} of 5."


def _wanted_format(instructions: str, body: Mapping[str, Any]) -> str:
    response_format = body.get("response_format") or {}
    kind = response_format.get("type") if isinstance(response_format, Mapping) else None
    if "<S2>" in instructions:
        return "tags"
    if kind in ("json_object", "json_schema") or re.search(r"\bjson\b", instructions, re.IGNORECASE):
        return "json"
    if re.search(
        r"\b(?:single|only|just)\s+(?:an?\s+|the\s+|one\s+)?(?:integer|number|digit|score|rating)\b",
        instructions,
        re.IGNORECASE,
    ):
        return "number"
    return "text"


def heuristic_judge(request: Mapping[str, Any]) -> str:
    """Deterministic model answer for a chat-completions request (a ``server.requests`` record or a body).

    Fields: the last user message is searched for labelled fields (``extract_fields``): query
    (QUERY, CONVERSATION_HISTORY, CONVERSATION, question, # Request ...), response (RESPONSE, predicted
    answer, TOOL CALLS TO BE EVALUATED, # Answer ...), ground truth (correct answer, ground truth ...),
    context (CONTEXT ...); if it has none, all messages are searched.

    Score (1-5), from content-word sets (lower-cased words, stopwords dropped, a plural "s" stripped):
      * empty response -> 1; no fields found or no reference words -> 3;
      * with a ground truth (Similarity): F1 of the response and ground-truth words;
      * else with a context (Groundedness): share of response words found in the context;
      * else (Relevance, Coherence, ToolCallAccuracy, custom judges): share of query words in the response;
      * score = 1 + floor(4 * overlap + 0.5).

    Format, from the prompt (system + user text without the extracted field values) and ``response_format``:
      * asks for ``<S2>`` tags -> ``<S0>...</S0><S1>reason</S1><S2>N</S2>``;
      * JSON (``response_format`` json_object/json_schema, or "JSON" in the prompt) and "score" in the
        prompt -> ``{"reason", "score", "status": "completed"}`` when the prompt defines a ``status`` key
        (azure-ai-evaluation's judges), else ``{"score": N, "reason": ...}``; JSON without "score" ->
        ``{"answer": <text answer>}``;
      * asks for a single integer/number/score -> ``"N"``;
      * otherwise a short plain-text answer naming the start of the last user message.
    """
    body = request.get("body", request) if isinstance(request, Mapping) else {}
    body = body if isinstance(body, Mapping) else {}
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    last_user = users[-1] if users else ""
    fields = extract_fields(last_user) or extract_fields("\n".join(_text(m.get("content")) for m in messages))
    # The format is read from the prompt's own words, not from the data being judged.
    template = system + "\n" + "\n".join(users)
    for value in sorted(filter(None, fields.values()), key=len, reverse=True):
        template = template.replace(value, " ")
    wanted = _wanted_format(template, body)
    if wanted == "text":
        words = last_user.split()
        gist = " ".join(words[:12]) + (" ..." if len(words) > 12 else "")
        return f"This is a test answer from the evalkit model server to: {gist}" if gist else "Hello."
    schema = json.dumps(body.get("response_format") or "")
    if wanted == "json" and not re.search(r"\bscore\b", template + schema, re.IGNORECASE):
        return json.dumps({"answer": "Test answer to: " + " ".join(last_user.split()[:12])})
    score, reason = judge_score(fields)
    if wanted == "tags":
        return f"<S0>Let's think step by step: {reason}</S0><S1>{reason}</S1><S2>{score}</S2>"
    if wanted == "number":
        return str(score)
    if re.search(r"[\"']?\bstatus\b[\"']?\s*:", template):
        return json.dumps(
            {"reason": f"Let's think step by step: {reason}", "score": score, "status": "completed"}
        )
    return json.dumps({"score": score, "reason": reason})
