"""StudioView: the ipywidgets view of a judge studio (editors, inputs check, sampling, run, versions).

The view holds no judge state of its own: every control calls a method of the studio (a ``JudgeRunner``),
and every change of the studio, made from the widgets or from code, refreshes the panels through
``on_change``, so the notebook and the widgets never disagree. ipywidgets is imported when a view is
built, never when this module is imported.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from evalkit.analysis.formatting import count
from evalkit.notebook.judge_runner import SAMPLE_MODES

if TYPE_CHECKING:
    from evalkit.notebook.judge_runner import JudgeRunner


class StudioView:
    """ipywidgets over a ``JudgeStudio`` (any ``JudgeRunner``): every control calls a studio method, and
    every studio change (from the widgets or from code) refreshes the panels, so the notebook and the
    widgets never disagree.

    Controls: ``front_matter`` and ``sections`` (Textareas: ``sections[role]`` is the first section of that
    role, ``section_editors`` all of them in order), ``variables`` / ``problems`` (HTML), ``n``, ``how``,
    ``query``, ``seed`` and ``sample_button``, ``run_button``, ``save_button``, ``progress`` (an Output the
    run's progress bar is drawn in), ``status``, ``results``, ``versions``, ``compare_a`` / ``compare_b`` /
    ``compare_fill`` / ``compare_button`` / ``comparison``, ``align_button`` / ``alignment`` (``studio.align()``
    and the aligned versions), and ``message`` (beside the editors: why the
    front matter or the template cannot load).

    Nothing is hidden and nothing sticks: a failed action says why in ``status`` (or ``comparison``) as a
    sentence, never as a traceback, and every message clears when the next action starts. A run that
    errored rows says how many and shows the first message.
    """

    def __init__(self, studio: JudgeRunner):
        import ipywidgets as w

        self.studio = studio
        self._w = w
        self._syncing = False
        wide = w.Layout(width="100%")
        # Descriptions as wide as their text, and widths from the content: nothing is clipped.
        fit = {"description_width": "initial"}
        self.title = w.HTML()
        self.front_matter = w.Textarea(
            value=studio.front_matter_text, layout=w.Layout(width="100%", height="220px")
        )
        self.front_matter.observe(self._front_matter_edited, names="value")
        self.section_editors: list = []
        self.sections: dict[str, Any] = {}
        self.editors = w.Tab(layout=wide)
        self._build_editors()
        self.message = w.HTML(layout=wide)
        self.variables = w.HTML(layout=w.Layout(width="100%", overflow="auto"))
        self.problems = w.HTML(layout=wide)

        self.n = w.BoundedIntText(
            value=5, min=1, max=100_000, description="rows", layout=w.Layout(width="140px")
        )
        self.how = w.Dropdown(options=list(SAMPLE_MODES), value="random", description="how", style=fit,
                              layout=w.Layout(width="auto"))  # fmt: skip
        self.query = w.Text(placeholder="pandas query, e.g. item in [1, 4]", layout=w.Layout(width="320px"))
        self.seed = w.IntText(value=studio.seed, description="seed", layout=w.Layout(width="140px"))
        self.sample_button = w.Button(description="Sample", icon="random")
        self.sample_button.on_click(self._sample_clicked)
        self.sample_table = w.HTML(layout=wide)

        self.run_button = w.Button(description="Run", button_style="primary", icon="play")
        self.run_button.on_click(self._run_clicked)
        self.save_button = w.Button(description="Save", icon="save")
        self.save_button.on_click(self._save_clicked)
        self.progress = w.Output(layout=wide)
        self.status = w.HTML(layout=w.Layout(flex="1 1 auto"))
        scroll = w.Layout(width="100%", overflow="auto")
        self.results = w.HTML(layout=scroll)

        self.versions = w.HTML(layout=scroll)
        self.compare_a = w.Dropdown(description="compare", style=fit, layout=w.Layout(width="auto"))
        self.compare_b = w.Dropdown(description="with", style=fit, layout=w.Layout(width="auto"))
        self.compare_fill = w.Checkbox(value=False, description="judge missing rows first", indent=False,
                                       layout=w.Layout(width="auto"))  # fmt: skip
        self.compare_button = w.Button(description="Compare", icon="columns")
        self.compare_button.on_click(self._compare_clicked)
        self.comparison = w.HTML(layout=scroll)
        self.align_button = w.Button(description="Align to labels", icon="balance-scale")
        self.align_button.on_click(self._align_clicked)
        self.alignment = w.HTML(layout=scroll)

        from evalkit.notebook.snapshot import SnapshotBox

        self.container = SnapshotBox(
            [
                self.title,
                w.HBox(
                    [
                        w.VBox([self.editors, self.message], layout=w.Layout(flex="3 1 30em", min_width="0")),
                        w.VBox(
                            [w.HTML("<b>Inputs</b>"), self.variables, self.problems],
                            # 36em: below the editors, full width, unless the notebook is wide enough for both
                            layout=w.Layout(flex="2 1 36em", min_width="0", overflow="auto"),
                        ),
                    ],
                    layout=w.Layout(width="100%", flex_flow="row wrap"),
                ),
                w.HTML("<b>Sample</b>"),
                w.HBox(
                    [self.n, self.how, self.query, self.seed, self.sample_button],
                    layout=w.Layout(flex_flow="row wrap"),
                ),  # fmt: skip
                self.sample_table,
                w.HBox([self.run_button, self.save_button, self.status]),
                self.progress,
                w.HTML("<b>Results</b> (the version that ran last, beside the one that ran before it)"),
                self.results,
                w.HTML("<b>Versions</b>"),
                self.versions,
                w.HBox(
                    [self.compare_a, self.compare_b, self.compare_fill, self.compare_button],
                    layout=w.Layout(flex_flow="row wrap"),
                ),  # fmt: skip
                self.comparison,
                w.HTML(
                    f"<b>Alignment</b> (to the labels in {_labels_where(studio)}; held-out rows never reach a "
                    "prompt)"
                ),
                self.align_button,
                self.alignment,
            ],
            layout=wide,
            snapshot=self.snapshot_html,
            text=lambda: repr(studio),
        )
        studio.on_change(self.refresh)
        self.refresh(studio)

    # Editors -------------------------------------------------------------------------------------------
    def _build_editors(self) -> None:
        w = self._w
        for editor in self.section_editors:  # replaced editors: drop their front-end models
            editor.close()
        self.section_editors = []
        self.sections = {}
        titles = ["front matter"]
        for index, (role, text) in enumerate(self.studio.section_list()):
            editor = w.Textarea(value=text, layout=w.Layout(width="100%", height="260px"))
            editor.observe(lambda change, index=index: self._section_edited(index, change), names="value")
            self.section_editors.append(editor)
            self.sections.setdefault(role, editor)
            count = sum(1 for r, _ in self.studio.section_list()[: index + 1] if r == role)
            titles.append(role if count == 1 else f"{role} {count}")
        self.editors.children = [self.front_matter, *self.section_editors]
        self.editors.titles = tuple(titles)

    def _front_matter_edited(self, change) -> None:
        if not self._syncing:
            self.studio.set_front_matter(change["new"])

    def _section_edited(self, index: int, change) -> None:
        if not self._syncing:
            self.studio.set_section(index, change["new"])

    # Actions -------------------------------------------------------------------------------------------
    def _begin(self) -> None:
        """A new action starts: the messages of the previous one go."""
        self.status.value = ""
        if "failed:" in self.comparison.value:
            self.comparison.value = ""

    def _sample_clicked(self, _button=None) -> None:
        self._begin()
        try:
            self.studio.sample(n=self.n.value, how=self.how.value, query=self.query.value or None,
                               seed=self.seed.value)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - shown in the widget, which has no other way to report it
            self.status.value = _error_html("sample", exc)

    def _run_clicked(self, _button=None) -> None:
        self._begin()
        studio = self.studio
        problem = studio.syntax_error()
        if problem:  # the message beside the editor says it too
            self.status.value = _error_html("run", problem)
            return
        rows = studio.rows
        number = next(
            (v.number for v in studio.versions if v.sha256 == studio.sha256), len(studio.versions) + 1
        )
        self.status.value = (
            f"Running version {number} on {count(len(rows) if rows is not None else 5, 'row')}&hellip;"
        )
        self.run_button.disabled = True
        self.progress.clear_output()
        version, error = None, None
        try:
            # Caught inside the Output: in IPython its __exit__ swallows an exception (after printing the
            # traceback), which would leave the status at "Running".
            with self.progress:
                try:
                    version = studio.run(progress=True)
                except Exception as exc:  # noqa: BLE001
                    error = exc
        except Exception as exc:  # noqa: BLE001 - the Output itself failed
            error = error or exc
        finally:
            self.run_button.disabled = False
            if version is not None and error is None:
                self.status.value = _run_html(version)
            else:
                self.status.value = _error_html("run", error or "no version was made")

    def _save_clicked(self, _button=None) -> None:
        import html

        self._begin()
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                paths = self.studio.save()
        except Exception as exc:  # noqa: BLE001
            self.status.value = _error_html("save", exc)
            return
        note = f" ({count(len(caught), 'problem')}, see Inputs)" if caught else ""
        self.status.value = "Saved " + ", ".join(html.escape(str(p)) for p in paths) + note

    def _compare_clicked(self, _button=None) -> None:
        import html

        from evalkit.notebook.display import styled

        self._begin()
        self.comparison.value = ""
        a, b = self.compare_a.value, self.compare_b.value
        try:
            table = self.studio.compare_versions(a, b, fill=self.compare_fill.value, progress=False)
            diff = self.studio.diff(a, b) or "(same prompt)"
        except Exception as exc:  # noqa: BLE001
            self.comparison.value = _error_html("compare", exc)
            return
        self.comparison.value = (
            f"<div>{count(len(table), 'row')} both versions judged</div>"
            + styled(table).to_html()
            + f"<pre>{html.escape(diff)}</pre>"
        )

    def _align_clicked(self, _button=None) -> None:
        """``studio.align()``, then its held-out table, the aligned versions beside the original, and the diff."""
        import html

        from evalkit.notebook.display import styled

        self._begin()
        self.alignment.value = "Aligning (judge and optimiser calls)..."
        try:
            result = self.studio.align()
            versions = styled(self.studio.aligned_versions()).to_html()
        except Exception as exc:  # noqa: BLE001
            self.alignment.value = _error_html("align", exc)
            return
        self.alignment.value = result._repr_html_() + "<b>Versions on disk</b>" + versions
        if result.written is None:
            self.alignment.value += f"<div>{html.escape(result.verdict)}</div>"

    def snapshot_html(self) -> str:
        """The view's state as static HTML: the title, the prompt, the inputs check, the status, the results,
        the versions and the comparison (what a notebook reopened without its kernel shows)."""
        import html

        prompt = html.escape(self.studio.prompt_text)
        parts = [
            self.title.value,
            f"<details><summary>prompt</summary><pre>{prompt}</pre></details>",
            self.message.value,
            "<b>Inputs</b>" + self.variables.value + self.problems.value,
            f"<div>{self.status.value}</div>" if self.status.value else "",
        ]
        if self.studio.versions:
            parts += ["<b>Results</b>", self.results.value, "<b>Versions</b>", self.versions.value]
        if self.comparison.value:
            parts += ["<b>Comparison</b>", self.comparison.value]
        if self.alignment.value:
            parts += ["<b>Alignment</b>", self.alignment.value]
        return "".join(part for part in parts if part)

    # Refresh -------------------------------------------------------------------------------------------
    def refresh(self, studio: JudgeRunner | None = None) -> None:
        """Bring every panel up to date with the studio (called after each studio change)."""
        import html

        from evalkit.notebook.display import styled

        studio = self.studio
        self._syncing = True
        try:
            if self.front_matter.value != studio.front_matter_text:
                self.front_matter.value = studio.front_matter_text
            current = studio.section_list()
            if len(current) != len(self.section_editors) or any(
                role not in self.sections for role, _ in current
            ):
                self._build_editors()
            for editor, (_, text) in zip(self.section_editors, current):
                if editor.value != text:
                    editor.value = text
        finally:
            self._syncing = False
        state = "new, not saved yet" if studio.is_new else ("unsaved changes" if studio.dirty else "saved")
        self.title.value = (
            f"<h3 style='margin:0'>Judge <code>{html.escape(studio.name)}</code></h3>"
            f"<div>{html.escape(str(studio.home))} &middot; {state} &middot; prompt sha256 "
            f"<code>{studio.sha256[:12]}</code></div>"
        )
        try:
            self.variables.value = styled(studio.variables()).hide(axis="index").to_html()
        except Exception as exc:  # noqa: BLE001 - a half-typed front matter must not break the view
            self.variables.value = _error_html("inputs", exc)
        broken = studio.syntax_error()
        self.message.value = f"<div style='color:#842029'>{html.escape(broken)}</div>" if broken else ""
        problems = [] if broken else studio.problems()  # the syntax error is the message, shown once
        if broken:
            self.problems.value = "<div style='color:#6e7781'>Checks run once the prompt parses (see the message under the editor).</div>"
        elif problems:
            self.problems.value = (
                "<ul style='color:#842029'>"
                + "".join(f"<li>{html.escape(p)}</li>" for p in problems)
                + "</ul>"
            )
        else:
            self.problems.value = "<div style='color:#0b5d1e'>No problems found.</div>"
        if studio.rows is not None:
            columns = [
                c for c in ("item", "turn", "prompt", "response", "expected_response") if c in studio.rows
            ]
            self.sample_table.value = (
                f"<div>{html.escape(studio.sample_note)}</div>" + styled(studio.rows[columns]).to_html()
            )
        if studio.versions:
            self.results.value = styled(studio.results(), max_chars=200).to_html()
            self.versions.value = styled(studio.versions_table()).to_html()
            options = [(f"v{v.number} ({v.sha256[:8]})", v.number) for v in studio.versions]
            if list(self.compare_a.options) != options:
                self.compare_a.options = options
                self.compare_b.options = options
                self.compare_a.value = options[-2][1] if len(options) > 1 else options[-1][1]
                self.compare_b.value = options[-1][1]


def _labels_where(studio) -> str:
    """The studio's labels file (``studio.labels_path``), as HTML; "the file beside the document" when the
    table has no document."""
    import html

    from evalkit.errors import EvalkitError

    try:
        return html.escape(str(studio.labels_path))
    except EvalkitError:
        return "the file beside the document"


def _error_html(what: str, error: Exception | str) -> str:
    """``<what> failed: <message>`` in red: the message alone for the mistakes evalkit explains (ValueError,
    an ``EvalkitError``), with the exception's type otherwise."""
    import html

    from evalkit.errors import EvalkitError

    if isinstance(error, str) or isinstance(error, (ValueError, IndexError, EvalkitError)):
        text = str(error)
    else:
        text = f"{type(error).__name__}: {error}"
    return f"<span style='color:#842029'>{what} failed: {html.escape(text)}</span>"


def _run_html(version) -> str:
    """The status after a run: the version, then ``JudgeRun.describe()`` (red when rows errored)."""
    import html

    run = version.last_run
    text = html.escape(f"Version {version.number} ({version.sha256[:12]}): {run.describe()}")
    return f"<span style='color:#842029'>{text}</span>" if run.errors else text
