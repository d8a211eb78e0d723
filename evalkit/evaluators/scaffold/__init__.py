"""Scaffolds of working custom evaluators (``evalkit new NAME [--llm | --span]``, JudgeStudio's new judges).

The ``*.txt`` files beside this module are the templates: a code-only evaluator, or an LLM judge's ``.py``
wrapper and ``.prompty``, both in the seed's contract. ``evalkit new NAME --llm`` writes the judge that receives
the item's ``expected_response`` and ``context`` too (``llm_reference.*``: most judges grade against the
reference answer); JudgeStudio starts a new judge from the minimal one (``llm.*``: prompt and response), whose
demo shows how adding the reference answer changes the judge. ``llm.py.v1.txt`` is the wrapper earlier versions
wrote (reading ``data["score"]`` itself), kept so that JudgeStudio still knows such a wrapper as the scaffold's.

``evalkit new NAME --span`` writes an AgentCore code-based evaluator (``span.py.txt``, a Lambda handler) and
``events/sample.json``, the event ``spans eval`` would send it for the bundled demo session
(``sample_spans.jsonl``: the traces of session ``sess-split-broker`` of ``data/agentcore_split_spans.jsonl``,
AgentCore's split form), so ``evalkit spans invoke NAME --event ...`` works at once. ``events/`` is not
zipped by ``spans package`` (AWS's SAM layout keeps test events beside the code in the same way).

May import ``evalkit.evaluators.names``, ``evalkit.documents``, ``evalkit.spans.lambdas`` and
``evalkit.errors``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from evalkit.documents.evaluator_maps import BUILTIN_NAMES
from evalkit.documents.json_input import quote
from evalkit.errors import EvalkitError
from evalkit.evaluators.names import NAME_PATTERN, builtin_collision, name_too_long

#: The session of ``sample_spans.jsonl`` that a span evaluator's sample event carries.
SAMPLE_SESSION = "sess-split-broker"


def scaffold(
    name: str,
    custom_dir: str | Path = "custom-evaluators",
    *,
    llm: bool = False,
    reference: bool = True,
    span_level: str | None = None,
) -> list[Path]:
    """Create ``custom_dir/name/`` with a working evaluator; returns the files written.

    ``reference``: an LLM judge that also receives ``expected_response`` and ``context`` (the default), or
    only the prompt and the response (``False``, JudgeStudio's starting point). ``span_level`` (``SESSION``,
    ``TRACE`` or ``TOOL_CALL``): an AgentCore span evaluator at that level, with a sample event.
    """
    if llm and span_level is not None:
        raise EvalkitError(
            "an evaluator is an LLM judge or a span evaluator, not both: choose --llm or --span."
        )
    if not NAME_PATTERN.match(name):
        raise EvalkitError(
            f"{quote(name)} is not a valid evaluator name: start with a letter, then letters, digits or _."
        )
    too_long = name_too_long(name)
    if too_long:
        raise EvalkitError(f"{too_long}.")
    if name in BUILTIN_NAMES or builtin_collision(name):
        raise EvalkitError(
            f"'{name}' collides with a built-in evaluator name (compared case-insensitively); "
            f"choose a prefixed name such as 'domain_{name.lower()}'."
        )
    home = Path(custom_dir) / name
    if home.exists():
        raise EvalkitError(f"{home} already exists; choose another name or edit that evaluator.")
    class_name = _class_name(name)
    kind = "llm_reference" if reference else "llm"
    if span_level is not None:
        events = _sample_events(name, span_level)  # before anything is written: a bad level writes nothing
        templates = [("span.py.txt", f"{name}.py")]
    elif llm:
        templates = [(f"{kind}.py.txt", f"{name}.py"), (f"{kind}.prompty.txt", f"{name}.prompty")]
    else:
        templates = [("code.py.txt", f"{name}.py")]
    home.mkdir(parents=True)
    written = []
    for template, target in templates:
        text = resources.files(__name__).joinpath(template).read_text(encoding="utf-8")
        path = home / target
        path.write_text(text.format(name=name, class_name=class_name, level=span_level), encoding="utf-8")
        written.append(path)
    if span_level is not None:
        path = home / "events" / "sample.json"
        path.parent.mkdir()
        path.write_text(events[0].text + "\n", encoding="utf-8")
        written.append(path)
    return written


def _sample_events(name: str, level: str) -> list:
    """The events ``spans eval`` would send evaluator ``name`` at ``level`` for the bundled sample session."""
    from evalkit.spans.lambdas.lambda_events import lambda_events

    with resources.as_file(resources.files(__name__).joinpath("sample_spans.jsonl")) as spans:
        return lambda_events(spans, session=SAMPLE_SESSION, level=level, evaluator=name)


def _class_name(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) + "Evaluator"


def earlier_llm_wrappers(name: str) -> list[str]:
    """The other ``<name>.py`` wrappers a scaffold wrote, unchanged: earlier versions of ``evalkit new NAME --llm``
    (``llm.py.v1.txt``, then the prompt-and-response one JudgeStudio still starts from) and the current
    ``evalkit new NAME --llm`` wrapper."""
    names = ("llm.py.v1.txt", "llm.py.txt", "llm_reference.py.txt")
    texts = [resources.files(__name__).joinpath(n).read_text(encoding="utf-8") for n in names]
    return [text.format(name=name, class_name=_class_name(name)) for text in texts]
