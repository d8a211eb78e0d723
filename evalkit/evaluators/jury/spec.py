"""A jury declaration read and checked: who the jurors are and how their scores are combined.

``jury`` is a list of jurors or ``{"jurors": [...], "combine": "mean" | "median" | "majority"}`` (default
``median``). A juror is a model name (``"gpt-4o-mini"``: the run's judge endpoint, another model or Azure
deployment) or an object with any of:

- ``model``: the model / deployment name (default: the run's judge model);
- ``base_url``: another OpenAI-compatible endpoint, with ``api_key_env`` naming the environment variable that
  holds its key; only where the user configures the run (``--evaluator``, ``evaluate(evaluators=...)``): a
  document that names either is refused before it is read (``evalkit.documents.destinations``);
- ``evaluator``: another LLM judge (a built-in such as ``Coherence`` or a custom ``.prompty`` judge) that
  judges the rows in this one's place: a jury of prompts;
- ``label``: the juror's name in results (default: its model, or evaluator, name).

May import: ``evalkit.errors``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evalkit.errors import EvaluatorConfigError

COMBINE_RULES = ("mean", "median", "majority")
DEFAULT_COMBINE = "median"
_JUROR_KEYS = ("model", "base_url", "api_key_env", "evaluator", "label")


@dataclass(frozen=True)
class Juror:
    label: str
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    evaluator: str | None = None


@dataclass(frozen=True)
class Jury:
    jurors: tuple[Juror, ...]
    combine: str = DEFAULT_COMBINE

    @property
    def key(self) -> str:
        """A stable text form (rows with equal juries are judged together)."""
        return json.dumps([self.combine, [j.__dict__ for j in self.jurors]], sort_keys=True)


def read_jury(value: Any, where: str) -> Jury:
    """The ``jury`` entry of evaluator ``where`` (e.g. ``Relevance (items[0])``) as a ``Jury``."""
    fix = (
        'write "jury": ["model-a", "model-b"] or "jury": {"jurors": [...], "combine": "median"} '
        f"(combine: {', '.join(COMBINE_RULES)})"
    )
    if isinstance(value, list):
        value = {"jurors": value}
    if not isinstance(value, dict):
        raise EvaluatorConfigError(f"{where}: jury must be a list of jurors or an object: {fix}")
    unknown = sorted(set(value) - {"jurors", "combine"})
    if unknown:
        raise EvaluatorConfigError(f"{where}: jury has unknown key(s) {', '.join(unknown)}: {fix}")
    combine = value.get("combine", DEFAULT_COMBINE)
    if combine not in COMBINE_RULES:
        raise EvaluatorConfigError(
            f"{where}: jury combine {combine!r} is not one of {', '.join(COMBINE_RULES)}"
        )
    jurors = value.get("jurors")
    if not isinstance(jurors, list) or len(jurors) < 2:
        raise EvaluatorConfigError(f"{where}: a jury needs at least two jurors, got {jurors!r}: {fix}")
    read = tuple(_juror(j, f"{where}: jury juror {n + 1}") for n, j in enumerate(jurors))
    labels = [j.label for j in read]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise EvaluatorConfigError(
            f'{where}: two jurors are both called {repeated[0]!r}: give each a distinct "label"'
        )
    return Jury(read, combine)


def _juror(value: Any, where: str) -> Juror:
    if isinstance(value, str) and value.strip():
        return Juror(label=value.strip(), model=value.strip())
    if not isinstance(value, dict):
        raise EvaluatorConfigError(f'{where} must be a model name or an object such as {{"model": "gpt-4o"}}')
    unknown = sorted(set(value) - set(_JUROR_KEYS))
    if unknown:
        raise EvaluatorConfigError(
            f"{where} has unknown key(s) {', '.join(unknown)}; a juror takes {', '.join(_JUROR_KEYS)}"
        )
    for key in _JUROR_KEYS:
        if key in value and (not isinstance(value[key], str) or not value[key].strip()):
            raise EvaluatorConfigError(f"{where}: {key} must be a non-empty string, got {value[key]!r}")
    if not any(k in value for k in ("model", "base_url", "evaluator")):
        raise EvaluatorConfigError(f"{where} names no model, base_url or evaluator: say what judges")
    if "base_url" in value and "model" not in value:
        raise EvaluatorConfigError(f"{where}: a juror with a base_url needs its model too")
    label = value.get("label") or value.get("model") or value.get("evaluator") or value["base_url"]
    return Juror(label=label, **{k: value.get(k) for k in _JUROR_KEYS if k != "label"})
