"""Custom evaluators from ``custom-evaluators/<name>/`` and ad-hoc Python callables.

A folder ``<name>/`` holding ``<name>.py`` is a code-only evaluator; with ``<name>.prompty`` beside it, an
LLM judge. The module's first top-level class is instantiated with keyword arguments ``threshold`` and
``options`` (plus ``model_config`` for LLM judges), once per distinct configuration, and called per row
with ``prompt``, ``response``, ``expected_response`` and ``context`` as strings; an LLM judge also gets
``tool_calls`` and ``tool_definitions`` where the row has them (``tool_inputs``).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import inspect
import json
import logging
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.documents.evaluator_maps import BUILTIN_NAMES
from evalkit.errors import EvaluatorConfigError
from evalkit.evaluators.base import verdict_frame
from evalkit.evaluators.custom.contract import (
    ContractError,
    describe_exception,
    read_score,
    signature_message,
)
from evalkit.evaluators.custom.import_limit import UnloadedEvaluator, import_timeout_message, import_within
from evalkit.evaluators.custom.prompty_checks import check_template, warn_missing_prompty
from evalkit.evaluators.custom.span_docs import SpanDocumentEvaluator
from evalkit.evaluators.custom.time_limit import DEFAULT_TIMEOUT, own_failure, run_with_time_limit
from evalkit.evaluators.custom.tool_inputs import tool_inputs
from evalkit.evaluators.custom.worker_process import can_fork, run_in_workers
from evalkit.evaluators.llm_judges.builtin import LLMJudge
from evalkit.evaluators.names import default_custom_dir
from evalkit.judges.judge_answers import refusal, unread_answer
from evalkit.judges.offline import import_promptflow_quietly
from evalkit.judges.pool import JudgeFailure, classify, find_error
from evalkit.judges.promptflow_calls import fold, promptflow_call
from evalkit.judges.promptflow_models import JudgeModel, judge_model
from evalkit.judges.prompty import load as load_prompty
from evalkit.judges.prompty import neutralise_role_markers

log = logging.getLogger("evalkit.custom")

_INPUTS = ("prompt", "response", "expected_response", "context")
#: Errors a judge wrapper raises when it cannot read the model's answer (see ``CustomJudge``).
_READING_ERRORS = (KeyError, IndexError, AttributeError, ValueError, TypeError)
#: What to check when a custom judge's answer cannot be read (the seed's troubleshooting entry for "could not
#: parse score").
UNPARSEABLE_HINT = (
    "Check that the .prompty has response_format: {type: json_object} (or a JSON schema) and asks for "
    '{"score": ..., "reason": ...}.'
)


class RowEvaluator:
    """Runs a per-row Python callable over the rows that ask for it, under the result contract."""

    has_threshold = True
    requires: tuple[str, ...] = ()

    is_llm = False

    def __init__(self, name: str, *, default_threshold: float = 1):
        self.name = self.key = self.score_field = name
        self.default_threshold = default_threshold
        #: seconds one call may take before that row becomes an ``evaluatorTimeout`` error (None: no limit)
        self.timeout: float | None = DEFAULT_TIMEOUT

    def make_callable(self, threshold: float, options: dict) -> Callable[..., Any]:
        raise NotImplementedError

    def score(self, rows, configs: list[dict]):
        n = len(rows)
        scores = np.full(n, np.nan)
        thresholds = np.empty(n)
        reasons: list[Any] = [None] * n
        errors: list[Any] = [None] * n
        codes: list[Any] = [None] * n
        columns = [rows[c].tolist() for c in _INPUTS]
        order: list[int] = []  # the rows to call, grouped by configuration, and the callable of each
        fns: list[Any] = []
        for positions, config in _group_configs(configs):
            threshold = config.get("threshold", self.default_threshold)
            thresholds[positions] = threshold
            try:
                fn = self.make_callable(threshold, config.get("options") or {})
            except TypeError as exc:
                _fill(
                    errors,
                    codes,
                    positions,
                    f"constructor failed: {signature_message(exc)}",
                    "evaluatorLoadError",
                )
                continue
            except BaseException as exc:  # noqa: BLE001 - user code: any failure is an error result
                if not own_failure(exc):
                    raise
                _fill(
                    errors,
                    codes,
                    positions,
                    f"constructor failed: {describe_exception(exc)}",
                    "evaluatorLoadError",
                )
                continue
            order.extend(positions.tolist())
            fns.extend([fn] * len(positions))
        self._run(fns, order, columns, (scores, reasons, errors, codes), rows.index)
        return verdict_frame(rows.index, scores, thresholds, reasons, errors, codes)

    def _run(self, fns, order, columns, outputs, labels=None) -> None:
        """Call every row: here (no limit), or under the time limit in a worker process (``worker_process``)
        or, where forking is unsafe, in a watched thread (``time_limit``)."""

        def loop(start, end, buffers, progress, stop):
            self._rows(fns, order, columns, start, end, buffers, progress, stop)

        if not self.timeout or not order:
            loop(0, len(order), outputs, [0], [False])
        elif can_fork():
            run_in_workers(loop, order, outputs, self.timeout, self.name, labels)
        else:
            run_with_time_limit(loop, order, outputs, self.timeout, self.name)

    @staticmethod
    def _rows(fns, order, columns, start, end, outputs, progress, stop) -> None:
        """Call rows ``order[start:end]``; ``progress[0]`` is the one being called (see ``time_limit``)."""
        prompts, responses, expecteds, contexts = columns
        scores, reasons, errors, codes = outputs
        for k in range(start, end):
            if stop[0]:
                return
            progress[0] = k
            i = order[k]
            fn = fns[k]
            try:
                out = fn(
                    prompt=prompts[i],
                    response=responses[i],
                    expected_response=expecteds[i],
                    context=contexts[i],
                )
            except TypeError as exc:
                errors[i], codes[i] = signature_message(exc), "evaluatorError"
                continue
            except BaseException as exc:  # noqa: BLE001 - user code: anything it raises is an error result
                if not own_failure(exc):
                    raise
                errors[i], codes[i] = describe_exception(exc), "evaluatorError"
                continue
            # Fast path for the common well-formed result; everything else goes through the contract.
            if type(out) is dict and "error" not in out and out.get("result") != "error":
                value = out.get("score")
                kind = type(value)
                reason = out.get("reason")
                if (
                    (kind is float or kind is int)
                    and value == value
                    and abs(value) != float("inf")
                    and (reason is None or type(reason) is str)
                ):
                    try:
                        scores[i] = value
                    except OverflowError:  # an int beyond the float range: the contract explains it
                        pass
                    else:
                        reasons[i] = reason or ""
                        continue
            try:
                scores[i], reasons[i] = read_score(out, llm=False)
            except ContractError as exc:
                errors[i], codes[i] = str(exc), exc.code


def _fill(errors, codes, positions, message, code) -> None:
    for i in positions:
        errors[i], codes[i] = message, code


def _group_configs(configs: list[dict]) -> list[tuple[np.ndarray, dict]]:
    """Positions of rows sharing the same configuration (one instance per distinct configuration)."""
    groups: dict[Any, list[int]] = {}
    firsts: dict[Any, dict] = {}
    by_id: dict[int, Any] = {}
    for i, config in enumerate(configs):
        key = by_id.get(id(config))
        if key is None:
            key = json.dumps(config, sort_keys=True, default=repr)
            by_id[id(config)] = key
        groups.setdefault(key, []).append(i)
        firsts.setdefault(key, config)
    return [(np.asarray(pos), firsts[key]) for key, pos in groups.items()]


class CustomEvaluator(RowEvaluator):
    """A code-only ``custom-evaluators/<name>/<name>.py`` evaluator (no ``.prompty``)."""

    def __init__(self, name: str, folder: Path, cls: type):
        super().__init__(name, default_threshold=1)
        self.folder = folder
        self.cls = cls

    def make_callable(self, threshold, options):
        return self.cls(threshold=threshold, options=options)


class CallableEvaluator(RowEvaluator):
    """An ad-hoc evaluator: a plain function ``fn(*, prompt, response, expected_response, context)``."""

    def __init__(self, name: str, fn: Callable[..., Any], threshold: float = 1):
        super().__init__(name, default_threshold=threshold)
        self.fn = fn

    def make_callable(self, threshold, options):
        return self.fn


class CustomJudge(LLMJudge):
    """A custom LLM judge (``<name>.py`` + ``<name>.prompty``): its wrapper runs the ``.prompty`` itself;
    evalkit calls it per row through the run's judge pool (concurrency, retries, cache)."""

    def __init__(self, name: str, folder: Path, cls: type):
        super().__init__()
        self.name = self.key = self.score_field = name
        self.folder = folder
        self.cls = cls
        self.identity = f"custom:{name}@{_fingerprint(folder, name)}"
        self._instances: dict[str, Any] = {}
        self._model: JudgeModel | None = None

    def _instance(self, config: dict):
        """One wrapper per distinct configuration; a constructor failure is kept and reported per row."""
        key = json.dumps(config, sort_keys=True, default=repr)
        if key not in self._instances:
            try:
                with judge_model(self._judge_model()):  # the .prompty's own connection / model replaced
                    self._instances[key] = self.cls(
                        threshold=config.get("threshold", self.default_threshold),
                        options=config.get("options") or {},
                        model_config=dict(self.model_config or {}),
                    )
            except TypeError as exc:
                self._instances[key] = JudgeFailure(
                    f"constructor failed: {signature_message(exc)}", "evaluatorLoadError"
                )
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - user code
                self._instances[key] = JudgeFailure(
                    f"constructor failed: {describe_exception(exc)}", "evaluatorLoadError"
                )
        return self._instances[key]

    def _judge_model(self) -> JudgeModel:
        """evalkit's judge model for this evaluator's prompties (``promptflow_models``): one per run."""
        if self._model is None or self._model.config != (self.model_config or {}):
            self._model = JudgeModel(dict(self.model_config or {}), self.name)
        return self._model

    def make_call(self, row, config):
        instance = self._instance(config)
        # The wrapper substitutes these into its .prompty: a role line in the agent's response (or in any
        # input) must not start a message of its own, whichever renderer the wrapper uses.
        inputs = {k: neutralise_role_markers(row[k]) for k in _INPUTS}
        inputs.update(neutralise_role_markers(tool_inputs(row)))

        def run() -> dict:
            if isinstance(instance, JudgeFailure):
                raise instance
            # promptflow's own retries off: one pool attempt is one request; its log lines come back here.
            with promptflow_call() as heard, judge_model(self._judge_model()) as answers:
                try:
                    return instance(**inputs)
                except Exception as exc:  # noqa: BLE001 - user code: classified, with what promptflow said
                    failure = fold(self._failure(exc, answers), heard)
                    if failure is exc:
                        raise
                    raise failure from exc

        return run

    def _failure(self, exc: Exception, answers: list) -> JudgeFailure:
        """What a wrapper's exception means: an unreadable answer, a signature mistake, or (``classify``) an
        HTTP status, a timeout, a connection error."""
        if isinstance(exc, JudgeFailure):
            return exc
        # Whatever the response format: promptflow parsing a json_object answer, the wrapper's own
        # json.loads of a text answer, or the wrapper reading a score the answer does not hold.
        garbled = find_error(exc, json.JSONDecodeError)
        if garbled is not None:
            return JudgeFailure(
                f"could not parse score: the judge's answer is not well-formed JSON ({garbled}). "
                f"{UNPARSEABLE_HINT}",
                "judgeOutputUnparseable",
            )
        if isinstance(exc, _READING_ERRORS) and self._reading_the_answer(exc):
            return JudgeFailure(
                f"could not parse score: {self.name}.py could not read the judge's answer "
                f"({type(exc).__name__}: {exc}){unread_answer(self.name, answers, UNPARSEABLE_HINT)}",
                "judgeOutputUnparseable",
            )
        if isinstance(exc, TypeError):
            return JudgeFailure(signature_message(exc))
        return classify(exc)

    def _reading_the_answer(self, exc: BaseException) -> bool:
        """Whether ``exc`` was raised by the wrapper's own code (its innermost frame is in ``<name>.py``),
        not by a library it called and not by the call itself (a signature mistake): a KeyError, TypeError,
        IndexError, AttributeError or ValueError there is the wrapper failing to read the judge's answer
        (``data["score"]`` on an answer without one, on ``null`` or a list; ``int("five")``)."""
        tb = exc.__traceback__
        depth, last = 0, None
        while tb is not None:
            depth, last = depth + 1, tb
            tb = tb.tb_next
        wrapper = (self.folder / f"{self.name}.py").resolve()
        return depth > 1 and Path(last.tb_frame.f_code.co_filename).resolve() == wrapper

    def cache_inputs(self, row, config):
        return {**{k: row[k] for k in _INPUTS}, **tool_inputs(row), "options": config.get("options") or {}}

    def model_parameters(self) -> dict:
        return load_prompty(self.folder / f"{self.name}.prompty").parameters

    def read(self, value):
        try:
            return read_score(value, llm=True)
        except ContractError as exc:
            message = str(exc) if exc.code == "evaluatorError" else refusal(self.name, value, str(exc))
            raise JudgeFailure(message, exc.code) from None


def load_custom(name: str, folder: Path, where: str = "", import_timeout: float | None = DEFAULT_TIMEOUT):
    """Import ``folder/<name>/<name>.py`` (within ``import_timeout`` seconds, see ``import_limit``) and return
    its evaluator, or raise ``EvaluatorConfigError``."""
    home = folder / name
    if not home.is_dir():
        raise EvaluatorConfigError(_unknown_message(name, folder, where))
    module_path = home / f"{name}.py"
    sample = (home / "lambda_function.py").is_file()  # AWS's sample layout: a Lambda (span) evaluator
    if not module_path.is_file() and (home / f"{name}.json").is_file():
        # An LLM-as-judge span evaluator (AgentCore's CreateEvaluator configuration as a file).
        from evalkit.spans.llm_judges.custom_llm_judges import load_llm_judge

        log.debug("custom evaluator %r: %s (LLM-as-judge span evaluator)", name, home / f"{name}.json")
        return SpanDocumentEvaluator(load_llm_judge(name, home / f"{name}.json"))
    if not module_path.is_file() and not sample:
        raise EvaluatorConfigError(
            f"Custom evaluator '{name}' is missing required file '{name}.py' (looked for {module_path}). "
            f"Every evaluator folder must contain {name}.py; a {name}.prompty is needed only for LLM judges."
        )
    if not module_path.is_file() or _defines_lambda_handler(module_path):
        # Lazy: the span runtime costs ~0.1 s of imports (HTTP, ssl), paid only when a span evaluator is named.
        from evalkit.spans import load_span_evaluator

        log.debug("custom evaluator %r: %s (span evaluator)", name, module_path)
        return SpanDocumentEvaluator(load_span_evaluator(name, folder))
    is_llm = (home / f"{name}.prompty").is_file()
    log.debug("custom evaluator %r: %s (%s)", name, module_path, "LLM judge" if is_llm else "code-only")
    started = time.perf_counter()
    if is_llm:  # its module imports promptflow: first, quietly (no exporter folder in the temp folder)
        import_promptflow_quietly()
    cls = _first_class(name, module_path, import_timeout)
    if isinstance(cls, UnloadedEvaluator):
        return cls
    log.debug(
        "custom evaluator %r: imported %s.%s in %.1f ms",
        name,
        name,
        cls.__name__,
        (time.perf_counter() - started) * 1000,
    )
    if is_llm:
        check_template(name, home / f"{name}.prompty")
        return CustomJudge(name, home, cls)
    warn_missing_prompty(name, module_path)
    return CustomEvaluator(name, home, cls)


def _defines_lambda_handler(path: Path) -> bool:
    """An AgentCore-style span evaluator: a module-level ``def lambda_handler(``."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^def lambda_handler\(", text, re.MULTILINE) is not None


def _unknown_message(name: str, folder: Path, where: str) -> str:
    place = f" ({where})" if where else ""
    message = (
        f"Unknown evaluator '{name}'{place}: no folder {folder / name}. Check that the folder is at "
        f"<your_project>/custom-evaluators/{name}/, that the file basenames match the folder name, and that "
        "you run from the project root (or pass --custom-dir)."
    )
    if folder.resolve() != default_custom_dir().resolve():
        message += (
            f" Only {folder} was searched: --custom-dir (custom_dir=) replaces the project's custom-evaluators/ "
            "folder, it is not added to it."
        )
    if folder.is_dir():
        near = [p.name for p in folder.iterdir() if p.is_dir() and p.name.casefold() == name.casefold()]
        if near:
            message += f" A folder '{near[0]}' exists: names must match exactly, including case."
    builtin = difflib.get_close_matches(name, list(BUILTIN_NAMES), n=1, cutoff=0.8)
    if builtin:
        message += f" Did you mean the built-in evaluator '{builtin[0]}'?"
    return message


def _first_class(name: str, path: Path, import_timeout: float | None):
    """The module's first class, or an ``UnloadedEvaluator`` when it did not finish importing in time."""
    module_name = f"evalkit_custom_{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EvaluatorConfigError(f"Custom evaluator '{name}' failed to import: cannot read {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        finished, failure = import_within(lambda: spec.loader.exec_module(module), import_timeout, name)
    except BaseException:  # Ctrl-C while importing
        sys.modules.pop(module_name, None)
        raise
    if not finished:
        sys.modules.pop(module_name, None)
        return UnloadedEvaluator(name, import_timeout_message(name, path, import_timeout))
    try:
        if failure is not None:
            raise failure
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise EvaluatorConfigError(
            f"Custom evaluator '{name}' failed to import: SyntaxError: {exc.msg} ({path}, line {exc.lineno})"
        ) from None
    except BaseException as exc:  # noqa: BLE001 - any import failure is a configuration error
        sys.modules.pop(module_name, None)
        raise EvaluatorConfigError(
            f"Custom evaluator '{name}' failed to import: {type(exc).__name__}: {exc} ({path})"
        ) from None
    for value in vars(module).values():
        if inspect.isclass(value) and value.__module__ == module_name:
            return value
    raise EvaluatorConfigError(
        f"Custom evaluator '{name}' defines no class in {path}: define a class with "
        "__init__(self, *, threshold, options=None, **_) and "
        "__call__(self, *, prompt='', response='', expected_response='', context='', **_)."
    )


def _fingerprint(home: Path, name: str) -> str:
    digest = hashlib.sha256()
    for suffix in (".py", ".prompty"):
        path = home / f"{name}{suffix}"
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()
