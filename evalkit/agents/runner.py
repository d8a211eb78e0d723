"""Agents under test: send every row of the case table to an agent and record what it answers.

``run_agent(df, target)`` returns a copy of the case table whose ``response``, ``citations``,
``retrieval_executions``, ``tool_calls``, ``spans``, ``error_code`` and ``error_message`` come from the agent.
The target is one of

* a Python callable ``fn(prompt, history)`` (sync or async) returning a string, or a dict with ``response``
  and optionally ``citations``, ``retrieval_executions`` and ``tool_calls`` (the upstream diagnostics
  shapes); given an ``allowed_tools`` keyword when it accepts one;
* ``"path/to/agent.py:function"`` or ``"package.module:function"``: the same, imported;
* ``"http(s)://host/v1"`` (optionally ``#model``): an OpenAI-compatible chat-completions endpoint.

Single-turn items run concurrently; the turns of a thread run in order, each turn seeing the earlier turns
as chat messages (``history``), while threads run concurrently with each other. Each call goes through
``JudgePool`` (one call per pool) for its deadline, retries with backoff and full jitter, and ``Retry-After``;
a row that still fails gets the upstream ``ErrorObject`` code (``agentRequestFailed``, ``agentRateLimited``,
``agentTimeout``, ``agentAuthenticationError``, ``agentResponseUnparseable``) and the later turns of its thread
``turnSkipped``, without being sent.

Span capture: while an item runs, the OpenTelemetry spans the agent starts are routed to that item's row.
An SDK ``TracerProvider`` is installed once if the process has none (else a span processor is added to the
one there is); the processor stamps ``session.id`` on each span in ``on_start`` from a context variable set
around the call (a span started outside the call's context, say in a thread the agent made, follows its
trace), and in ``on_end`` stores the span, as the flat span document ``evalkit.spans.load`` reads, in the
row's ``spans``. ``write_spans_jsonl`` writes them all as one JSONL file.
"""

from __future__ import annotations

import asyncio
import contextvars
import difflib
import hashlib
import importlib
import importlib.util
import inspect
import json
import logging
import os
import sys
import threading
import uuid
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.errors import EnvironmentConfigError, EvalkitError
from evalkit.judges.pool import Call, JudgeFailure, JudgePool, _find, _retry_after, _server_message

__all__ = ["AgentResult", "TURN_SKIPPED_MESSAGE", "resolve_target", "run_agent", "write_spans_jsonl"]

log = logging.getLogger("evalkit.agents.runner")

TURN_SKIPPED_CODE = "turnSkipped"
TURN_SKIPPED_MESSAGE = "Turn not attempted: preceding turn failed"
#: The API key sent to an HTTP agent when ``AGENT_API_KEY`` is not set (the openai client insists on one;
#: local agents ignore it, and one that does not answers 401, which names the variable).
NO_KEY = "not-set"


@dataclass
class AgentResult:
    """What the agent gave for one row (what ``on_done`` receives, with the row's position)."""

    response: str | None = None
    citations: list = field(default_factory=list)
    retrieval_executions: list = field(default_factory=list)
    tool_calls: dict | None = None
    spans: list = field(default_factory=list)
    error_code: str | None = None
    error_message: str | None = None
    attempts: int = 0


# --- run ------------------------------------------------------------------------------------------------


def run_agent(
    df: pd.DataFrame,
    target: Callable | str,
    *,
    concurrency: int = 8,
    timeout: float = 120.0,
    attempts: int = 3,
    capture_spans: bool = True,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    on_done: Callable[[int, AgentResult], None] | None = None,
) -> pd.DataFrame:
    """Send every row of ``df`` to the agent ``target``; return a copy with the agent's answers.

    Every row is sent, including rows whose document already records a response: with an agent, the
    recorded ``response``, ``citations``, ``retrieval_executions`` and ``tool_calls`` are replaced (they
    describe an earlier answer), and a row the agent failed on has ``response`` None with ``error_code`` /
    ``error_message`` set, which ``statuses.apply_statuses`` keeps.

    ``concurrency``: items (single-turn items and whole threads) in flight at once. ``timeout``: seconds
    per call (a Python agent that overruns is abandoned in its daemon thread, not stopped). ``attempts``:
    calls per row, counting the first; 429, 5xx, timeouts, connection errors and exceptions raised by a
    Python agent are retried after ``backoff * 2**n`` seconds at most (full jitter, capped at
    ``max_backoff``, at least ``Retry-After``); 401/403, other 4xx and unparseable answers are final.
    ``capture_spans``: record the OpenTelemetry spans the agent emits in ``spans`` (see the module notes).
    ``on_done(position, result)``: called as each row finishes (position in ``df``), from worker threads.
    """
    agent = resolve_target(target, timeout=timeout)
    router = _span_router() if capture_spans else None
    n = len(df)
    prompts = [p if isinstance(p, str) else "" if _missing(p) else str(p) for p in _column(df, "prompt", "")]
    allowed = [_allowed_tools(value) for value in _column(df, "allowed_tools", None)]
    units = _units(df)
    run_id = uuid.uuid4().hex[:12]
    items = _column(df, "item", None)
    results: list[AgentResult | None] = [None] * n
    lock = threading.Lock()

    def finish(position: int, result: AgentResult) -> None:
        with lock:
            results[position] = result
        if on_done is not None:
            on_done(position, result)

    def run_unit(positions: list[int]) -> None:
        item = items[positions[0]]
        session = f"evalkit-{run_id}-{positions[0] if _missing(item) else item}"
        history: list[dict] = []
        for index, position in enumerate(positions):
            result = _call_agent(
                agent,
                prompts[position],
                [dict(m) for m in history],
                allowed[position],
                session=session,
                router=router,
                timeout=timeout,
                attempts=attempts,
                backoff=backoff,
                max_backoff=max_backoff,
            )
            finish(position, result)
            if result.response is None:
                for later in positions[index + 1 :]:
                    finish(
                        later, AgentResult(error_code=TURN_SKIPPED_CODE, error_message=TURN_SKIPPED_MESSAGE)
                    )
                return
            history += [
                {"role": "user", "content": prompts[position]},
                {"role": "assistant", "content": result.response},
            ]

    try:
        with ThreadPoolExecutor(
            max_workers=max(1, int(concurrency)), thread_name_prefix="evalkit-agent"
        ) as pool:
            futures = [pool.submit(run_unit, unit) for unit in units]
            try:
                for future in as_completed(futures):
                    future.result()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    finally:
        close = getattr(agent, "close", None)
        if agent is not target and callable(close):  # the HTTP client made here
            close()

    done = [r if r is not None else AgentResult() for r in results]
    out = df.copy()

    def put(name: str, values: list) -> None:
        out[name] = pd.Series(values, index=out.index, dtype=object)

    put("response", [r.response for r in done])
    put("citations", [r.citations for r in done])
    put("retrieval_executions", [r.retrieval_executions for r in done])
    put("tool_calls", [r.tool_calls for r in done])
    put("spans", [r.spans for r in done])
    put("error_code", [r.error_code for r in done])
    put("error_message", [r.error_message for r in done])
    return out


def _column(df: pd.DataFrame, name: str, default: Any) -> list:
    return df[name].tolist() if name in df.columns else [default] * len(df)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _units(df: pd.DataFrame) -> list[list[int]]:
    """Positions to run together, in document order: one per single-turn item, one per thread (by turn)."""
    turns = _column(df, "turn", None)
    keys = _column(df, "item", None) if "item" in df.columns else _column(df, "thread", None)
    units: list[list[int]] = []
    threads: dict[Any, list[int]] = {}
    for position, (turn, key) in enumerate(zip(turns, keys)):
        if _missing(turn):
            units.append([position])
            continue
        if key not in threads:
            threads[key] = []
            units.append(threads[key])
        threads[key].append(position)
    for positions in threads.values():
        positions.sort(key=lambda p: int(turns[p]))
    return units


def _allowed_tools(value: Any) -> list[str]:
    """The row's resolved tool allowlist: its ``allowed_tools`` value as a list of strings, else []."""
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str)):
        values = value.tolist() if hasattr(value, "tolist") else value
        return [str(v) for v in values if not _missing(v)]
    return []


# --- one call ---------------------------------------------------------------------------------------------

_TIMEOUT_CODES = {"judgeTimeout": "agentTimeout"}


def _call_agent(
    agent: _Agent,
    prompt: str,
    history: list[dict],
    allowed_tools: list | None,
    *,
    session: str,
    router: _SpanRouter | None,
    timeout: float,
    attempts: int,
    backoff: float,
    max_backoff: float,
) -> AgentResult:
    """One row: the call with its retries and deadline (``JudgePool``), its spans, its result or error."""
    buckets: list[_Bucket] = []
    buckets_lock = threading.Lock()

    def attempt() -> dict:
        # JudgePool runs each attempt in a fresh thread, whose context is empty: each item starts its own
        # traces (no parent span from the caller) and only this attempt's bucket is current.
        bucket = _Bucket(session)
        with buckets_lock:
            buckets.append(bucket)
        context = contextvars.Context()
        try:
            answer = context.run(_invoke, agent, prompt, history, allowed_tools, bucket if router else None)
        except BaseException as exc:  # noqa: BLE001 - every failure is classified for the row
            raise _failure(exc, timeout) from exc
        return {"answer": answer, "bucket": bucket}

    pool = JudgePool(1, attempts=attempts, timeout=timeout, backoff=backoff, max_backoff=max_backoff)
    outcome = pool.run([Call(run=attempt)])[0]
    if outcome.value is not None:
        bucket = outcome.value["bucket"]
    else:
        with buckets_lock:
            bucket = buckets[-1] if buckets else None
    spans = router.collect(bucket) if (router is not None and bucket is not None) else []
    with buckets_lock:
        for other in buckets:
            other.closed = True
            if router is not None:
                router.forget(other)
    if outcome.value is not None:
        answer = outcome.value["answer"]
        return AgentResult(
            response=answer["response"],
            citations=answer["citations"],
            retrieval_executions=answer["retrieval_executions"],
            tool_calls=answer["tool_calls"],
            spans=spans,
            attempts=outcome.attempts,
        )
    code = outcome.code or "agentRequestFailed"
    message = outcome.error or "Agent request failed"
    if code in _TIMEOUT_CODES:  # the pool's own deadline
        code = _TIMEOUT_CODES[code]
        message = f"Agent timed out: no answer within {timeout:g} s"
        if outcome.attempts > 1:
            message += f" (after {outcome.attempts} attempts)"
    elif not code.startswith("agent"):
        code = "agentRequestFailed"
    return AgentResult(spans=spans, error_code=code, error_message=message, attempts=outcome.attempts)


def _invoke(agent: _Agent, prompt, history, allowed_tools, bucket: _Bucket | None) -> dict:
    token = _CURRENT.set(bucket)
    try:
        return _parse(agent(prompt, history, allowed_tools))
    finally:
        _CURRENT.reset(token)


class _Unparseable(Exception):
    """The agent answered, but not with something evalkit can read."""


def _parse(answer: Any) -> dict:
    """A string, or a dict with ``response`` (and optional extras), as the row's fields."""
    if isinstance(answer, str):
        return {"response": answer, "citations": [], "retrieval_executions": [], "tool_calls": None}
    if not isinstance(answer, dict):
        raise _Unparseable(f"expected a string or a dict with 'response', got {type(answer).__name__}")
    response = answer.get("response")
    if not isinstance(response, str):
        found = "no 'response'" if response is None else f"'response' of type {type(response).__name__}"
        raise _Unparseable(f"the answer has {found} (a string is needed)")
    citations = answer.get("citations")
    executions = answer.get("retrieval_executions")
    if executions is None and isinstance(answer.get("diagnostics"), dict):
        executions = answer["diagnostics"].get("retrieval_executions")
    calls = answer.get("tool_calls")
    for name, value, kind in (
        ("citations", citations, list),
        ("retrieval_executions", executions, list),
        ("tool_calls", calls, dict),
    ):
        if value is not None and not isinstance(value, kind):
            raise _Unparseable(f"'{name}' must be a {kind.__name__}, got {type(value).__name__}")
    return {
        "response": response,
        "citations": _citations(citations or []),
        "retrieval_executions": list(executions or []),
        "tool_calls": calls,
    }


def _citations(values: list) -> list:
    """Citation objects as given; a bare string (a URL, a document name) becomes ``{index, source}``."""
    out = []
    for number, value in enumerate(values, 1):
        if isinstance(value, dict):
            out.append(value)
        elif isinstance(value, str):
            out.append({"index": number, "source": value})
        else:
            raise _Unparseable(f"citation {number} must be an object or a string, got {type(value).__name__}")
    return out


def _failure(exc: BaseException, timeout: float) -> JudgeFailure:
    """Map what a call raised to the upstream agent error code, and whether another attempt may help."""
    if isinstance(exc, JudgeFailure):
        return exc
    if isinstance(exc, _Unparseable):
        return JudgeFailure(f"Agent response unparseable: {exc}", "agentResponseUnparseable")
    openai = sys.modules.get("openai")  # an openai error exists only if openai was imported
    found = _find(exc, openai.OpenAIError) if openai is not None else None
    if found is not None:
        if isinstance(found, openai.APITimeoutError):
            return JudgeFailure(
                f"Agent timed out: no answer within {timeout:g} s", "agentTimeout", retryable=True
            )
        if isinstance(found, openai.APIStatusError):
            status = found.response.status_code
            text = f"HTTP {status}: {_server_message(found)}"
            if status == 429:
                return JudgeFailure(
                    f"Agent rate limited: {text}",
                    "agentRateLimited",
                    retryable=True,
                    retry_after=_retry_after(found),
                )
            if status in (401, 403):
                hint = getattr(found, "_evalkit_hint", "")
                return JudgeFailure(f"Agent authentication failed: {text}{hint}", "agentAuthenticationError")
            retryable = status >= 500 or status in (408, 409)
            return JudgeFailure(f"Agent request failed: {text}", "agentRequestFailed", retryable=retryable)
        if isinstance(found, openai.APIConnectionError):
            cause = found.__cause__ or found.__context__
            detail = f": {cause}" if cause else ""
            return JudgeFailure(
                f"Agent request failed: cannot reach the agent ({found}{detail})",
                "agentRequestFailed",
                retryable=True,
            )
    if isinstance(exc, TimeoutError):
        return JudgeFailure(f"Agent timed out: {type(exc).__name__}: {exc}", "agentTimeout", retryable=True)
    return JudgeFailure(
        f"Agent request failed: {type(exc).__name__}: {exc}", "agentRequestFailed", retryable=True
    )


# --- targets ----------------------------------------------------------------------------------------------


class _Agent:
    """Calls a target as ``agent(prompt, history, allowed_tools)``; returns what the target returned."""

    def __call__(self, prompt: str, history: list[dict], allowed_tools: list | None) -> Any:
        raise NotImplementedError


class _FunctionAgent(_Agent):
    """A Python callable, sync or async; ``allowed_tools`` is passed only when the function takes it."""

    def __init__(self, fn: Callable, name: str):
        self.fn = fn
        self.name = name
        self.takes_tools = _accepts(fn, "allowed_tools")

    def __call__(self, prompt: str, history: list[dict], allowed_tools: list | None) -> Any:
        kwargs = {"allowed_tools": list(allowed_tools or [])} if self.takes_tools else {}
        answer = self.fn(prompt, history, **kwargs)
        if inspect.isawaitable(answer):  # an async function: its own event loop, in this worker thread
            return asyncio.run(_awaited(answer))
        return answer


async def _awaited(awaitable):
    return await awaitable


def _accepts(fn: Callable, name: str) -> bool:
    """Whether ``fn`` can be called with the keyword ``name`` (named, keyword-capable, or ``**kwargs``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    for p in parameters:
        if p.kind is p.VAR_KEYWORD:
            return True
        if p.name == name and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            return True
    return False


class _HttpAgent(_Agent):
    """An OpenAI-compatible chat-completions endpoint; the thread's history is sent as the messages.

    Model: the URL's ``#model`` fragment, else ``AGENT_MODEL``. Key: ``AGENT_API_KEY``. The client does not
    retry (``max_retries=0``): retries are ``run_agent``'s. The body is parsed here, so a body that is not
    chat-completions JSON is ``agentResponseUnparseable``. ``citations`` on the message or the body, when a
    list, are taken too. The tool allowlist is not sent: a plain endpoint has no tool schemas to send.
    """

    def __init__(self, url: str, timeout: float):
        import openai

        base, _, fragment = url.partition("#")
        base = base.rstrip("/")
        if base.endswith("/chat/completions"):
            base = base[: -len("/chat/completions")]
        self.url = base
        self.model = fragment or os.environ.get("AGENT_MODEL") or ""
        if not self.model:
            raise EnvironmentConfigError(
                f"Agent target '{url}': no model name. Set AGENT_MODEL or add it to the URL as '#model'."
            )
        key = os.environ.get("AGENT_API_KEY")
        self.hint = "" if key else " (AGENT_API_KEY is not set)"
        self.client = openai.OpenAI(base_url=base, api_key=key or NO_KEY, max_retries=0, timeout=timeout)

    def __call__(self, prompt: str, history: list[dict], allowed_tools: list | None) -> Any:
        import openai

        messages = [*history, {"role": "user", "content": prompt}]
        try:
            raw = self.client.chat.completions.with_raw_response.create(model=self.model, messages=messages)
        except openai.APIStatusError as exc:
            exc._evalkit_hint = self.hint  # type: ignore[attr-defined]
            raise
        text = raw.http_response.text
        try:
            body = json.loads(text)
        except ValueError:
            raise _Unparseable(f"the body is not JSON: {_clip(text)!r}") from None
        try:
            message = body["choices"][0]["message"]
            content = message["content"]
        except (KeyError, IndexError, TypeError):
            raise _Unparseable(f"no choices[0].message.content in the body: {_clip(text)!r}") from None
        if not isinstance(content, str):
            raise _Unparseable(f"choices[0].message.content is {type(content).__name__}, not text")
        answer: dict[str, Any] = {"response": content}
        citations = message.get("citations", body.get("citations")) if isinstance(message, dict) else None
        if isinstance(citations, list):
            answer["citations"] = citations
        return answer

    def close(self) -> None:
        self.client.close()


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def resolve_target(target: Callable | str, *, timeout: float = 120.0) -> _Agent:
    """The agent for ``target``: a callable, ``file.py:function``, ``package.module:function`` or a URL.

    Raises ``EvalkitError`` naming the target when the file, module or function cannot be found.
    """
    if isinstance(target, _Agent):
        return target
    if callable(target):
        return _FunctionAgent(target, getattr(target, "__qualname__", repr(target)))
    if not isinstance(target, str) or not target.strip():
        raise EvalkitError(
            f"Agent target {target!r}: expected a callable, 'path/to/agent.py:function', "
            "'package.module:function' or an http(s):// URL"
        )
    text = target.strip()
    if text.lower().startswith(("http://", "https://")):
        return _HttpAgent(text, timeout)
    where, sep, name = text.rpartition(":")
    if not sep or not where or not name or not name.isidentifier():
        raise EvalkitError(
            f"Agent target '{target}': expected 'path/to/agent.py:function', 'package.module:function' or an "
            "http(s):// URL"
        )
    if where.endswith(".py") or "/" in where or os.sep in where:
        module, label = _import_file(target, Path(where)), where
    else:
        module, label = _import_module(target, where), f"module '{where}'"
    fn = getattr(module, name, None)
    if fn is None:
        names = [n for n in vars(module) if not n.startswith("_") and callable(vars(module)[n])]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise EvalkitError(f"Agent target '{target}': {label} has no function '{name}'.{hint}")
    if not callable(fn):
        raise EvalkitError(f"Agent target '{target}': '{name}' in {label} is not callable")
    return _FunctionAgent(fn, text)


def _import_file(target: str, path: Path):
    """Import an agent file under a private module name. Its folder is put on ``sys.path`` and stays there,
    so the agent can import its sibling modules, also lazily when it is called."""
    path = path.expanduser().resolve()
    if not path.is_file():
        raise EvalkitError(f"Agent target '{target}': file {path} not found")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    module_name = f"evalkit_agent_{path.stem if path.stem.isidentifier() else 'file'}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EvalkitError(f"Agent target '{target}': cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up by name
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        sys.modules.pop(module_name, None)
        raise
    except BaseException as exc:  # noqa: BLE001 - user code: any failure to import is a configuration error
        sys.modules.pop(module_name, None)
        raise EvalkitError(
            f"Agent target '{target}': {path} failed to import: {type(exc).__name__}: {exc}"
        ) from None
    return module


def _import_module(target: str, name: str):
    """Import ``package.module``, looking in the current folder too (as ``python -m`` would)."""
    added = False
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)
        added = True
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise EvalkitError(f"Agent target '{target}': module '{name}' not found") from None
        raise EvalkitError(f"Agent target '{target}': module '{name}' failed to import: {exc}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - user code: any failure to import is a configuration error
        raise EvalkitError(
            f"Agent target '{target}': module '{name}' failed to import: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        if added:
            try:
                sys.path.remove(cwd)
            except ValueError:
                pass


# --- span capture -----------------------------------------------------------------------------------------

#: The bucket of the item being run in this context (set around each call, inherited by asyncio tasks).
_CURRENT: contextvars.ContextVar[_Bucket | None] = contextvars.ContextVar("evalkit_agent_spans", default=None)


class _Bucket:
    """The spans of one attempt of one row, and the session id they are stamped with."""

    def __init__(self, session: str):
        self.session = session
        self.spans: list[dict] = []
        self.traces: set[int] = set()
        self.closed = False


class _SpanRouter:
    """A span processor that sends each finished span to the bucket of the item that started it.

    Installed as a subclass that also derives from the SDK's ``SpanProcessor`` (for its other hooks), so
    importing this module does not import OpenTelemetry.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._live: dict[tuple[int, int], _Bucket] = {}  # (trace id, span id) of started spans
        self._traces: dict[int, _Bucket] = {}  # trace id -> bucket, for spans started outside the context

    # SpanProcessor interface
    def on_start(self, span, parent_context=None) -> None:
        context = span.get_span_context()
        bucket = _CURRENT.get()
        with self._lock:
            if bucket is None:
                bucket = self._traces.get(context.trace_id)
            if bucket is None or bucket.closed:
                return
            self._live[(context.trace_id, context.span_id)] = bucket
            self._traces[context.trace_id] = bucket
            bucket.traces.add(context.trace_id)
        span.set_attribute("session.id", bucket.session)

    def on_end(self, span) -> None:
        context = span.get_span_context()
        with self._lock:
            bucket = self._live.pop((context.trace_id, context.span_id), None)
        if bucket is None or bucket.closed:
            return
        document = span_document(span, bucket.session)
        with self._lock:
            if not bucket.closed:
                bucket.spans.append(document)

    # evalkit
    def collect(self, bucket: _Bucket) -> list[dict]:
        """The bucket's finished spans, by start time; the bucket takes no more."""
        with self._lock:
            bucket.closed = True
            spans = list(bucket.spans)
        spans.sort(key=lambda d: d["startTimeUnixNano"])
        return spans

    def forget(self, bucket: _Bucket) -> None:
        with self._lock:
            bucket.closed = True
            for trace_id in bucket.traces:
                if self._traces.get(trace_id) is bucket:
                    del self._traces[trace_id]
            for key in [k for k, b in self._live.items() if b is bucket]:
                del self._live[key]


_ROUTER: _SpanRouter | None = None
_ROUTER_LOCK = threading.Lock()


def _span_router() -> _SpanRouter | None:
    """The process's span router, installed on first use (with an SDK tracer provider if none is set)."""
    global _ROUTER
    with _ROUTER_LOCK:
        if _ROUTER is not None:
            return _ROUTER
        from opentelemetry import trace
        from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):
            trace.set_tracer_provider(TracerProvider(resource=_resource()))
            provider = trace.get_tracer_provider()  # whoever won, if another thread set one meanwhile
        if not hasattr(provider, "add_span_processor"):
            warnings.warn(
                f"the OpenTelemetry tracer provider is a {type(provider).__name__}, which takes no span "
                "processor: the agent's spans cannot be captured",
                RuntimeWarning,
                stacklevel=3,
            )
            return None

        class EvalkitSpanRouter(_SpanRouter, SpanProcessor):
            pass

        router = EvalkitSpanRouter()
        provider.add_span_processor(router)
        _ROUTER = router
        return router


def _resource():
    """The SDK's default resource, named ``evalkit-agent`` unless the environment names the service."""
    from opentelemetry.sdk.resources import Resource

    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    return Resource.create({} if named else {"service.name": "evalkit-agent"})


def span_document(span, session: str | None = None) -> dict:
    """A finished SDK span as a flat span document, the canonical form ``evalkit.spans.load`` produces.

    Hex ids, int nanosecond times, kind and status names, attributes as a plain object (sequences as
    lists), ``parentSpanId`` / ``events`` / ``links`` only when there are some, ``resource`` and ``scope``
    when known. ``session`` (when given) is the ``session.id`` attribute, whatever the agent set.
    """
    context = span.get_span_context()
    doc: dict[str, Any] = {}
    resource = dict(getattr(span.resource, "attributes", None) or {})
    if resource:
        doc["resource"] = {"attributes": {k: _plain(v) for k, v in resource.items()}}
    scope = span.instrumentation_scope
    if scope is not None and scope.name:
        doc["scope"] = {"name": scope.name, **({"version": scope.version} if scope.version else {})}
    doc["traceId"] = f"{context.trace_id:032x}"
    doc["spanId"] = f"{context.span_id:016x}"
    if span.parent is not None:
        doc["parentSpanId"] = f"{span.parent.span_id:016x}"
    doc["name"] = span.name
    doc["kind"] = span.kind.name
    doc["startTimeUnixNano"] = int(span.start_time)
    doc["endTimeUnixNano"] = int(span.end_time if span.end_time is not None else span.start_time)
    attributes = {k: _plain(v) for k, v in (span.attributes or {}).items()}
    if session is not None:
        attributes["session.id"] = session
    doc["attributes"] = attributes
    status = {"code": span.status.status_code.name}
    if span.status.description:
        status["message"] = span.status.description
    doc["status"] = status
    if span.events:
        doc["events"] = [
            {
                "name": e.name,
                "timeUnixNano": int(e.timestamp),
                "attributes": {k: _plain(v) for k, v in (e.attributes or {}).items()},
            }
            for e in span.events
        ]
    if span.links:
        doc["links"] = [
            {
                "traceId": f"{link.context.trace_id:032x}",
                "spanId": f"{link.context.span_id:016x}",
                "attributes": {k: _plain(v) for k, v in (link.attributes or {}).items()},
            }
            for link in span.links
        ]
    return doc


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def write_spans_jsonl(df: pd.DataFrame, path: str | os.PathLike) -> int:
    """Write every row's ``spans`` to ``path`` as JSON lines (atomically); returns how many were written.

    The file is what ``evalkit.spans.load`` reads (the CloudWatch ``aws/spans`` form), one span per line.
    """
    from evalkit.documents.atomic import atomic_write

    count = 0
    with atomic_write(path) as handle:
        for spans in _column(df, "spans", None):
            for doc in spans if isinstance(spans, list) else ():
                handle.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
                count += 1
    return count
