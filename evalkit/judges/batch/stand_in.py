"""What stands in for the model while a run judges in batches: it records requests, then answers them.

``metering`` hands every chat-completions request of a judge call to the pool's ``Usage.stand_in`` when one
is set (``StandIn``). A request is known by its line key: the sha256 of the evaluator identity, the request
body (canonical JSON) and the occurrence of that body in this pass (the same body asked twice in one pass,
as ``--samples`` does, is two lines, judged independently as the direct path judges them).

- A line the batches answered: the reply is the ``ChatCompletion`` of the batch's response body, so the
  library that asked (openai, promptflow, azure-ai-evaluation) parses its own reply as it would a live one.
  It counts as one request for the evaluator, and ``metering`` adds its tokens.
- A line whose batch line failed twice: ``BatchLineFailed`` (a ``JudgeFailure``) naming the batch and line.
- Any other line is recorded (``pending``); the driver sends the recorded lines in a batch and runs the pass
  again. The call goes on with a placeholder reply (``PLACEHOLDER``), so that a judge that asks the same
  thing several times in a row (a custom judge sampling its prompty, ``consistency_check``) has all its
  samples recorded in one pass, not one per batch round. Once a call has had a placeholder, only a repeat of
  a body it already asked is recorded; any other request (one that may depend on the placeholder) stops the
  call with ``Deferred`` and is recorded in a later pass, from the real answer. A pass that recorded
  anything is thrown away, placeholders and all.
- A streamed request cannot be batched, nor can a request to another service than the batches' (a client
  with another base URL): those are sent directly (and counted as such).

May import: ``evalkit.judges.cache``, ``evalkit.judges.failures``.
"""

from __future__ import annotations

import contextvars
import hashlib
import re
import threading
from dataclasses import dataclass

from evalkit.judges.cache import canonical_json
from evalkit.judges.failures import JudgeFailure

#: What the judge call running in this context had deferred: (stand-in, pass, canonical bodies). A context
#: variable, as ``metering``'s is: each pool attempt starts in a new thread (an empty context), and an async
#: library's tasks get a copy of it, so no call sees another's.
_asked: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("evalkit_batch_asked", default=None)
#: The content of the reply that lets a call go on in a recording pass (its result is never kept).
PLACEHOLDER = '{"score": 1, "reason": "waiting for the batch"}'
#: Keyword arguments of ``create`` that are the client's, not the request body's.
CLIENT_ONLY = ("extra_headers", "extra_query", "timeout")


class Deferred(JudgeFailure):
    """A judge request recorded for the next batch; the call that made it is run again afterwards."""

    def __init__(self):
        super().__init__("the judge request is waiting for its batch", "judgeDeferred")


class BatchLineFailed(JudgeFailure):
    """A batch line that failed in its batch and again in the retry batch."""


@dataclass
class Line:
    """One request of a batch: its key (the JSONL ``custom_id``), evaluator and body."""

    key: str
    evaluator: str
    body: dict


def request_body(kwargs: dict) -> dict | None:
    """The JSON body ``create(**kwargs)`` sends, or None when it cannot be batched (a stream)."""
    import openai

    body = {}
    for name, value in kwargs.items():
        if name in CLIENT_ONLY or isinstance(value, (openai.NotGiven, openai.Omit)):
            continue
        if name == "extra_body":
            body.update(value or {})
            continue
        body[name] = value
    if body.get("stream"):
        return None
    body.pop("stream", None)
    return body


def line_key(evaluator: str, body: dict, occurrence: int) -> str:
    payload = canonical_json({"evaluator": evaluator, "body": body, "n": occurrence})
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class StandIn:
    """Answers judge requests from batch results, and records the ones it cannot answer yet."""

    def __init__(self):
        self._lock = threading.Lock()
        self.answers: dict[str, dict] = {}  # line key -> response body (a chat completion)
        self.failures: dict[str, str] = {}  # line key -> the final error message
        self.pending: dict[str, Line] = {}
        self._seen: dict[tuple[str, str], int] = {}
        self._pass = 0
        #: the base URL of the service the batches go to; requests of clients of other services are sent
        self.base_url: str | None = None

    def new_pass(self) -> None:
        """Forget this pass's occurrence counts and recorded lines."""
        with self._lock:
            self._pass += 1
            self._seen.clear()
            self.pending.clear()

    def _line(self, evaluator: str, body: dict) -> tuple[Line, str]:
        text = canonical_json(body)
        with self._lock:
            occurrence = self._seen.get((evaluator, text), 0)
            self._seen[(evaluator, text)] = occurrence + 1
        return Line(line_key(evaluator, body, occurrence), evaluator, body), text

    def _defer(self, line: Line, text: str):
        """Record ``line`` and answer with the placeholder, or stop the call (see the module docstring)."""
        mark = _asked.get()
        if mark is None or mark[0] is not self or mark[1] != self._pass:
            asked: set[str] = set()
            _asked.set((self, self._pass, asked))
        elif text not in mark[2]:
            raise Deferred()
        else:
            asked = mark[2]
        asked.add(text)
        with self._lock:
            self.pending[line.key] = line
        return _completion(
            {
                "id": "evalkit-placeholder",
                "object": "chat.completion",
                "created": 0,
                "model": str(line.body.get("model") or ""),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": PLACEHOLDER},
                    }
                ],
            }
        )

    def batchable(self, kwargs: dict, resource) -> dict | None:
        """The body to batch, or None: a stream, or a client of another service than the batches' (a judge
        of a jury on another endpoint) is sent directly."""
        if self.base_url is not None and resource is not None:
            client = getattr(resource, "_client", None)
            if service_url(getattr(client, "base_url", "")) != self.base_url:
                return None
        return request_body(kwargs)

    def create(self, usage, evaluator: str, kwargs: dict, send, resource=None):
        """The reply to ``create(**kwargs)`` for ``evaluator``: from the batches, or sent (``send()``)."""
        body = self.batchable(kwargs, resource)
        if body is None:
            usage.request(evaluator)
            return send()
        line, text = self._line(evaluator, body)
        if line.key in self.failures:
            usage.request(evaluator)
            raise BatchLineFailed(self.failures[line.key], "evaluatorError")
        answer = self.answers.get(line.key)
        if answer is None:
            return self._defer(line, text)
        usage.request(evaluator)
        return _completion(answer)

    async def acreate(self, usage, evaluator: str, kwargs: dict, send, resource=None):
        if self.batchable(kwargs, resource) is None:
            usage.request(evaluator)
            return await send()
        return self.create(usage, evaluator, kwargs, None)


def service_url(base_url) -> str:
    """A client's base URL without the Azure OpenAI deployment a client may be bound to (``azure_deployment``):
    ``https://x.openai.azure.com/openai``, ``http://127.0.0.1:8000/v1``."""
    return re.sub(r"/deployments/[^/]+$", "", str(base_url).rstrip("/"))


def _completion(body: dict):
    from openai.types.chat import ChatCompletion

    return ChatCompletion.model_validate(body)
