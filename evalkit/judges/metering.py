"""What a run's judge calls cost: every chat-completions request a judge makes, and the tokens it was billed.

Why here, at the openai client: a judge call is not always one request. A custom ``.prompty`` wrapper may call
its prompty several times (``consistency_check`` samples it ``options.samples`` times), azure-ai-evaluation's
ToolCallAccuracy sends its own requests (and retries them itself), and promptflow hands the wrapper only the
parsed answer, never the usage. All of them, and evalkit's own clients, end in openai's
``chat.completions.create``. While a judge pool runs a call (``metering(usage, evaluator)``, set by
``JudgePool`` in the thread that runs it), that method, hooked once (``install``), counts the request
before it is sent (a failed request, a 429, a timeout is a request the server saw), then adds the reply's
``usage`` to the evaluator's tokens and checks the raw answer (``strict_answers.check_answer``: size limit,
repeated keys) before any library parses it. Outside a judge call the hook does nothing. In a batch run
(``judges.batch``) the usage's ``stand_in`` answers the request instead of the model.

Every client evalkit builds or hands a model configuration to sends with ``max_retries=0`` (evalkit's,
promptflow's; azure-ai-evaluation retries above ``create``), so one ``create`` is one HTTP request, and the
run's request count equals what the model server received, retries included.

May import: ``evalkit.judges.strict_answers``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from evalkit.judges.strict_answers import check_answer


@dataclass
class Spent:
    """One evaluator's requests and tokens."""

    requests: int = 0
    prompt: int = 0
    completion: int = 0


class Usage:
    """Requests and tokens per evaluator (identity), thread-safe; one per judge pool."""

    def __init__(self):
        self._lock = threading.Lock()
        self.by_evaluator: dict[str, Spent] = {}
        #: while a run judges in batches: answers requests instead of the model (``judges.batch.stand_in``)
        self.stand_in = None

    def _spent(self, evaluator: str) -> Spent:
        return self.by_evaluator.setdefault(evaluator, Spent())

    def request(self, evaluator: str) -> None:
        with self._lock:
            self._spent(evaluator).requests += 1

    def tokens(self, evaluator: str, prompt: int, completion: int) -> None:
        with self._lock:
            spent = self._spent(evaluator)
            spent.prompt += prompt
            spent.completion += completion

    @property
    def requests(self) -> int:
        with self._lock:
            return sum(s.requests for s in self.by_evaluator.values())

    def of(self, evaluator: str) -> Spent:
        """A copy of ``evaluator``'s figures (zeros when it made no request)."""
        with self._lock:
            spent = self.by_evaluator.get(evaluator, Spent())
            return Spent(spent.requests, spent.prompt, spent.completion)


_current: contextvars.ContextVar[tuple[Usage, str] | None] = contextvars.ContextVar(
    "evalkit_judge_usage", default=None
)
_lock = threading.Lock()
_installed = False


@contextlib.contextmanager
def metering(usage: Usage | None, evaluator: str) -> Iterator[None]:
    """Within the block, this thread's (and its asyncio tasks') chat-completions requests count for
    ``evaluator`` in ``usage``."""
    if usage is None:
        yield
        return
    install()
    token = _current.set((usage, evaluator))
    try:
        yield
    finally:
        _current.reset(token)


def install() -> None:
    """Hook openai's ``Completions.create`` and ``AsyncCompletions.create`` (once)."""
    global _installed
    with _lock:
        if _installed:
            return
        module = importlib.import_module("openai.resources.chat.completions")
        module.Completions.create = _sync(module.Completions.create)
        module.AsyncCompletions.create = _async(module.AsyncCompletions.create)
        _installed = True


def _observe(meter: tuple[Usage, str], reply) -> None:
    """Count ``reply``'s tokens, then check its answer (a refused answer was still billed)."""
    usage, evaluator = meter
    spent = getattr(reply, "usage", None)
    if spent is not None:
        prompt = getattr(spent, "prompt_tokens", 0) or 0
        completion = getattr(spent, "completion_tokens", 0) or 0
        usage.tokens(evaluator, int(prompt), int(completion))
    for choice in getattr(reply, "choices", None) or []:
        message = getattr(choice, "message", None)
        check_answer(getattr(message, "content", None))


def _sync(original):
    @functools.wraps(original)
    def create(self, *args, **kwargs):
        meter = _current.get()
        if meter is None:
            return original(self, *args, **kwargs)
        if meter[0].stand_in is not None:  # batch judging: the stand-in counts what it answers
            send = functools.partial(original, self, *args, **kwargs)
            reply = meter[0].stand_in.create(meter[0], meter[1], kwargs, send, self)
        else:
            meter[0].request(meter[1])
            reply = original(self, *args, **kwargs)
        _observe(meter, reply)
        return reply

    create.evalkit_metered = True
    return create


def _async(original):
    @functools.wraps(original)
    async def create(self, *args, **kwargs):
        meter = _current.get()
        if meter is None:
            return await original(self, *args, **kwargs)
        if meter[0].stand_in is not None:
            send = functools.partial(original, self, *args, **kwargs)
            reply = await meter[0].stand_in.acreate(meter[0], meter[1], kwargs, send, self)
        else:
            meter[0].request(meter[1])
            reply = await original(self, *args, **kwargs)
        _observe(meter, reply)
        return reply

    create.evalkit_metered = True
    return create
