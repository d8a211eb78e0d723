"""Notebook tools: a workbench for custom LLM judges, a labelling widget and styled result tables.

    from evalkit.notebook import JudgeStudio, LabellingWidget, styled

    studio = JudgeStudio("answer_quality", df=evalkit.load("data/demo.json"))
    studio.sample(n=5)            # rows to try the judge on
    studio.run()                  # one version: score and reason per row
    studio.widget()               # the same model, edited through ipywidgets

Every tool is a plain Python model first (usable and testable without a frontend); the widgets are a view
over it. Nothing here imports pandas, ipywidgets or promptflow until it is used, so ``import evalkit`` and
``import evalkit.notebook`` stay fast.

- ``studio``: ``JudgeStudio``, built in layers: ``judge_files`` (the ``.prompty`` and ``.py`` texts, the
  generated wrapper, writing them), ``judge_draft`` (the judge being edited and its inputs check),
  ``judge_runner`` (sampling rows, running the draft, comparing versions), ``judge_versions``
  (``JudgeVersion``: one prompt and every row it judged, run by run) and
  ``studio_view`` (its ipywidgets view).
- ``labelling``: ``LabellingWidget``; ``display``: ``styled`` result tables.

May import: every layer below it (``evalkit.spark``, ``reporting`` and down); never ``cli``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_API = {
    "JudgeStudio": ("evalkit.notebook.studio", "JudgeStudio"),
    "JudgeVersion": ("evalkit.notebook.judge_versions", "JudgeVersion"),
    "LabellingWidget": ("evalkit.notebook.labelling", "LabellingWidget"),
    "styled": ("evalkit.notebook.display", "styled"),
}

__all__ = ["JudgeStudio", "JudgeVersion", "LabellingWidget", "styled"]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from evalkit.notebook.display import styled
    from evalkit.notebook.judge_versions import JudgeVersion
    from evalkit.notebook.labelling import LabellingWidget
    from evalkit.notebook.studio import JudgeStudio


def __getattr__(name: str):
    """Import the notebook API on first use (PEP 562)."""
    try:
        module, attr = _API[name]
    except KeyError:
        raise AttributeError(f"module 'evalkit.notebook' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
