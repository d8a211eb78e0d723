"""Agent targets: resolve what ``run_agent`` is given into an agent, and call it.

A target is one of

* a Python callable ``fn(prompt, history)`` (sync or async) returning a string, or a dict with ``response``
  and optionally ``citations``, ``retrieval_executions`` and ``tool_calls`` (the upstream diagnostics
  shapes); given an ``allowed_tools`` keyword when it accepts one;
* ``"path/to/agent.py:function"`` or ``"package.module:function"``: the same, imported;
* ``"http(s)://host/v1"`` (optionally ``#model``): an OpenAI-compatible chat-completions endpoint.

Why here: finding and importing the agent (with a hint for a misspelt function) and talking to it (event
loop for async functions, the OpenAI client for endpoints) are independent of how rows are scheduled
(``evalkit.agents.run``) and of how a call's failures become error codes (``evalkit.agents.calls``).
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import importlib
import importlib.util
import inspect
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit.documents.json_input import JsonInputError, parse_json_text
from evalkit.documents.redaction import redact_url, register_secret, register_url_credentials
from evalkit.errors import EnvironmentConfigError, EvalkitError

__all__ = ["NO_KEY", "Agent", "Unparseable", "resolve_target"]

log = logging.getLogger("evalkit.agents")

#: The API key sent to an HTTP agent when ``AGENT_API_KEY`` is not set (the openai client insists on one;
#: local agents ignore it, and one that does not answers 401, which names the variable).
NO_KEY = "not-set"


class Unparseable(Exception):
    """The agent answered, but not with something evalkit can read."""


class Agent:
    """Calls a target as ``agent(prompt, history, allowed_tools)``; returns what the target returned."""

    def __call__(self, prompt: str, history: list[dict], allowed_tools: list | None) -> Any:
        raise NotImplementedError


class _FunctionAgent(Agent):
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


class _HttpAgent(Agent):
    """An OpenAI-compatible chat-completions endpoint; the thread's history is sent as the messages.

    Model: the URL's ``#model`` fragment, else ``AGENT_MODEL``. Key: ``AGENT_API_KEY`` (registered for
    redaction, as are credentials in the URL's user part, which no message shows). The client does not
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
                f"Agent target '{redact_url(url)}': no model name. Set AGENT_MODEL or add it to the URL as '#model'."
            )
        key = os.environ.get("AGENT_API_KEY")
        register_secret(key)
        register_url_credentials(base)
        self.hint = "" if key else " (AGENT_API_KEY is not set)"
        log.debug("agent: OpenAI-compatible %s model %s", redact_url(base), self.model)
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
            body = parse_json_text(text, limit=None)  # the HTTP client has read it whole already
        except JsonInputError:
            raise Unparseable(f"the body is not JSON: {_clip(text)!r}") from None
        try:
            message = body["choices"][0]["message"]
            content = message["content"]
        except (KeyError, IndexError, TypeError):
            raise Unparseable(f"no choices[0].message.content in the body: {_clip(text)!r}") from None
        if not isinstance(content, str):
            raise Unparseable(f"choices[0].message.content is {type(content).__name__}, not text")
        answer: dict[str, Any] = {"response": content}
        citations = message.get("citations", body.get("citations")) if isinstance(message, dict) else None
        if isinstance(citations, list):
            answer["citations"] = citations
        return answer

    def close(self) -> None:
        self.client.close()


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def resolve_target(target: Callable | str, *, timeout: float = 120.0) -> Agent:
    """The agent for ``target``: a callable, ``file.py:function``, ``package.module:function`` or a URL.

    Raises ``EvalkitError`` naming the target when the file, module or function cannot be found.
    """
    if isinstance(target, Agent):
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
