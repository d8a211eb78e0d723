"""Custom ``.prompty`` judges run on evalkit's judge model, whatever model configuration the file names.

promptflow builds a prompty's model by merging, key by key, the wrapper's ``model={"configuration": ...}`` over
the file's ``model:`` front matter. A file written for promptflow names its own model there: a ``connection``
(promptflow's sample judges: ``connection: open_ai_connection``), an ``azure_deployment``, ``${env:...}``
endpoints, a ``type``. Merged with evalkit's judge configuration that breaks in two ways: a ``connection``
beside an endpoint or key is refused ("Cannot configure model config and connection in configuration at the
same time"), and a file's ``azure_deployment`` silently wins over evalkit's model name (promptflow sends
``azure_deployment or model``).

So while evalkit constructs or calls a custom judge (``judge_model()``), every prompty promptflow builds gets
evalkit's judge model as its whole ``configuration``: promptflow's own ``OpenAIModelConfiguration`` /
``AzureOpenAIModelConfiguration`` built from evalkit's configuration, which promptflow takes in place of the
file's (its documented override) instead of merging into it. The file's ``api``, ``parameters`` (temperature,
``max_tokens``, ``response_format``...) and ``response`` are kept, merged with the wrapper's as promptflow does.
Existing wrappers, the one ``evalkit new --llm`` writes included, work unchanged. One notice per evaluator
says what was replaced: a warning when the file names a ``connection`` (it could never be used here), an info
line for other configuration (a deployment, an endpoint).

The same block keeps the answers promptflow hands the wrapper (its ``format_llm_response``), so that when a
wrapper fails to read one (``data["score"]`` on ``{"correctness": 4}``) the error says what the judge answered.

Outside ``judge_model()`` promptflow behaves as shipped. If an upgraded promptflow no longer builds prompties
through ``promptflow.core._flow.Prompty.__init__``, nothing is changed and a warning says so
(``tests/evaluators/test_prompty_as_written.py`` then fails).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import importlib.util
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.judges.models import DEFAULT_AZURE_API_VERSION, describe
from evalkit.judges.offline import import_promptflow_quietly

log = logging.getLogger("evalkit.judges")

#: Fields of a prompty's ``model.configuration`` that pick the model or its endpoint (besides ``connection``).
_MODEL_FIELDS = ("type", "azure_deployment", "model", "azure_endpoint", "base_url", "api_version")


@dataclass
class JudgeModel:
    """Evalkit's judge model for one custom evaluator, and the files already noticed for it."""

    config: dict
    evaluator: str
    noticed: set = field(default_factory=set)


_current: contextvars.ContextVar[JudgeModel | None] = contextvars.ContextVar(
    "evalkit_judge_model", default=None
)
#: The answers promptflow's prompties returned inside the current ``judge_model()`` block, oldest first.
_answers: contextvars.ContextVar[list | None] = contextvars.ContextVar("evalkit_judge_answers", default=None)
_lock = threading.Lock()
_installed = False


@contextlib.contextmanager
def judge_model(target: JudgeModel) -> Iterator[list]:
    """Within the block, prompties built by this thread (or its asyncio tasks) run on ``target.config``.

    Yields the list of the answers promptflow returned to the wrapper in the block (parsed JSON or text), so
    that a wrapper that cannot read one can be told what it was.
    """
    answers: list = []
    if not target.config:
        yield answers
        return
    install()
    token, heard = _current.set(target), _answers.set(answers)
    try:
        yield answers
    finally:
        _current.reset(token)
        _answers.reset(heard)


def install() -> bool:
    """Put evalkit's hook on promptflow's ``Prompty.__init__`` (once); False when promptflow lacks it."""
    global _installed
    with _lock:
        if _installed:
            return True
        if importlib.util.find_spec("promptflow") is None:
            return False
        import_promptflow_quietly()  # no telemetry, no trace service, no exporter folder
        try:
            flow = importlib.import_module("promptflow.core._flow")
            prompty, formatter = flow.Prompty, flow.format_llm_response
            importlib.import_module("promptflow.core._model_configuration").OpenAIModelConfiguration  # noqa: B018
        except (ImportError, AttributeError):
            log.warning(
                "evalkit could not take over the model of custom .prompty judges (this promptflow no longer "
                "has promptflow.core._flow.Prompty): a .prompty that names a connection will fail."
            )
            return False
        prompty.__init__ = _hooked(prompty.__init__)
        flow.format_llm_response = _heard(formatter)
        _installed = True
        return True


def _hooked(original):
    @functools.wraps(original)
    def __init__(self, path, model=None, **kwargs):  # noqa: N807 - promptflow's signature
        target = _current.get()
        configuration = promptflow_configuration(target.config) if target is not None else None
        if configuration is not None:
            model = {**(model or {}), "configuration": configuration}
            _notice(target, Path(path))
        return original(self, path, model=model, **kwargs)

    __init__.evalkit_hook = True
    return __init__


def _heard(original):
    """promptflow's answer formatting, keeping each answer for the ``judge_model()`` block it is in."""

    @functools.wraps(original)
    def format_llm_response(*args, **kwargs):
        answer = original(*args, **kwargs)
        answers = _answers.get()
        if answers is not None and isinstance(answer, (str, dict)):
            answers.append(answer)
        return answer

    return format_llm_response


def promptflow_configuration(config: dict):
    """promptflow's model configuration object for an evalkit judge configuration (``judges.models``); None
    for a configuration in neither of its two shapes (then promptflow is left to do as it does)."""
    from promptflow.core._model_configuration import AzureOpenAIModelConfiguration, OpenAIModelConfiguration

    if config.get("azure_endpoint") and config.get("azure_deployment"):
        return AzureOpenAIModelConfiguration(
            azure_deployment=config["azure_deployment"],
            azure_endpoint=config["azure_endpoint"],
            api_version=config.get("api_version") or DEFAULT_AZURE_API_VERSION,
            api_key=config.get("api_key") or None,  # none: promptflow signs in with Entra ID, as evalkit does
        )
    if config.get("base_url") and config.get("model"):
        # The key as evalkit's own client has it ("" for a server without keys, which openai accepts).
        return OpenAIModelConfiguration(
            model=config["model"], base_url=config["base_url"], api_key=config.get("api_key", "")
        )
    return None


def file_configuration(path: Path) -> dict:
    """The ``model.configuration`` a ``.prompty`` file names itself ({} when none or unreadable)."""
    from evalkit.judges.prompty import load

    try:
        model = load(path).front_matter.get("model") or {}
    except Exception:  # noqa: BLE001 - promptflow reports an unreadable file itself
        return {}
    configuration = model.get("configuration") if isinstance(model, dict) else None
    return configuration if isinstance(configuration, dict) else {}


def _notice(target: JudgeModel, path: Path) -> None:
    """Say once per evaluator and file that the file's own model configuration is not used."""
    key = str(path.resolve())
    if key in target.noticed:
        return
    target.noticed.add(key)
    named = file_configuration(path)
    connection = named.get("connection")
    fields = {k: named[k] for k in _MODEL_FIELDS if named.get(k) not in (None, "")}
    try:
        judge = describe(target.config)
    except KeyError:  # a configuration without api_version: still evalkit's judge model
        judge = "evalkit's judge model"
    if connection:
        log.warning(
            "Custom evaluator '%s': %s names connection %r in model.configuration; evalkit runs it on its judge "
            "model instead (%s); the connection is not used.",
            target.evaluator,
            path.name,
            connection,
            judge,
        )
    elif fields:
        shown = ", ".join(f"{k}: {v}" for k, v in fields.items())
        log.info(
            "Custom evaluator '%s': %s names its own model configuration (%s); evalkit runs it on its judge "
            "model instead (%s).",
            target.evaluator,
            path.name,
            shown,
            judge,
        )
