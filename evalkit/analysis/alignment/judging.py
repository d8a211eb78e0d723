"""The judge being aligned (``JudgeSource``) and how a prompt variant of it scores rows (``score_prompt``).

A custom judge (``custom-evaluators/<name>/``: ``<name>.py`` + ``<name>.prompty``) is aligned on its own prompt and
runs with its own wrapper. A built-in LLM judge (Relevance, Coherence, Similarity, Groundedness) is aligned as a
custom copy: azure-ai-evaluation's own ``.prompty`` (``evalkit.judges.prompty.builtin_prompt``) with a wrapper
evalkit writes (``BUILTIN_WRAPPER``: the case table's fields mapped onto the prompt's inputs as the built-in maps
them, the answer read by ``read_judge_answer``), so the aligned judge is a custom evaluator ``evalkit run`` loads.

Every score goes through ``evalkit.engine.evaluate``, exactly as ``evalkit run`` would judge the rows (judge pool,
retries, promptflow for ``.prompty`` judges), without the judge cache: every judge call is a request the model
serves and counts. ``score_prompt`` writes the variant into a staging folder of its own first.

May import: ``evalkit.engine`` and below (``evaluators``, ``judges``, ``documents``, ``errors``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.documents.evaluator_maps import LLM_BUILTINS
from evalkit.errors import EvaluatorConfigError
from evalkit.judges.prompty import BUILTIN_PROMPTS, builtin_prompt

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BUILTIN_WRAPPER", "JudgeSource", "judge_source", "score_prompt"]

#: The wrapper of a built-in judge's aligned copy (``__NAME__``, ``__CLASS__``, ``__SOURCE__``, ``__INPUTS__``).
BUILTIN_WRAPPER = '''"""__NAME__: the built-in __SOURCE__ judge aligned to human labels by ``evalkit align``.

Its prompt (__NAME__.prompty beside this file) started as azure-ai-evaluation's own __SOURCE__ prompt; alignment.json
says how it was changed and what it measured. The case table's fields reach the prompt's inputs as the built-in
__SOURCE__ judge maps them (query = prompt, response, ground_truth = expected_response, context).
"""

from pathlib import Path

from evalkit.judges.judge_answers import read_judge_answer

INPUTS = __INPUTS__


class __CLASS__:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        config = dict(model_config)
        config.setdefault("type", "azure_openai" if "azure_endpoint" in config else "openai")
        prompty = Path(__file__).with_suffix(".prompty")
        self._flow = load_flow(source=str(prompty), model={"configuration": config})

    def __call__(self, *, prompt="", response="", expected_response="", context="", **_):
        values = {
            "query": prompt,
            "response": response,
            "ground_truth": expected_response,
            "context": context or expected_response,
        }
        return read_judge_answer(self._flow(**{k: v for k, v in values.items() if k in INPUTS}))
'''


@dataclass(frozen=True)
class JudgeSource:
    """The judge as the user runs it: ``name``, ``builtin`` or custom, its ``prompt_text`` and ``wrapper_text``
    (a template of the aligned copy's wrapper for a built-in: ``wrapper_for(new_name)``), where it lives."""

    name: str
    builtin: bool
    prompt_text: str
    wrapper_text: str
    custom_dir: Path
    prompt_path: Path

    def wrapper_for(self, new_name: str) -> str:
        """The ``.py`` of the aligned copy named ``new_name``."""
        if not self.builtin:
            return self.wrapper_text
        return self.wrapper_text.replace("__NAME__", new_name).replace("__CLASS__", _class_name(new_name))


def _class_name(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"_+", name) if part) or "Judge"


def judge_source(name: str, custom_dir: Path) -> JudgeSource:
    """The judge called ``name``: a built-in LLM judge with a ``.prompty`` in azure-ai-evaluation, or a custom
    ``.prompty`` judge in ``custom_dir``; anything else is an :class:`EvaluatorConfigError` saying what can be
    aligned."""
    if name in BUILTIN_PROMPTS:
        prompt = builtin_prompt(name)
        inputs = sorted((prompt.front_matter.get("inputs") or {}).keys())
        wrapper = BUILTIN_WRAPPER.replace("__SOURCE__", name).replace("__INPUTS__", repr(tuple(inputs)))
        return JudgeSource(
            name, True, prompt.path.read_text(encoding="utf-8"), wrapper, custom_dir, prompt.path
        )
    if name in LLM_BUILTINS:
        raise EvaluatorConfigError(
            f"{name} has no .prompty to align (only {', '.join(BUILTIN_PROMPTS)} and custom .prompty judges do)"
        )
    home = custom_dir / name
    prompty, module = home / f"{name}.prompty", home / f"{name}.py"
    if not (prompty.is_file() and module.is_file()):
        raise EvaluatorConfigError(
            f"no judge {name!r} to align: expected a built-in LLM judge ({', '.join(BUILTIN_PROMPTS)}) or a custom "
            f"judge {module} with {prompty.name} beside it (evalkit new {name} --llm writes one)"
        )
    return JudgeSource(
        name,
        False,
        prompty.read_text(encoding="utf-8"),
        module.read_text(encoding="utf-8"),
        custom_dir,
        prompty,
    )


def _table(rows: pd.DataFrame, name: str, label: str) -> pd.DataFrame:
    """``rows`` as a case table that runs only judge ``name`` (each row with its own configuration of ``label``)."""
    from evalkit.documents.case_table import CASE_COLUMNS

    table = rows[[c for c in CASE_COLUMNS if c in rows.columns]].copy()
    table.attrs = {}
    maps = table["evaluators"] if "evaluators" in table.columns else [None] * len(table)
    table["evaluators"] = [
        {name: dict(m[label] or {})} if isinstance(m, dict) and isinstance(m.get(label), dict) else {name: {}}
        for m in maps
    ]
    return table


def score_prompt(
    rows: pd.DataFrame,
    source: JudgeSource,
    prompt_text: str | None,
    stage: Path,
    *,
    model_config: dict | None,
    concurrency: int,
    run_name: str | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Score ``rows`` with the judge's ``prompt_text`` (None: the judge exactly as the user runs it); returns the
    scored table (the judge's columns named ``run_name``, default the judge's name) and the run's judge summary
    (``calls``, ``prompt_tokens``, ``completion_tokens``, ...)."""
    from evalkit.engine import evaluate

    name = run_name or source.name
    custom_dir: Path = source.custom_dir
    if prompt_text is not None:
        home = stage / name
        home.mkdir(parents=True, exist_ok=True)
        (home / f"{name}.prompty").write_text(prompt_text, encoding="utf-8")
        (home / f"{name}.py").write_text(source.wrapper_for(name), encoding="utf-8")
        custom_dir = stage
    elif source.builtin:
        name = source.name
    scored = evaluate(
        _table(rows, name, source.name),
        custom_dir=custom_dir,
        model_config=model_config,
        concurrency=concurrency,
        cache=False,
        progress=False,
    )
    judge = dict((scored.attrs.get("evalkit") or {}).get("judge") or {})
    return scored, judge
