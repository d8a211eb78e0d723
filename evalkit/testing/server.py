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

This module holds ``ModelServer`` itself: lifecycle, addresses, routes, script and records. The wire shapes
are in ``evalkit.testing.protocol``, the socket plumbing in ``evalkit.testing.http_server``, fault injection
in ``evalkit.testing.faults``, and ``Reply`` and the heuristic judge in ``evalkit.testing.answers``.

Endpoints
    ``POST /v1/chat/completions``, ``POST /chat/completions``, ``POST /openai/v1/chat/completions``
        OpenAI style; the reply's ``model`` is the request's ``model``.
    ``POST /openai/deployments/{deployment}/chat/completions?api-version=...``
        Azure OpenAI style (``api-key`` header or ``Authorization: Bearer``); the reply's ``model`` is the
        deployment name; a missing ``api-version`` is a 400.
    ``/v1/files``, ``/v1/batches`` (and Azure's ``/openai/files``, ``/openai/batches``): the Batch API, in
        ``evalkit.testing.batches`` (``server.batches``: completion delay, failed and expired lines).
    ``GET /v1/models`` (and ``/models``, ``/openai/models``): a minimal model list. ``GET /health``: ok.
    Anything else is a 404 in the OpenAI error shape ``{"error": {"message", "type", "param", "code"}}``.
    ``stream: true`` is answered as server-sent events (``chat.completion.chunk``s, then ``[DONE]``);
    ``n`` > 1 gives n identical choices.

What it answers (first that applies)
    1. ``require_key`` set and the key differs: 401 ``invalid_api_key`` (quoting the key with ``echo_key``).
    2. A queued fault (``fail_next``), else a random fault (``fail_randomly``, seeded RNG).
    3. ``script``: a callable ``script(request) -> Reply | str | dict | None`` or a list of replies consumed
       in order. A str is the message content, a dict is JSON-encoded as the content, None (or an exhausted
       list) falls through to 4.
    4. ``rules`` (default on): a prompt holding guideline lines, or an optimiser request, is answered by
       ``evalkit.testing.rules`` (a judge that follows the guidelines; an optimiser proposing them).
    5. ``heuristic_judge(request)``: deterministic answers that azure-ai-evaluation's prompt judges and
       evalkit's ``.prompty`` judges parse into a 1-5 score (rule documented on ``heuristic_judge``).
    ``latency`` seconds are added before every chat-completions response (faults included).

Token usage: given by the Reply, else estimated as round(words / 0.75) of the prompt's message texts and of
the reply content (0 for no words), so it is deterministic.

Keys: ``api-key``, ``Authorization`` and similar headers (and key-like query parameters) are checked, then
replaced by ``[redacted]`` before anything is stored; the server never logs or keeps an API key.

Keeping promptflow / azure-ai-evaluation off the network (tests and demos should do the same)
    * Evaluator classes called directly and promptflow ``load_flow(prompty)(...)`` contact only the configured
      endpoint (tests/testing/test_testing_server.py asserts it with a ``socket.connect`` audit hook).
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
times with exponential backoff (evalkit turns promptflow's off while its custom judges call:
``evalkit.judges.promptflow_calls``), so fault tests should use ``openai`` with ``max_retries=0`` or a small
``retry_after``.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from evalkit.testing import panel
from evalkit.testing.answers import Reply, heuristic_judge
from evalkit.testing.batches import BatchService, is_batch_path
from evalkit.testing.faults import Faults, make_fault
from evalkit.testing.http_server import ModelHTTPServer, ModelRequestHandler
from evalkit.testing.protocol import (
    MODEL_PATHS,
    Response,
    chat_response,
    error_response,
    json_response,
    model_list,
    parse_request,
)
from evalkit.testing.rules import rule_answer

__all__ = ["ModelServer"]

logger = logging.getLogger(__name__)


class ModelServer:
    """A local OpenAI / Azure OpenAI chat-completions server in a background thread (see module docs).

    ``script``: None (heuristic judge), a callable ``script(request) -> Reply | str | dict | None`` (given
    the stored, redacted request record; do not mutate it) or a list of such replies consumed in order. It
    may be reassigned at any time.
    ``latency``: seconds added to every chat-completions response. ``seed``: for ``fail_randomly``.
    ``require_key``: when set, requests must carry this key (``api-key`` or ``Authorization: Bearer``).
    ``echo_key``: a 401 for a wrong key quotes the presented key (or, without one, the ``Authorization``
    header as sent, ``Basic ...`` included) in its message, as some gateways do (``Incorrect API key
    provided: sk-...``), for tests that a key never leaks into what evalkit writes.
    ``host`` / ``port``: where to listen; port 0 picks a free port.
    ``rules``: answer prompts holding guideline lines, and optimiser requests, with ``evalkit.testing.rules``
    (default True; prompts without such lines are answered exactly as before).
    """

    def __init__(
        self,
        script: Callable[[dict], Any] | Iterable[Any] | None = None,
        latency: float = 0.0,
        seed: int = 0,
        *,
        require_key: str | None = None,
        echo_key: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        rules: bool = True,
    ):
        self.latency = latency
        self.rules = (
            rules  # the rule-following judge and optimiser (evalkit.testing.rules) before the heuristic
        )
        self.require_key = require_key
        self.echo_key = echo_key
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._requests: list[dict] = []
        self._count = 0
        self._faults = Faults(seed)
        self._stopping = threading.Event()
        self._httpd: ModelHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []  # exceptions raised by a script callable, as "Type: message"
        self.script = script
        self.batches = BatchService(self)  # /v1/files and /v1/batches (``evalkit.testing.batches``)

    # Lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> ModelServer:
        """Bind and serve in a daemon thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("ModelServer already started")
        self._stopping.clear()
        self._httpd = ModelHTTPServer((self._host, self._port), ModelRequestHandler, self)
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
        self._faults.queue(n, make_fault(status, retry_after, malformed, hang, raw_body, message))

    def fail_randomly(self, probability: float, status: int | None = None, **fault: Any) -> None:
        """Fail each chat-completions request with ``probability`` (seeded RNG); 0 turns it off.

        Takes the same keywords as ``fail_next``; queued faults are used first.
        """
        if not 0 <= probability <= 1:
            raise ValueError("probability must be within [0, 1]")
        self._faults.set_random(probability, make_fault(status, **fault))

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

    @property
    def tokens_reported(self) -> dict[str, int]:
        """The usage the server reported in its chat completions so far: ``{"prompt", "completion"}`` summed
        (errors report none; a stream only when it was asked to include usage)."""
        with self._lock:
            usages = [r.get("usage") or {} for r in self._requests]
        return {
            "prompt": sum(u.get("prompt_tokens", 0) for u in usages),
            "completion": sum(u.get("completion_tokens", 0) for u in usages),
        }

    def reset(self) -> None:
        """Forget recorded requests, queued and random faults and script errors (the script stays)."""
        with self._lock:
            self._requests.clear()
            self._count = 0
            self._faults.clear()
            self.errors.clear()

    # Request handling (called from handler threads) -----------------------------------------------------
    def _record(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> tuple[dict, str | None]:
        """Build and store the redacted request record; returns it with the presented API key."""
        record, key = parse_request(method, target, headers, raw)
        with self._lock:
            record["index"] = self._count
            self._count += 1
            self._requests.append(record)
        return record, key

    def _handle(self, record: dict, key: str | None) -> Response:
        path, method = record["path"], record["method"]
        if path == "/health":
            return json_response(200, {"status": "ok"})
        if path in MODEL_PATHS:
            if method != "GET":
                return error_response(405, f"{method} is not allowed on {path}.")
            return json_response(200, self._models())
        if is_batch_path(path):
            if self.require_key is not None and key != self.require_key:
                return error_response(401)
            return self.batches.handle(record)
        if record["api"] is None:
            return error_response(404, f"Resource not found: {method} {path}.")
        if method != "POST":
            return error_response(405, f"{method} is not allowed on {path}.")
        return self._chat(record, key)

    def _models(self) -> dict:
        with self._lock:
            seen = {r["model"] for r in self._requests if r["model"]}
        return model_list(seen)

    def _chat(self, record: dict, key: str | None) -> Response:
        latency = float(self.latency or 0.0)
        if self.require_key is not None and key != self.require_key:
            detail = f"Incorrect API key provided: {key}." if self.echo_key else None
            return error_response(401, detail, delay=latency)
        if record["api"] == "azure" and not record["query"].get("api-version"):
            return error_response(400, "Missing required query parameter 'api-version'.", delay=latency)
        body = record["body"]
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return error_response(
                400, "The request body must be a JSON object with 'messages'.", delay=latency
            )
        hang = 0.0
        reply: Reply | None = None
        fault = self._faults.next()
        if fault is not None:
            hang = fault.hang
            reply = fault.reply()
        if reply is None:
            reply = self._scripted(record)
        return chat_response(record, reply, delay=latency + hang + float(reply.delay or 0.0))

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
        if answer is None:  # guideline rules in the prompt (``rules``), jurors by model name and pairwise
            # prompts (``panel``), else the heuristic judge
            ruled = rule_answer(record) if self.rules else None
            return Reply(content=ruled if ruled is not None else panel.answer(record, heuristic_judge))
        if isinstance(answer, Reply):
            return answer
        return Reply(content=answer)
