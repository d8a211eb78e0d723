"""A span evaluator: a Lambda handler, the evaluation level it is registered at, and how one is loaded.

A span evaluator is a folder ``custom-evaluators/<name>/`` holding its Lambda handler: ``<name>.py`` or
``lambda_function.py`` (AWS's sample layout) defining ``lambda_handler(event, context)`` or ``handler``, or
the ``module.function`` its ``handler`` option names (``handler_location``). ``load_span_evaluator`` checks
the name and level rules AgentCore applies to a registration. The module is imported the way the Lambda
runtime does (its folder on ``sys.path``, so it can import modules deployed beside it), but not in evalkit's
process: its top-level code is user code like the handler (an ``os._exit``, a patch of evalkit's response
check, an endless loop), so a worker of the runner (``usercode.Worker.spawn``, with a time limit) imports it
and answers what evalkit needs to know: that the handler is there and callable, its ``EVALUATION_LEVEL`` and
``PASSING_LABELS``. The calls then run in workers too (``evaluator_workers``). Only ``SpanEvaluator.handler``
and ``.module`` import the module into this process, on first use: ``evaluate_spans(isolate=False)`` (a
debugger's path) and a notebook calling the handler itself. Nothing here calls the handler: see
``invocation`` and ``evaluator_workers``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit.documents.json_input import quote
from evalkit.errors import EvaluatorConfigError, EvaluatorCrashed
from evalkit.spans.lambdas.handler_location import DEFAULT_FUNCTION, find_handler
from evalkit.spans.lambdas.packaging import shared_modules_importable
from evalkit.spans.lambdas.passing_rule import declared_labels

LEVELS = ("TRACE", "TOOL_CALL", "SESSION")
DEFAULT_LEVEL = "TRACE"
NAME_PATTERN = re.compile(r"[a-zA-Z][a-zA-Z0-9_]{0,47}")
#: How long a worker may take to import an evaluator's module for ``load_span_evaluator`` (seconds).
LOAD_LIMIT = 60.0


class SpanEvaluator:
    """A Lambda-style evaluator: a handler ``(event, context)`` and the level it is registered at.

    ``function`` is the handler's name in its module (``lambda_handler`` unless configured): worker
    processes import ``path`` and call that function, and messages name it. ``evaluator_id`` is
    ``<name>-<10 characters>``, as AgentCore ids look, derived from the name and the level so that it is
    stable across runs (and differs per level, as separate registrations do). ``passing_labels`` are the
    labels that count as passing (the module's ``PASSING_LABELS``; None: the value rule, see
    ``passing_rule``). Loaded from a file (``handler=None`` with a ``path``), ``handler`` and ``module``
    import the module into this process when first read (see the module docstring).
    """

    def __init__(
        self,
        name: str,
        handler: Callable[[dict, Any], Any] | None,
        *,
        level: str = DEFAULT_LEVEL,
        path: str | os.PathLike | None = None,
        module: Any = None,
        function: str = DEFAULT_FUNCTION,
        passing_labels: frozenset[str] | None = None,
    ):
        check_name(name)
        if not callable(handler) and (handler is not None or path is None):
            raise EvaluatorConfigError(f"span evaluator '{name}': the handler is not callable")
        self.name = name
        self._handler = handler
        self.level = _level(level, f"span evaluator '{name}'")
        self.path = Path(path) if path is not None else None
        self._module = module
        self.function = function
        self.passing_labels = frozenset(passing_labels) if passing_labels is not None else None
        digest = hashlib.sha256(f"{name}/{self.level}".encode()).hexdigest()
        self.evaluator_id = f"{name}-{digest[:10]}"

    @property
    def module(self) -> Any:
        """The handler's module, imported into this process on first use when the evaluator was loaded from
        its file (None for a handler given as a function)."""
        if self._module is None and self._handler is None and self.path is not None:
            self._module = _import(self.name, self.path)
        return self._module

    @property
    def handler(self) -> Callable[[dict, Any], Any]:
        """The handler function, imported into this process on first use when loaded from its file."""
        if self._handler is None:
            found = getattr(self.module, self.function, None)
            if not callable(found):
                raise EvaluatorConfigError(
                    f"span evaluator '{self.name}': {self.path} defines no {self.function}(event, context) "
                    "once imported in this process"
                )
            self._handler = found
        return self._handler

    def with_level(self, level: str) -> SpanEvaluator:
        """The same handler registered at another level (AgentCore registers one evaluator per level)."""
        return SpanEvaluator(
            self.name,
            self._handler,
            level=level,
            path=self.path,
            module=self._module,
            function=self.function,
            passing_labels=self.passing_labels,
        )

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return f"SpanEvaluator({self.name!r}, level={self.level!r}{where})"


def check_name(name: Any) -> None:
    """Refuse a name AgentCore would refuse, before any file is looked for under it (a 300-character name is
    longer than a file name may be); the name is quoted cut short."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        shown = quote(name) if isinstance(name, str) else repr(name)
        raise EvaluatorConfigError(
            f"span evaluator name {shown} is not valid: AgentCore names start with a letter and hold "
            "at most 48 letters, digits and underscores"
        )


def _level(value: Any, who: str) -> str:
    level = value.upper() if isinstance(value, str) else value
    if level not in LEVELS:
        raise EvaluatorConfigError(f"{who}: evaluation level {value!r} is not one of {', '.join(LEVELS)}")
    return level


def load_span_evaluator(
    name: str,
    custom_dir: str | os.PathLike | None = None,
    *,
    level: str | None = None,
    options: dict | None = None,
    handler: str | None = None,
    load_timeout: float | None = None,
) -> SpanEvaluator:
    """The span evaluator of ``<custom_dir>/<name>/`` (default ``./custom-evaluators``), its module imported in
    a worker process (see the module docstring), which must answer within ``load_timeout`` seconds (default
    ``LOAD_LIMIT``).

    The handler is the ``handler`` argument, else ``options["handler"]`` (``"module.function"`` or
    ``"function"``, as Lambda's handler setting), else found without configuration: ``<name>.py`` then
    ``lambda_function.py``, function ``lambda_handler`` then ``handler`` (see ``handler_location``).
    The level is the ``level`` argument, else ``options["level"]``, else the module's ``EVALUATION_LEVEL``,
    else TRACE; the passing labels are the module's ``PASSING_LABELS`` (if any). The evaluator's folder is on
    ``sys.path`` while it is imported, as the Lambda task root is, so it can import modules deployed beside it.
    A module that fails to import, exits or overruns ``load_timeout`` while importing is an
    ``EvaluatorConfigError`` naming the evaluator and its file.
    """
    options = dict(options or {})
    unknown = sorted(set(options) - {"level", "handler"})
    if unknown:
        raise EvaluatorConfigError(
            f"span evaluator '{name}': unknown option(s) {', '.join(unknown)} (known: level, handler)"
        )
    check_name(name)
    root = Path(custom_dir) if custom_dir is not None else Path.cwd() / "custom-evaluators"
    folder = root / name
    if not folder.is_dir():
        raise EvaluatorConfigError(
            f"span evaluator '{name}' not found: there is no folder {folder} (a span evaluator is "
            f"{root}/<name>/<name>.py or {root}/<name>/lambda_function.py defining lambda_handler(event, "
            "context) or handler(event, context))"
        )
    location = find_handler(name, folder, handler if handler is not None else options.get("handler"))
    path = location.path
    limit = LOAD_LIMIT if load_timeout is None else load_timeout
    facts = _facts_from_worker(name, path, location.function, location.handler, limit)
    if "error" in facts:
        raise EvaluatorConfigError(facts["error"])
    if level is not None or "level" in options:
        chosen = _level(
            level if level is not None else options["level"], f"span evaluator '{name}' (the level option)"
        )
    elif "level_error" in facts:
        raise EvaluatorConfigError(facts["level_error"])
    else:
        chosen = _level(facts.get("level"), f"span evaluator '{name}' (EVALUATION_LEVEL in {path})")
    if "labels_error" in facts:
        raise EvaluatorConfigError(facts["labels_error"])
    labels = facts.get("passing_labels")
    if labels is not None and not (
        isinstance(labels, list) and labels and all(isinstance(x, str) for x in labels)
    ):
        raise EvaluatorConfigError(f"span evaluator '{name}': its worker answered passing labels {labels!r}")
    return SpanEvaluator(
        name, None, level=chosen, path=path, function=location.function,
        passing_labels=frozenset(labels) if labels is not None else None,
    )  # fmt: skip


def _facts_from_worker(name: str, path: Path, function: str, handler: str, limit: float) -> dict:
    """What a worker that imported the module answers (``module_facts``): the parent's checks use it. What
    the module printed is passed on (redacted) only when it failed to load: the calls' worker prints it."""
    from evalkit.documents.redaction import redact
    from evalkit.usercode.worker import CallTimedOut, Worker

    target = "evalkit.spans.lambdas.span_evaluator:module_facts"
    started = time.monotonic()
    with Worker.spawn(name, target, name, str(path), function, handler) as worker:
        try:
            worker.wait_ready(limit)
            facts = worker.call(b"", limit)
        except (EvaluatorCrashed, CallTimedOut) as exc:
            logs = worker.logs()
            if logs.text or logs.cut:
                sys.stderr.write(redact(logs.shown()))
                sys.stderr.flush()
            if isinstance(exc, EvaluatorCrashed) and exc.how is not None:
                raise EvaluatorConfigError(
                    f"span evaluator '{name}': {path} failed to import: its process {exc.how} while importing "
                    "(os._exit or a signal in the module's top-level code)"
                ) from None
            if time.monotonic() - started < limit:  # the worker could not even start, or answered nonsense
                raise EvaluatorConfigError(
                    f"span evaluator '{name}': {path} failed to import: {exc}"
                ) from None
            raise EvaluatorConfigError(
                f"span evaluator '{name}': {path} did not finish importing within {limit:g} s (its worker "
                "process was killed; look for a loop or a wait in the module's top-level code)"
            ) from None
    if not isinstance(facts, dict):
        raise EvaluatorConfigError(f"span evaluator '{name}': its worker answered {facts!r}, not its facts")
    return facts


def module_facts(name: str, path: str, function: str, handler: str):
    """In a worker (``Worker.spawn``): import the module at ``path`` and return the request handler that
    answers what ``load_span_evaluator`` checks: ``{"error": message}`` when the module or its handler
    cannot be used, else ``level`` (or ``level_error``) and ``passing_labels`` (or ``labels_error``)."""
    source = Path(path)
    facts: dict[str, Any] = {}
    try:
        module = _import(name, source)
        found = getattr(module, function, None)
        if found is None:
            raise EvaluatorConfigError(
                f"span evaluator '{name}': {source} defines no {function}(event, context) once imported"
            )
        if not callable(found):
            raise EvaluatorConfigError(
                f"span evaluator '{name}': {function} in {source} is not a function (Lambda calls "
                f"{handler}(event, context))"
            )
        try:
            facts["level"] = _level(
                getattr(module, "EVALUATION_LEVEL", DEFAULT_LEVEL),
                f"span evaluator '{name}' (EVALUATION_LEVEL in {source})",
            )
        except EvaluatorConfigError as exc:
            facts["level_error"] = str(exc)
        try:
            labels = declared_labels(module, f"span evaluator '{name}' ({source})")
            facts["passing_labels"] = sorted(labels) if labels is not None else None
        except EvaluatorConfigError as exc:
            facts["labels_error"] = str(exc)
    except EvaluatorConfigError as exc:
        facts = {"error": str(exc)}
    except BaseException as exc:  # noqa: BLE001 - a KeyboardInterrupt of its own while importing
        facts = {"error": f"span evaluator '{name}': {source} failed to import: {type(exc).__name__}: {exc}"}
    return lambda request: facts


def import_evaluator(name: str, path: Path):
    """Import the evaluator module at ``path`` as the Lambda runtime would (its folder on ``sys.path``); an
    import failure is an ``EvaluatorConfigError``. Worker processes load their evaluator with it."""
    return _import(name, path)


def _import(name: str, path: Path):
    module_name = f"evalkit_span_evaluators.{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EvaluatorConfigError(f"span evaluator '{name}': cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up by name
    folder = str(path.parent)
    sys.path.insert(0, folder)
    try:
        with shared_modules_importable(path):  # custom-evaluators/_shared, as at the zip's root
            spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise EvaluatorConfigError(
            f"span evaluator '{name}': {path} failed to import: SyntaxError: {exc.msg} (line {exc.lineno})"
        ) from None
    except KeyboardInterrupt:
        sys.modules.pop(module_name, None)
        raise
    except BaseException as exc:  # noqa: BLE001 - user code: any failure to import is a configuration error
        sys.modules.pop(module_name, None)
        raise EvaluatorConfigError(
            f"span evaluator '{name}': {path} failed to import: "
            f"{type(exc).__name__}: {exc}{source_line(exc, path)}"
        ) from None
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    return module


def source_line(exc: BaseException, path: Path | None) -> str:
    """`` (line N)`` of the deepest frame of ``exc`` inside the evaluator's file, if any."""
    if path is None:
        return ""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return f" (line {frames[-1].lineno})" if frames else ""
