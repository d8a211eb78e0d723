"""JudgeDraft: the custom LLM judge being edited, in memory until ``save()``.

The draft is the ``.prompty`` (``prompt_text``, ``front_matter_text``, ``sections``, ``set_section``,
``declare_input``) and the ``.py`` wrapper that goes with it (``wrapper_text``: the judge's own, or one
generated for the declared inputs when the studio manages it). Nothing reaches the project's evaluator
folder before ``save()``, so a half-edited judge never runs in ``evalkit run``.

It also checks itself: ``variables()`` sets the declared ``inputs`` against the ``{{vars}}`` the template
uses and the case-table columns they are filled from, flagging the mistakes the seed warns about (an
undeclared variable renders empty; ``{{prompt}}`` is reserved by promptflow), and ``problems()`` says, as
sentences, everything that would make the judge misbehave. ``sha256`` identifies the prompt of each version.

Every change calls the ``on_change`` callbacks, which is how a view stays in step with the draft.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.analysis.formatting import count
from evalkit.errors import EvalkitError
from evalkit.judges.prompty import Prompty
from evalkit.notebook.judge_files import (
    COLUMN_FOR,
    MANAGED_MARK,
    ROLES,
    as_text,
    declared_inputs,
    forwarded_inputs,
    generated_wrapper,
    has_text,
    is_scaffold_wrapper,
    prompt_sections,
    scaffold_texts,
    sha256_of,
    split_prompty,
    write_judge,
)

if TYPE_CHECKING:
    import pandas as pd


class JudgeDraft:
    """The editable custom LLM judge ``name`` (see the module docs).

    Args:
        name: the judge's name; an existing ``custom_dir/<name>/<name>.prompty`` is opened, otherwise a new
            judge is started from the minimal judge scaffold, prompt and response only (``evalkit new --llm``
            also passes the reference answer and context); nothing is written before ``save()``.
        custom_dir: the project's custom evaluator folder, where ``save()`` writes.
        df: the case table whose columns fill the template's variables (``variables()``, ``render()``).
    """

    def __init__(
        self, name: str, custom_dir: str | Path = "custom-evaluators", df: pd.DataFrame | None = None
    ):
        self.name = name
        self.custom_dir = Path(custom_dir)
        self.df = df
        self.rows: pd.DataFrame | None = None  # the rows in view (a sample of df); None: all of df
        self.is_new, text, wrapper = self._open()
        self._front, self._body = split_prompty(text)
        self._wrapper_source = wrapper
        self._managed_wrapper = self.is_new or MANAGED_MARK in wrapper or is_scaffold_wrapper(name, wrapper)
        self._saved_sha = None if self.is_new else self.sha256
        self._listeners: list[Any] = []

    # Opening -------------------------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        """``custom_dir/<name>/``: where the judge lives (or will, once saved)."""
        return self.custom_dir / self.name

    def _open(self) -> tuple[bool, str, str]:
        """(is_new, prompty text, wrapper text) of an existing judge, or of the scaffold template."""
        prompty, module = self.home / f"{self.name}.prompty", self.home / f"{self.name}.py"
        if prompty.is_file():
            text = prompty.read_text(encoding="utf-8")
            if module.is_file():
                wrapper = module.read_text(encoding="utf-8")
            else:  # a prompt without its wrapper: the studio writes one on save()
                wrapper = generated_wrapper(self.name, declared_inputs(text))
            return False, text, wrapper
        if module.is_file():
            raise EvalkitError(
                f"{module} is a code-only evaluator (there is no {self.name}.prompty beside it); JudgeStudio "
                "edits LLM judges. Add a .prompty to make it one, or choose another name."
            )
        from evalkit.evaluators.registry import RESERVED_NAMES

        if self.name in RESERVED_NAMES:
            raise EvalkitError(
                f"'{self.name}' is a case-table column name; its results would overwrite that column. "
                f"Choose another name, such as 'check_{self.name}'."
            )
        text, wrapper = scaffold_texts(self.name)
        return True, text, wrapper

    # The draft -----------------------------------------------------------------------------------------
    @property
    def prompt_text(self) -> str:
        """The whole ``.prompty`` as it would be saved."""
        return f"---\n{self._front}---\n{self._body}"

    @prompt_text.setter
    def prompt_text(self, text: str) -> None:
        self._front, self._body = split_prompty(text)
        self._changed()

    @property
    def sha256(self) -> str:
        """sha256 of ``prompt_text``: what identifies a version of the prompt."""
        return sha256_of(self.prompt_text)

    @property
    def dirty(self) -> bool:
        """Whether the draft differs from what is saved in ``custom_dir``."""
        return self._saved_sha != self.sha256

    @property
    def front_matter_text(self) -> str:
        """The YAML between the ``---`` lines."""
        return self._front

    def set_front_matter(self, text: str) -> None:
        """Replace the YAML front matter (kept as typed, even when it is not valid YAML yet)."""
        self._front = text if text.endswith("\n") else text + "\n"
        self._changed()

    @property
    def front_matter(self) -> dict:
        """The front matter parsed; raises ValueError when it is not valid YAML (or not a mapping)."""
        import yaml

        try:
            data = yaml.safe_load(self._front) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"the front matter of {self.name}.prompty is not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError(f"the front matter of {self.name}.prompty must be a YAML mapping")
        return data

    def syntax_error(self) -> str:
        """What keeps the draft from loading, as one sentence: front matter that is not valid YAML (or not a
        mapping), or a template Jinja cannot parse (with its line in the ``.prompty``); empty when none."""
        from jinja2 import Environment, TemplateSyntaxError

        try:
            self.front_matter  # noqa: B018 - parsing is the check
        except ValueError as exc:
            return str(exc)
        try:  # compiling finds what parsing does not, such as an unknown filter
            Environment().from_string(self._body)
        except TemplateSyntaxError as exc:
            line = self._front.count("\n") + 2 + (exc.lineno or 1)
            return f"the template of {self.name}.prompty does not parse (line {line}): {exc.message}"
        return ""

    def check(self) -> None:
        """Raise ValueError with ``syntax_error()``'s sentence when the draft cannot load."""
        problem = self.syntax_error()
        if problem:
            raise ValueError(problem)

    @property
    def sections(self) -> dict[str, str]:
        """Section text by role (``system``, ``user`` ...; the first one of each role)."""
        out: dict[str, str] = {}
        for role, _, content in prompt_sections(self._body)[1]:
            out.setdefault(role, content.strip("\n"))
        return out

    def section_list(self) -> list[tuple[str, str]]:
        """Every section in order as (role, text), repeated roles (few-shot turns) included."""
        return [(role, content.strip("\n")) for role, _, content in prompt_sections(self._body)[1]]

    def set_section(self, role: str | int, text: str) -> None:
        """Replace the text of the first ``role`` section (or of the section at position ``role``).

        A role the prompt does not have yet is appended as a new section.
        """
        preamble, parts = prompt_sections(self._body)
        if isinstance(role, int):
            index = role
            if not 0 <= index < len(parts):
                raise IndexError(
                    f"the prompt has {count(len(parts), 'section')}; there is no section {index}"
                )
        else:
            role = role.strip().lower()
            if role not in ROLES:
                raise ValueError(f"unknown section {role!r}: a .prompty section is one of {', '.join(ROLES)}")
            index = next((i for i, (r, _, _) in enumerate(parts) if r == role), None)
            if index is None:
                body = self._body if self._body.endswith("\n") or not self._body else self._body + "\n"
                content = text.strip("\n")
                self._body = body + ("\n" if body.strip() else "") + f"{role}:\n{content}\n"
                self._changed()
                return
        content = text.strip("\n") + "\n"
        parts[index] = (parts[index][0], parts[index][1], content)
        self._body = preamble + "".join(marker + body for _, marker, body in parts)
        self._changed()

    def declare_input(self, variable: str, type_: str = "string") -> None:
        """Add ``variable`` to the front matter's ``inputs:`` block (creating the block when missing)."""
        if variable in self._declared():
            return
        lines = self._front.splitlines(keepends=True)
        entry = [f"  {variable}:\n", f"    type: {type_}\n"]
        at = next((i for i, line in enumerate(lines) if line.rstrip() == "inputs:"), None)
        if at is None:
            lines += ["inputs:\n", *entry]
        else:
            end = at + 1
            while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
                end += 1
            lines[end:end] = entry
        self.set_front_matter("".join(lines))

    def prompty(self) -> Prompty:
        """The draft as a ``evalkit.judges.prompty.Prompty`` (raises ValueError on invalid front matter)."""
        return Prompty(self.home / f"{self.name}.prompty", self.front_matter, self._body)

    def render(self, row: Any = None) -> list[dict]:
        """The chat messages the judge would send for ``row`` (a label of ``df``, a dict, or the first
        sampled row): each variable the wrapper passes on, filled from its case-table column."""
        if row is None:
            rows = self.rows if self.rows is not None and len(self.rows) else self.df
            if rows is None or not len(rows):
                raise ValueError("no row to render: give a row, or a case table (df=...)")
            row = rows.iloc[0]
        elif not isinstance(row, dict) and self.df is not None:
            row = self.df.loc[row]
        forwarded = forwarded_inputs(self.wrapper_text)
        values = {
            var: as_text(row.get(column))
            for var, column in COLUMN_FOR.items()
            if forwarded is None or var in forwarded
        }
        return self.prompty().render(**values)

    # The inputs check ----------------------------------------------------------------------------------
    def _declared(self) -> dict:
        try:
            inputs = self.front_matter.get("inputs") or {}
        except ValueError:
            return {}
        return inputs if isinstance(inputs, dict) else {}

    def variables(self) -> pd.DataFrame:
        """Declared inputs vs the ``{{vars}}`` the template uses vs the case-table columns they come from.

        One row per variable: ``declared``, ``used``, ``column`` (the case-table column the wrapper fills it
        from, empty when none), ``filled`` (rows of the sample, else of ``df``, with a value in that column)
        and ``problem`` (empty when fine).
        """
        import pandas as pd

        declared = self._declared()
        try:  # front matter that does not parse declares nothing we can know: say so, not "not declared"
            self.front_matter  # noqa: B018 - parsing is the check
            readable = True
        except ValueError:
            readable = False
        used = set(Prompty(self.home, {}, self._body).variables())
        forwarded = forwarded_inputs(self.wrapper_text)
        rows = self.rows if self.rows is not None and len(self.rows) else self.df
        records = []
        for var in sorted(set(declared) | used, key=lambda v: (v not in COLUMN_FOR, v)):
            column = COLUMN_FOR.get(var, "")
            spec = declared.get(var) if isinstance(declared.get(var), dict) else {}
            problem = ""
            if var == "prompt":
                problem = "reserved by promptflow: call it user_prompt; the wrapper passes prompt on as that"
            elif not readable:
                problem = "not checked until the front matter parses"
            elif var in used and var not in declared:
                problem = (
                    f"used but not declared under inputs: it renders empty; add '{var}: {{type: string}}'"
                )
            elif var in declared and var not in used:
                problem = "declared but the template does not use it"
            elif not column and "default" not in spec:
                problem = "no case-table column fills it and it has no default: it renders empty"
            elif column and forwarded is not None and var not in forwarded:
                problem = f"{self.name}.py does not pass it to the flow: it renders empty"
            filled = None
            if column and rows is not None and column in rows.columns:
                filled = f"{int(rows[column].map(has_text).sum())}/{len(rows)}"
            records.append(
                {
                    "variable": var,
                    "declared": (var in declared) if readable else pd.NA,
                    "used": var in used,
                    "column": column,
                    "filled": filled or "",
                    "problem": problem,
                }
            )
        return pd.DataFrame(records, columns=["variable", "declared", "used", "column", "filled", "problem"])

    def problems(self) -> list[str]:
        """Everything that would make the judge misbehave, as sentences (empty when none)."""
        broken = self.syntax_error()
        if broken:
            return [broken]
        front = self.front_matter
        found = []
        if not front.get("inputs"):
            found.append(
                "no inputs: block: promptflow passes no variables and the template renders empty; declare "
                "every {{variable}} under inputs: with type: string"
            )
        table = self.variables()
        for var, problem in zip(table["variable"], table["problem"]):
            if problem and not problem.startswith("declared but"):
                found.append(f"{{{{{var}}}}}: {problem}")
        if "response" not in set(table["variable"][table["used"]]):
            found.append("the template never shows the judge the agent's {{response}}")
        parameters = (front.get("model") or {}).get("parameters") or {}
        kind = (parameters.get("response_format") or {}).get("type") if isinstance(parameters, dict) else None
        if kind not in ("json_object", "json_schema"):
            found.append(
                "model.parameters.response_format is not json_object: the judge may answer in prose and "
                "the score cannot be parsed"
            )
        if "score" not in self._body:
            found.append('the prompt never asks for a "score": ask for {"score": <1-5>, "reason": "..."}')
        return found

    # The wrapper ---------------------------------------------------------------------------------------
    @property
    def wrapper_text(self) -> str:
        """The ``.py`` wrapper that goes with the draft.

        The judge's own wrapper when it passes every declared input the case table can fill; otherwise,
        for a wrapper the studio manages (a new judge, or one carrying ``MANAGED_MARK``), one regenerated
        for the declared inputs. A hand-written wrapper is never rewritten (``variables()`` flags what it
        does not pass).
        """
        needed = [var for var in COLUMN_FOR if var in self._declared()]
        forwarded = forwarded_inputs(self._wrapper_source)
        if forwarded is not None and set(needed) <= forwarded:
            return self._wrapper_source
        if self._managed_wrapper:
            return generated_wrapper(self.name, needed)
        return self._wrapper_source

    # Saving --------------------------------------------------------------------------------------------
    def save(self, custom_dir: str | Path | None = None) -> list[Path]:
        """Write ``<name>.prompty`` and the ``<name>.py`` wrapper to ``custom_dir/<name>/`` (default: the
        studio's folder); returns the paths. Raises ValueError when the front matter is not valid YAML
        or the template does not parse; other problems (``problems()``) are reported as warnings, since a draft may be saved mid-work."""
        self.check()  # never save a file the loader cannot read
        for problem in self.problems():
            warnings.warn(f"{self.name}: {problem}", stacklevel=2)
        home = Path(custom_dir) / self.name if custom_dir is not None else self.home
        prompt_text, wrapper_text = self.prompt_text, self.wrapper_text
        paths = write_judge(home, self.name, prompt_text, wrapper_text, atomic=True)
        if custom_dir is None or Path(custom_dir) == self.custom_dir:
            self._saved_sha = sha256_of(prompt_text)
            self._wrapper_source = wrapper_text
            self.is_new = False
        self._changed()
        return paths

    # Listeners -----------------------------------------------------------------------------------------
    def on_change(self, callback) -> None:
        """Call ``callback(studio)`` after every change of the draft, the sample or the versions."""
        self._listeners.append(callback)

    def _changed(self) -> None:
        for callback in list(self._listeners):
            callback(self)
