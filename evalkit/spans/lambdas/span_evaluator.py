"""A span evaluator: a Lambda handler, the evaluation level it is registered at, and how one is loaded.

A span evaluator is a folder ``custom-evaluators/<name>/`` holding its Lambda handler: ``<name>.py`` or
``lambda_function.py`` (AWS's sample layout) defining ``lambda_handler(event, context)`` or ``handler``, or
the ``module.function`` its ``handler`` option names (``handler_location``). ``load_span_evaluator`` imports
it the way the Lambda runtime does (its folder on ``sys.path``, so it can import modules deployed beside it)
and checks the name and level rules AgentCore applies to a registration. Nothing here calls the handler: see ``invocation`` and ``lambda_runner``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit.documents.json_input import quote
from evalkit.errors import EvaluatorConfigError
from evalkit.spans.lambdas.handler_location import DEFAULT_FUNCTION, find_handler
from evalkit.spans.lambdas.packaging import shared_modules_importable
from evalkit.spans.lambdas.passing_rule import declared_labels

LEVELS = ("TRACE", "TOOL_CALL", "SESSION")
DEFAULT_LEVEL = "TRACE"
NAME_PATTERN = re.compile(r"[a-zA-Z][a-zA-Z0-9_]{0,47}")


class SpanEvaluator:
    """A Lambda-style evaluator: a handler ``(event, context)`` and the level it is registered at.

    ``function`` is the handler's name in its module (``lambda_handler`` unless configured): worker
    processes import ``path`` and call that function, and messages name it. ``evaluator_id`` is
    ``<name>-<10 characters>``, as AgentCore ids look, derived from the name and the level so that it is
    stable across runs (and differs per level, as separate registrations do). ``passing_labels`` are the
    labels that count as passing (the module's ``PASSING_LABELS``; None: the value rule, see
    ``passing_rule``).
    """

    def __init__(
        self,
        name: str,
        handler: Callable[[dict, Any], Any],
        *,
        level: str = DEFAULT_LEVEL,
        path: str | os.PathLike | None = None,
        module: Any = None,
        function: str = DEFAULT_FUNCTION,
        passing_labels: frozenset[str] | None = None,
    ):
        check_name(name)
        if not callable(handler):
            raise EvaluatorConfigError(f"span evaluator '{name}': the handler is not callable")
        self.name = name
        self.handler = handler
        self.level = _level(level, f"span evaluator '{name}'")
        self.path = Path(path) if path is not None else None
        self.module = module
        self.function = function
        self.passing_labels = frozenset(passing_labels) if passing_labels is not None else None
        digest = hashlib.sha256(f"{name}/{self.level}".encode()).hexdigest()
        self.evaluator_id = f"{name}-{digest[:10]}"

    def with_level(self, level: str) -> SpanEvaluator:
        """The same handler registered at another level (AgentCore registers one evaluator per level)."""
        return SpanEvaluator(
            self.name,
            self.handler,
            level=level,
            path=self.path,
            module=self.module,
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
) -> SpanEvaluator:
    """Import the handler of ``<custom_dir>/<name>/`` (default ``./custom-evaluators``) as a span evaluator.

    The handler is the ``handler`` argument, else ``options["handler"]`` (``"module.function"`` or
    ``"function"``, as Lambda's handler setting), else found without configuration: ``<name>.py`` then
    ``lambda_function.py``, function ``lambda_handler`` then ``handler`` (see ``handler_location``).
    The level is the ``level`` argument, else ``options["level"]``, else the module's ``EVALUATION_LEVEL``,
    else TRACE; the passing labels are the module's ``PASSING_LABELS`` (if any). The evaluator's folder is on
    ``sys.path`` while it is imported, as the Lambda task root is, so it can import modules deployed beside it.
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
    module = _import(name, path)
    function = getattr(module, location.function, None)
    if function is None:
        raise EvaluatorConfigError(
            f"span evaluator '{name}': {path} defines no {location.function}(event, context) once imported"
        )
    if not callable(function):
        raise EvaluatorConfigError(
            f"span evaluator '{name}': {location.function} in {path} is not a function (Lambda calls "
            f"{location.handler}(event, context))"
        )
    chosen = (
        level
        if level is not None
        else options.get("level", getattr(module, "EVALUATION_LEVEL", DEFAULT_LEVEL))
    )
    source = "the level option" if level is not None or "level" in options else f"EVALUATION_LEVEL in {path}"
    return SpanEvaluator(
        name,
        function,
        level=_level(chosen, f"span evaluator '{name}' ({source})"),
        path=path,
        module=module,
        function=location.function,
        passing_labels=declared_labels(module, f"span evaluator '{name}' ({path})"),
    )


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
