"""A custom LLM judge as text and files: the ``.prompty`` taken apart, the ``.py`` wrapper, and writing both.

A custom LLM judge is two files in ``custom-evaluators/<name>/`` (see the custom-evaluator seed): a
``.prompty`` (YAML front matter, then ``system:`` / ``user:`` sections using ``{{variables}}``) and a ``.py``
wrapper class that loads it with promptflow and forwards the row's fields to it. This module holds what
the studio needs to know about those two texts, with no state of its own:

* the ``.prompty`` split the way the loader (``evalkit.judges.prompty``) splits it: front matter and body
  (``split_prompty``), the body's role sections (``prompt_sections``), the inputs it declares;
* the wrapper: which inputs a wrapper passes on to its flow (``forwarded_inputs``, read from its code), the
  wrapper the studio generates for the declared inputs (``generated_wrapper``, marked ``MANAGED_MARK``),
  and the pair ``evalkit new NAME --llm`` starts from (``scaffold_texts``);
* ``write_judge``: the two files written into a judge's folder;
* how a case-table cell fills a template variable (``as_text``, ``has_text``).
"""

from __future__ import annotations

import ast
import hashlib
import tempfile
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.judges.prompty import _FRONT_MATTER, _ROLE

#: Template variable -> the case-table column the wrapper fills it from (the seed's keyword arguments).
#: ``prompt`` itself is reserved by promptflow, hence ``user_prompt``.
COLUMN_FOR = {
    "user_prompt": "prompt",
    "response": "response",
    "expected_response": "expected_response",
    "context": "context",
}
#: Section roles a ``.prompty`` body may hold (the loader's role markers).
ROLES = ("system", "user", "assistant", "function")
#: The line that marks a wrapper as the studio's own, so it may be rewritten when the inputs change.
MANAGED_MARK = "Written by evalkit's JudgeStudio"

_WRAPPER = '''"""{name}: an LLM judge scoring 1-5; its prompt is {name}.prompty beside this file.

{mark}. It passes on the inputs that
{name}.prompty declares ({declared}).
The studio rewrites this file when those inputs change, as long as the line above is here;
delete that line to make the wrapper yours.
"""

from pathlib import Path

from evalkit.judges.judge_answers import read_judge_answer


class {class_name}:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        config = dict(model_config)
        # load_flow picks the connection class from "type", which the configuration does not carry.
        config.setdefault("type", "azure_openai" if "azure_endpoint" in config else "openai")
        prompty = Path(__file__).with_suffix(".prompty")
        self._flow = load_flow(source=str(prompty), model={{"configuration": config}})

    def __call__(
        self,
        *,
        prompt: str = "",
        response: str = "",
        expected_response: str = "",
        context: str = "",
        **_,
    ) -> dict:
        # promptflow reserves "prompt", so the template calls the user's message user_prompt.
        answer = self._flow({arguments})
        # {{"score": <integer 1-5>, "reason": ...}}; name other fields: read_judge_answer(answer, score="...")
        return read_judge_answer(answer)
'''


def sha256_of(text: str) -> str:
    """The hex sha256 of ``text`` (UTF-8): what identifies a version of a prompt."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# The .prompty ---------------------------------------------------------------------------------------------
def split_prompty(text: str) -> tuple[str, str]:
    """(front matter, body) with the loader's rules (``evalkit.judges.prompty``): front matter is what stands
    between the first ``---`` line and the last one."""
    text = text.replace("\r\n", "\n")
    match = _FRONT_MATTER.search(text)
    if not match:
        raise ValueError("a .prompty file starts with YAML front matter between '---' lines")
    return match.group(1), match.group(2)


def prompt_sections(body: str) -> tuple[str, list[tuple[str, str, str]]]:
    """(text before the first role marker, [(role, marker text, content), ...]) of a prompt body."""
    matches = list(_ROLE.finditer(body))
    if not matches:
        return body, []
    parts = []
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        parts.append((match.group(1).lower(), match.group(0), body[match.end() : end]))
    return body[: matches[0].start()], parts


def declared_inputs(text: str) -> list[str]:
    """The ``COLUMN_FOR`` variables a ``.prompty`` text declares under ``inputs:`` (none when unreadable)."""
    import yaml

    try:
        inputs = (yaml.safe_load(split_prompty(text)[0]) or {}).get("inputs") or {}
    except (ValueError, yaml.YAMLError, AttributeError):
        return []
    return [var for var in COLUMN_FOR if var in inputs]


# The wrapper ----------------------------------------------------------------------------------------------
def forwarded_inputs(wrapper: str) -> set[str] | None:
    """The keyword names a wrapper passes to its ``self._flow(...)``; None when that cannot be told."""
    try:
        tree = ast.parse(wrapper)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_flow":
            if node.args or any(k.arg is None for k in node.keywords):
                return None
            return {k.arg for k in node.keywords}
    return None


def _class_name(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) + "Evaluator"


def scaffold_texts(name: str) -> tuple[str, str]:
    """The ``.prompty`` and ``.py`` a new judge in the studio starts from: the minimal scaffold (prompt and
    response; ``evalkit new NAME --llm`` also passes the reference answer and context). It checks the name."""
    from evalkit.evaluators.scaffold import scaffold

    with tempfile.TemporaryDirectory(prefix="evalkit-scaffold-") as folder:
        scaffold(name, folder, llm=True, reference=False)
        home = Path(folder) / name
        return (
            (home / f"{name}.prompty").read_text(encoding="utf-8"),
            (home / f"{name}.py").read_text(encoding="utf-8"),
        )


def is_scaffold_wrapper(name: str, wrapper: str) -> bool:
    """Whether ``wrapper`` is, unchanged, the one ``evalkit new NAME --llm`` writes (or an earlier version wrote)."""
    from evalkit.evaluators.scaffold import earlier_llm_wrappers

    try:
        return wrapper == scaffold_texts(name)[1] or wrapper in earlier_llm_wrappers(name)
    except EvalkitError:  # an existing judge whose name the scaffold would refuse
        return False


def generated_wrapper(name: str, declared: list[str]) -> str:
    """A wrapper in the seed's contract that forwards ``declared`` (names from ``COLUMN_FOR``)."""
    arguments = ", ".join(f"{var}={COLUMN_FOR[var]}" for var in COLUMN_FOR if var in declared)
    return _WRAPPER.format(
        name=name,
        class_name=_class_name(name),
        mark=MANAGED_MARK,
        declared=", ".join(var for var in COLUMN_FOR if var in declared) or "none",
        arguments=arguments,
    )


# The files ------------------------------------------------------------------------------------------------
def write_judge(
    home: Path, name: str, prompt_text: str, wrapper_text: str, *, atomic: bool = False
) -> list[Path]:
    """Write ``<name>.prompty`` and ``<name>.py`` into ``home`` (created if needed); returns their paths."""
    home.mkdir(parents=True, exist_ok=True)
    paths = [home / f"{name}.prompty", home / f"{name}.py"]
    for path, text in zip(paths, (prompt_text, wrapper_text)):
        if atomic:
            from evalkit.documents.files.atomic import atomic_write

            with atomic_write(path) as handle:
                handle.write(text)
        else:
            path.write_text(text, encoding="utf-8")
    return paths


# Case-table cells -----------------------------------------------------------------------------------------
def as_text(value: Any) -> str:
    """A case-table cell as a template value: the string itself, else empty."""
    return value if isinstance(value, str) else ""


def has_text(value: Any) -> bool:
    """Whether a case-table cell holds non-blank text (what a template variable needs to render)."""
    return isinstance(value, str) and bool(value.strip())
