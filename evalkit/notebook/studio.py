"""JudgeStudio: write, try and compare versions of a custom LLM judge from a notebook.

A custom LLM judge is two files in ``custom-evaluators/<name>/`` (see the custom-evaluator seed): a
``.prompty`` (YAML front matter, then ``system:`` / ``user:`` sections using ``{{variables}}``) and a ``.py``
wrapper class that loads it with promptflow and forwards the row's fields to it. Getting a judge right is
an edit-run-compare loop; the studio keeps that loop in one object, built in layers:

* the draft (``evalkit.notebook.judge_draft.JudgeDraft``): the prompt (``prompt_text``,
  ``front_matter_text``, ``sections``, ``set_section``) and its wrapper, in memory until ``save()``, with
  the inputs check (``variables()``, ``problems()``); the texts and files themselves are
  ``evalkit.notebook.judge_files``;
* the runner (``evalkit.notebook.judge_runner.JudgeRunner``): a sample of rows (``sample``), ``run()``
  through ``evalkit.evaluate`` exactly as a real run would, and the ``versions`` it keeps, one per prompt
  (``evalkit.notebook.judge_versions``: running a prompt again adds rows to its version), compared on the
  rows both judged (``compare_versions``, ``fill=True`` judges the missing ones first; ``diff``);
* alignment (``evalkit.notebook.judge_alignment``): ``align()`` the saved judge to the labels in
  ``labels_path`` (beside its document unless the studio was given one; ``evalkit.align``),
  ``aligned_versions()`` beside the original, ``aligned_diff()``;
* the widget (``evalkit.notebook.studio_view.StudioView``): ``widget()`` is a view over this model
  (ipywidgets, imported on first use); every action it offers is a method here, so the studio can be
  scripted and tested without a frontend.

An LLM-as-judge span evaluator (``custom-evaluators/<name>/<name>.json``, or a ``Builtin.<Name>`` to start
from) opens as a ``evalkit.notebook.span_judge_studio.SpanJudgeStudio`` instead: ``JudgeStudio(name,
spans="spans.jsonl")`` edits its instructions and rating scale and runs it over the span file.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.analysis.formatting import count
from evalkit.errors import EvalkitError
from evalkit.notebook.judge_alignment import AlignmentActions
from evalkit.notebook.judge_runner import JudgeRunner, JudgeVersion
from evalkit.notebook.studio_view import StudioView

__all__ = ["JudgeStudio", "JudgeVersion", "StudioView"]


class JudgeStudio(AlignmentActions, JudgeRunner):
    """Edit, run and compare versions of the custom LLM judge ``name`` (see the module docs).

    Args:
        name: the judge's name; an existing ``custom_dir/<name>/<name>.prompty`` is opened, otherwise a new
            judge is started from the minimal judge scaffold, prompt and response only (``evalkit new --llm``
            also passes the reference answer and context); nothing is written before ``save()``.
        custom_dir: the project's custom evaluator folder, where ``save()`` writes.
        df: the case table to try the judge on (``evalkit.load``, or a scored table from
            ``evalkit.evaluate``, whose ``status`` / ``<name>_result`` columns ``sample(how="failing")``
            reads).
        model_config: the judge model (default: from the environment, as ``evalkit.evaluate`` finds it).
        threshold, options: the judge's configuration for rows whose own evaluator map does not name it.
        concurrency, cache: passed to ``evalkit.evaluate`` (judge calls in flight; the judge cache).
        seed: the default seed of ``sample(how="random")``.
        labels_path: the labels file "Align to labels" reads (default: the labels file beside ``df``'s
            document, :func:`evalkit.analysis.labels.labels_path`); open the ``LabellingWidget`` on the same
            file: ``labels_path=studio.labels_path``.
    """

    _view: StudioView | None = None  # built by the first widget()

    def __init__(
        self,
        name: str,
        custom_dir: str | Path = "custom-evaluators",
        df=None,
        model_config: dict | None = None,
        *,
        labels_path: str | os.PathLike | None = None,
        **options,
    ):
        super().__init__(name, custom_dir, df, model_config, **options)
        self.labels_file = Path(labels_path) if labels_path is not None else None

    def __new__(cls, name: str = "", *args, spans=None, **kwargs):
        """A ``SpanJudgeStudio`` for an LLM-as-judge span evaluator: given ``spans=`` (a span file or frame),
        or named ``Builtin.<Name>``, or when ``custom_dir/<name>/<name>.json`` exists."""
        custom_dir = Path(kwargs.get("custom_dir", args[0] if args else "custom-evaluators"))
        is_span_judge = (
            spans is not None
            or str(name).startswith("Builtin.")
            or (custom_dir / str(name) / f"{name}.json").is_file()
        )
        if not is_span_judge:
            return super().__new__(cls)
        from evalkit.notebook.span_judge_studio import SpanJudgeStudio

        if spans is None:
            raise EvalkitError(
                f"'{name}' is an LLM-as-judge span evaluator: open it with the spans to try it on, "
                f"JudgeStudio({name!r}, spans='spans.jsonl')"
            )
        options = {k: v for k, v in kwargs.items() if k in ("model_config", "concurrency", "cache")}
        if len(args) > 2:  # JudgeStudio(name, custom_dir, df, model_config)
            options["model_config"] = args[2]
        return SpanJudgeStudio(name, spans, custom_dir=custom_dir, **options)

    def __repr__(self) -> str:
        state = "new" if self.is_new else ("unsaved changes" if self.dirty else "saved")
        return f"<JudgeStudio {self.name!r} in {self.custom_dir} ({state}), {count(len(self.versions), 'version')}>"

    def widget(self):
        """An ipywidgets container over this studio: editors, the inputs check, sampling, run, versions."""
        if self._view is None:
            self._view = StudioView(self)
        return self._view.container

    @property
    def view(self) -> StudioView:
        """The widget view (built by ``widget()``), giving access to its individual controls."""
        if self._view is None:
            self.widget()
        return self._view

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget())
