"""JudgeStudio: write, try and compare versions of a custom LLM judge from a notebook.

A custom LLM judge is two files in ``custom-evaluators/<name>/`` (see the custom-evaluator seed): a
``.prompty`` (YAML front matter, then ``system:`` / ``user:`` sections using ``{{variables}}``) and a ``.py``
wrapper class that loads it with promptflow and forwards the row's fields to it. Getting a judge right is
an edit-run-compare loop; the studio keeps that loop in one object:

* the draft prompt (``prompt_text``, ``front_matter_text``, ``sections``, ``set_section``), in memory until
  ``save()``, so a half-edited judge never reaches the project's evaluator folder;
* the inputs check (``variables()``): declared ``inputs`` against the ``{{vars}}`` the template uses and the
  case-table columns they are filled from, flagging the mistakes the seed warns about (an undeclared
  variable renders empty; ``{{prompt}}`` is reserved by promptflow);
* a sample of rows (``sample``: random with a seed, failing, or a pandas query);
* ``run()``: the draft is written to a private staging folder and run through ``evalkit.evaluate``
  exactly as a real run would (the judge pool's concurrency and retries, the judge cache, a progress
  bar), so what the studio shows is what ``evalkit run`` will do;
* ``versions``: every run, with the prompt's sha256, a timestamp and the scores per row, so any two can be
  compared (``compare_versions``) and the prompt changes between them read (``diff``).

``widget()`` is a view over this model (ipywidgets, imported on first use); every action it offers is a
method here, so the studio can be scripted and tested without a frontend.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import shutil
import tempfile
import time
import warnings
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.judges.prompty import _FRONT_MATTER, _ROLE, Prompty

if TYPE_CHECKING:
    import pandas as pd

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
#: ``sample(how=...)`` choices.
SAMPLE_MODES = ("random", "failing", "query", "first")
#: The line that marks a wrapper as the studio's own, so it may be rewritten when the inputs change.
MANAGED_MARK = "Written by evalkit's JudgeStudio"

_WRAPPER = '''"""{name}: an LLM judge scoring 1-5; its prompt is {name}.prompty beside this file.

{mark}. It passes on the inputs that
{name}.prompty declares ({declared}).
The studio rewrites this file when those inputs change, as long as the line above is here;
delete that line to make the wrapper yours.
"""

import json
from pathlib import Path


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
        data = json.loads(answer) if isinstance(answer, str) else answer
        return {{"score": data["score"], "reason": data.get("reason", "")}}
'''


@dataclass(repr=False)
class JudgeVersion:
    """One run of the judge: the exact prompt and wrapper it ran, when, and its result per row.

    ``results`` is indexed by the case table's row labels, with columns ``item``, ``turn``, ``score``,
    ``result`` (pass / fail / error), ``reason`` and ``error``.
    """

    number: int
    sha256: str
    timestamp: str
    prompt_text: str
    wrapper_text: str
    threshold: float
    results: pd.DataFrame
    seconds: float
    calls: int = 0
    cache_hits: int = 0
    note: str = ""
    files: list[Path] = field(default_factory=list)

    def __repr__(self) -> str:
        s = self.summary()
        rate = "n/a" if s["pass_rate"] != s["pass_rate"] else f"{s['pass_rate']:.0%}"
        return (
            f"<JudgeVersion {self.number} ({s['sha256']}): {s['rows']} rows, "
            f"mean score {s['mean_score']:.2f}, "
            f"pass rate {rate}, {s['errors']} errors, {self.calls} judge calls, {self.cache_hits} cached>"
        )

    @property
    def scores(self) -> dict:
        """Score per row label (NaN where the judge errored)."""
        return self.results["score"].to_dict()

    def summary(self) -> dict:
        """One line of ``JudgeStudio.versions_table()``."""
        outcome = self.results["result"]
        judged = outcome.isin(["pass", "fail"])
        return {
            "version": self.number,
            "sha256": self.sha256[:12],
            "timestamp": self.timestamp,
            "rows": len(self.results),
            "mean_score": self.results["score"].mean(),
            "pass_rate": float((outcome == "pass").sum() / judged.sum()) if judged.any() else float("nan"),
            "errors": int((outcome == "error").sum()),
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "seconds": round(self.seconds, 3),
            "note": self.note,
        }


class JudgeStudio:
    """Edit, run and compare versions of the custom LLM judge ``name`` (see the module docs).

    Args:
        name: the judge's name; an existing ``custom_dir/<name>/<name>.prompty`` is opened, otherwise a new
            judge is started from ``evalkit new --llm``'s template (nothing is written before ``save()``).
        custom_dir: the project's custom evaluator folder, where ``save()`` writes.
        df: the case table to try the judge on (``evalkit.load``, or a scored table from
            ``evalkit.evaluate``, whose ``status`` / ``<name>_result`` columns ``sample(how="failing")``
            reads).
        model_config: the judge model (default: from the environment, as ``evalkit.evaluate`` finds it).
        threshold, options: the judge's configuration for rows whose own evaluator map does not name it.
        concurrency, cache: passed to ``evalkit.evaluate`` (judge calls in flight; the judge cache).
        seed: the default seed of ``sample(how="random")``.
    """

    def __init__(
        self,
        name: str,
        custom_dir: str | Path = "custom-evaluators",
        df: pd.DataFrame | None = None,
        model_config: dict | None = None,
        *,
        threshold: float = 3,
        options: dict | None = None,
        concurrency: int = 8,
        cache: Any = True,
        seed: int = 0,
    ):
        self.name = name
        self.custom_dir = Path(custom_dir)
        self.df = df
        self.model_config = model_config
        self.threshold = threshold
        self.options = dict(options or {})
        self.concurrency = concurrency
        self.cache = cache
        self.seed = seed
        self.versions: list[JudgeVersion] = []
        self.rows: pd.DataFrame | None = None  # the current sample
        self.sample_note = ""
        self.last_scored: pd.DataFrame | None = None  # evalkit.evaluate's table of the latest run
        self.is_new, text, wrapper = self._open()
        self._front, self._body = _split(text)
        self._wrapper_source = wrapper
        self._managed_wrapper = self.is_new or MANAGED_MARK in wrapper or _is_scaffold_wrapper(name, wrapper)
        self._saved_sha = None if self.is_new else self.sha256
        self._listeners: list[Any] = []
        self._view = None
        self._stage = Path(tempfile.mkdtemp(prefix=f"evalkit-studio-{name}-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self._stage), True)

    def __repr__(self) -> str:
        state = "new" if self.is_new else ("unsaved changes" if self.dirty else "saved")
        return f"<JudgeStudio {self.name!r} in {self.custom_dir} ({state}), {len(self.versions)} version(s)>"

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
                wrapper = _generated_wrapper(self.name, _declared_inputs(text))
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
        text, wrapper = _scaffold_texts(self.name)
        return True, text, wrapper

    # The draft -----------------------------------------------------------------------------------------
    @property
    def prompt_text(self) -> str:
        """The whole ``.prompty`` as it would be saved."""
        return f"---\n{self._front}---\n{self._body}"

    @prompt_text.setter
    def prompt_text(self, text: str) -> None:
        self._front, self._body = _split(text)
        self._changed()

    @property
    def sha256(self) -> str:
        """sha256 of ``prompt_text``: what identifies a version of the prompt."""
        return _sha256(self.prompt_text)

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

    @property
    def sections(self) -> dict[str, str]:
        """Section text by role (``system``, ``user`` ...; the first one of each role)."""
        out: dict[str, str] = {}
        for role, _, content in _sections(self._body)[1]:
            out.setdefault(role, content.strip("\n"))
        return out

    def section_list(self) -> list[tuple[str, str]]:
        """Every section in order as (role, text), repeated roles (few-shot turns) included."""
        return [(role, content.strip("\n")) for role, _, content in _sections(self._body)[1]]

    def set_section(self, role: str | int, text: str) -> None:
        """Replace the text of the first ``role`` section (or of the section at position ``role``).

        A role the prompt does not have yet is appended as a new section.
        """
        preamble, parts = _sections(self._body)
        if isinstance(role, int):
            index = role
            if not 0 <= index < len(parts):
                raise IndexError(f"the prompt has {len(parts)} section(s); there is no section {index}")
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
        forwarded = _forwarded(self.wrapper_text)
        values = {
            var: _text(row.get(column))
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
        used = set(Prompty(self.home, {}, self._body).variables())
        forwarded = _forwarded(self.wrapper_text)
        rows = self.rows if self.rows is not None and len(self.rows) else self.df
        records = []
        for var in sorted(set(declared) | used, key=lambda v: (v not in COLUMN_FOR, v)):
            column = COLUMN_FOR.get(var, "")
            spec = declared.get(var) if isinstance(declared.get(var), dict) else {}
            problem = ""
            if var == "prompt":
                problem = "reserved by promptflow: call it user_prompt; the wrapper passes prompt on as that"
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
                filled = f"{int(rows[column].map(_has_text).sum())}/{len(rows)}"
            records.append(
                {
                    "variable": var,
                    "declared": var in declared,
                    "used": var in used,
                    "column": column,
                    "filled": filled or "",
                    "problem": problem,
                }
            )
        return pd.DataFrame(records, columns=["variable", "declared", "used", "column", "filled", "problem"])

    def problems(self) -> list[str]:
        """Everything that would make the judge misbehave, as sentences (empty when none)."""
        try:
            front = self.front_matter
        except ValueError as exc:
            return [str(exc)]
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
        forwarded = _forwarded(self._wrapper_source)
        if forwarded is not None and set(needed) <= forwarded:
            return self._wrapper_source
        if self._managed_wrapper:
            return _generated_wrapper(self.name, needed)
        return self._wrapper_source

    # Sampling ------------------------------------------------------------------------------------------
    def sample(
        self, n: int = 5, how: str = "random", *, query: str | None = None, seed: int | None = None
    ) -> pd.DataFrame:
        """Choose the rows ``run()`` judges; returns them (also kept as ``studio.rows``).

        ``how``: ``"random"`` (``n`` rows, reproducible with ``seed``, default the studio's seed),
        ``"failing"`` (the first ``n`` failing rows: where the table's ``<name>_result`` column says fail or
        error, else where the latest version did, else where the row ``status`` is not pass),
        ``"query"`` (the first ``n`` rows matching the pandas ``query``, e.g. ``"item in [1, 4]"`` or
        ``"prompt.str.contains('leave')"``), ``"first"`` (the first ``n``). Giving ``query`` implies
        ``how="query"``. Only rows with a recorded response are sampled: the judge has nothing to score in
        the others.
        """
        if self.df is None:
            raise ValueError("no case table to sample from: JudgeStudio(..., df=evalkit.load(...))")
        if query is not None and how == "random":
            how = "query"
        if how not in SAMPLE_MODES:
            raise ValueError(f"how={how!r}: choose one of {', '.join(SAMPLE_MODES)}")
        if n < 1:
            raise ValueError("n must be at least 1")
        pool = self.df[self.df["response"].map(_has_text)] if "response" in self.df.columns else self.df
        skipped = len(self.df) - len(pool)
        if how == "random":
            seed = self.seed if seed is None else seed
            picked = pool.sample(n=min(n, len(pool)), random_state=seed)
            chosen = pool.loc[[label for label in pool.index if label in set(picked.index)]]
            note = f"{len(chosen)} random rows (seed {seed})"
        elif how == "first":
            chosen, note = pool.head(n), f"the first {min(n, len(pool))} rows"
        elif how == "query":
            if not query:
                raise ValueError('how="query" needs query=..., a pandas query such as "item in [1, 4]"')
            matched = pool.query(query, engine="python")
            chosen, note = (
                matched.head(n),
                f"{min(n, len(matched))} of {len(matched)} rows matching {query!r}",
            )
        else:
            failing, source = self._failing(pool)
            if not len(failing):
                raise ValueError(f"no failing rows ({source}); sample how='random' or by query instead")
            chosen, note = (
                failing.head(n),
                f"{min(n, len(failing))} of {len(failing)} failing rows ({source})",
            )
        if not len(chosen):
            raise ValueError(f"the sample is empty: {note}")
        if skipped:
            note += f"; {skipped} row(s) without a response left out"
        self.rows, self.sample_note = chosen, note
        self._changed()
        return chosen

    def _failing(self, pool: pd.DataFrame) -> tuple[pd.DataFrame, str]:
        column = f"{self.name}_result"
        if column in pool.columns:
            return pool[pool[column].isin(["fail", "error"])], f"{column} is fail or error"
        if self.versions:
            latest = self.versions[-1]
            bad = latest.results.index[latest.results["result"].isin(["fail", "error"])]
            return pool.loc[[label for label in pool.index if label in set(bad)]], (
                f"version {latest.number} scored them fail or error"
            )
        if "status" in pool.columns:
            return pool[pool["status"].isin(["fail", "partial", "error"])], "row status is not pass"
        raise ValueError(
            "nothing says which rows fail: give a scored table (df=evalkit.evaluate(...)), or run() the "
            "judge once and sample its failures"
        )

    # Running -------------------------------------------------------------------------------------------
    def run(
        self, rows: pd.DataFrame | None = None, *, progress: bool | None = None, note: str = ""
    ) -> JudgeVersion:
        """Run the draft judge on ``rows`` (default: the sample; 5 random rows when there is none).

        The draft is written to a staging folder and scored by ``evalkit.evaluate`` with the studio's
        ``model_config``, ``concurrency`` and ``cache``, exactly as a real run would score it. Each row keeps
        its own configuration of the judge when its evaluator map names it (threshold, options); other rows
        use the studio's ``threshold`` and ``options``. The run becomes a new entry of ``versions``.
        """
        import evalkit
        from evalkit.documents.case_table import CASE_COLUMNS

        if rows is None:
            rows = self.rows if self.rows is not None else self.sample()
        if not len(rows):
            raise ValueError("no rows to run the judge on")
        prompt_text, wrapper_text = self.prompt_text, self.wrapper_text
        self.front_matter  # noqa: B018 - fail now, with the YAML message, rather than inside promptflow
        number = len(self.versions) + 1
        stage = self._stage / f"v{number}"
        files = _write_judge(stage / self.name, self.name, prompt_text, wrapper_text)

        table = rows[[c for c in CASE_COLUMNS if c in rows.columns]].copy()
        table.attrs = {}
        default = {self.name: {"threshold": self.threshold, "options": dict(self.options)}}
        maps = table["evaluators"] if "evaluators" in table.columns else [None] * len(table)
        table["evaluators"] = [
            {self.name: m[self.name]} if isinstance(m, dict) and self.name in m else default for m in maps
        ]
        started = time.perf_counter()
        scored = evalkit.evaluate(
            table,
            custom_dir=stage,
            model_config=self.model_config,
            concurrency=self.concurrency,
            cache=self.cache,
            progress=progress,
        )
        seconds = time.perf_counter() - started
        results = _results(scored, self.name)
        judge = (scored.attrs.get("evalkit") or {}).get("judge") or {}
        version = JudgeVersion(
            number=number,
            sha256=_sha256(prompt_text),
            timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            prompt_text=prompt_text,
            wrapper_text=wrapper_text,
            threshold=self.threshold,
            results=results,
            seconds=seconds,
            calls=int(judge.get("calls", 0)),
            cache_hits=int(judge.get("cache_hits", 0)),
            note=note,
            files=files,
        )
        self.versions.append(version)
        self.last_scored = scored
        self._changed()
        return version

    # Versions ------------------------------------------------------------------------------------------
    def version(self, ref: int | JudgeVersion) -> JudgeVersion:
        """A version by number (1 is the first run) or by position from the end (-1 is the latest)."""
        if isinstance(ref, JudgeVersion):
            return ref
        if not self.versions:
            raise ValueError("no versions yet: run() the judge first")
        if ref < 0:
            if -ref > len(self.versions):
                raise IndexError(f"there are only {len(self.versions)} version(s)")
            return self.versions[ref]
        if not 1 <= ref <= len(self.versions):
            raise IndexError(f"no version {ref}: versions are numbered 1 to {len(self.versions)}")
        return self.versions[ref - 1]

    def versions_table(self) -> pd.DataFrame:
        """One row per version: sha256 (12 characters), time, rows, mean score, pass rate, judge calls and
        cache hits, seconds, note."""
        import pandas as pd

        columns = ["version", "sha256", "timestamp", "rows", "mean_score", "pass_rate", "errors", "calls",
                   "cache_hits", "seconds", "note"]  # fmt: skip
        return pd.DataFrame([v.summary() for v in self.versions], columns=columns).set_index("version")

    def compare_versions(self, a: int | JudgeVersion = -2, b: int | JudgeVersion = -1) -> pd.DataFrame:
        """Scores, outcomes and reasons of versions ``a`` and ``b`` side by side, one row per row judged by
        either (outer join on the case table's row labels).

        Columns: ``item``, ``turn``, ``prompt``, ``v<a>_score``, ``v<b>_score``, ``delta`` (b - a),
        ``v<a>_result``, ``v<b>_result``, ``v<a>_reason``, ``v<b>_reason``, ``changed`` (score or outcome
        differs).
        """
        va, vb = self.version(a), self.version(b)
        if va.number == vb.number:
            raise ValueError(f"compare two different versions (both are version {va.number})")
        return _side_by_side(self, va, vb)

    def results(self) -> pd.DataFrame:
        """The latest version beside the one before it (``compare_versions(-2, -1)``); the latest alone
        when there is only one."""
        if len(self.versions) >= 2:
            return self.compare_versions(-2, -1)
        return _side_by_side(self, None, self.version(-1))

    def diff(self, a: int | JudgeVersion = -2, b: int | JudgeVersion = -1) -> str:
        """The prompt changes from version ``a`` to version ``b``, as a unified diff."""
        va, vb = self.version(a), self.version(b)
        lines = difflib.unified_diff(
            va.prompt_text.splitlines(keepends=True),
            vb.prompt_text.splitlines(keepends=True),
            fromfile=f"v{va.number} ({va.sha256[:12]})",
            tofile=f"v{vb.number} ({vb.sha256[:12]})",
        )
        return "".join(lines)

    # Saving --------------------------------------------------------------------------------------------
    def save(self, custom_dir: str | Path | None = None) -> list[Path]:
        """Write ``<name>.prompty`` and the ``<name>.py`` wrapper to ``custom_dir/<name>/`` (default: the
        studio's folder); returns the paths. Raises ValueError when the front matter is not valid YAML;
        other problems (``problems()``) are reported as warnings, since a draft may be saved mid-work."""
        self.front_matter  # noqa: B018 - never save a file the loader cannot read
        for problem in self.problems():
            warnings.warn(f"{self.name}: {problem}", stacklevel=2)
        home = Path(custom_dir) / self.name if custom_dir is not None else self.home
        prompt_text, wrapper_text = self.prompt_text, self.wrapper_text
        paths = _write_judge(home, self.name, prompt_text, wrapper_text, atomic=True)
        if custom_dir is None or Path(custom_dir) == self.custom_dir:
            self._saved_sha = _sha256(prompt_text)
            self._wrapper_source = wrapper_text
            self.is_new = False
        self._changed()
        return paths

    # The view ------------------------------------------------------------------------------------------
    def widget(self):
        """An ipywidgets container over this studio: editors, the inputs check, sampling, run, versions."""
        if self._view is None:
            self._view = StudioView(self)
        return self._view.container

    @property
    def view(self):
        """The widget view (built by ``widget()``), giving access to its individual controls."""
        if self._view is None:
            self.widget()
        return self._view

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget())

    def on_change(self, callback) -> None:
        """Call ``callback(studio)`` after every change of the draft, the sample or the versions."""
        self._listeners.append(callback)

    def _changed(self) -> None:
        for callback in list(self._listeners):
            callback(self)


# Helpers ---------------------------------------------------------------------------------------------------
def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _split(text: str) -> tuple[str, str]:
    """(front matter, body) with the loader's rules (``evalkit.judges.prompty``): front matter is what stands
    between the first ``---`` line and the last one."""
    text = text.replace("\r\n", "\n")
    match = _FRONT_MATTER.search(text)
    if not match:
        raise ValueError("a .prompty file starts with YAML front matter between '---' lines")
    return match.group(1), match.group(2)


def _sections(body: str) -> tuple[str, list[tuple[str, str, str]]]:
    """(text before the first role marker, [(role, marker text, content), ...]) of a prompt body."""
    matches = list(_ROLE.finditer(body))
    if not matches:
        return body, []
    parts = []
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        parts.append((match.group(1).lower(), match.group(0), body[match.end() : end]))
    return body[: matches[0].start()], parts


def _declared_inputs(text: str) -> list[str]:
    import yaml

    try:
        inputs = (yaml.safe_load(_split(text)[0]) or {}).get("inputs") or {}
    except (ValueError, yaml.YAMLError, AttributeError):
        return []
    return [var for var in COLUMN_FOR if var in inputs]


def _forwarded(wrapper: str) -> set[str] | None:
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


def _scaffold_texts(name: str) -> tuple[str, str]:
    """The ``.prompty`` and ``.py`` that ``evalkit new NAME --llm`` writes (it also checks the name)."""
    from evalkit.evaluators.scaffold import scaffold

    with tempfile.TemporaryDirectory(prefix="evalkit-scaffold-") as folder:
        scaffold(name, folder, llm=True)
        home = Path(folder) / name
        return (
            (home / f"{name}.prompty").read_text(encoding="utf-8"),
            (home / f"{name}.py").read_text(encoding="utf-8"),
        )


def _is_scaffold_wrapper(name: str, wrapper: str) -> bool:
    """Whether ``wrapper`` is, unchanged, the one ``evalkit new NAME --llm`` writes."""
    try:
        return wrapper == _scaffold_texts(name)[1]
    except EvalkitError:  # an existing judge whose name the scaffold would refuse
        return False


def _generated_wrapper(name: str, declared: list[str]) -> str:
    """A wrapper in the seed's contract that forwards ``declared`` (names from ``COLUMN_FOR``)."""
    arguments = ", ".join(f"{var}={COLUMN_FOR[var]}" for var in COLUMN_FOR if var in declared)
    return _WRAPPER.format(
        name=name,
        class_name=_class_name(name),
        mark=MANAGED_MARK,
        declared=", ".join(var for var in COLUMN_FOR if var in declared) or "none",
        arguments=arguments,
    )


def _write_judge(
    home: Path, name: str, prompt_text: str, wrapper_text: str, *, atomic: bool = False
) -> list[Path]:
    home.mkdir(parents=True, exist_ok=True)
    paths = [home / f"{name}.prompty", home / f"{name}.py"]
    for path, text in zip(paths, (prompt_text, wrapper_text)):
        if atomic:
            from evalkit.documents.atomic import atomic_write

            with atomic_write(path) as handle:
                handle.write(text)
        else:
            path.write_text(text, encoding="utf-8")
    return paths


def _has_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _results(scored: pd.DataFrame, name: str) -> pd.DataFrame:
    """The judge's columns of a scored table as ``item, turn, score, result, reason, error``."""
    import pandas as pd

    def column(suffix: str):
        key = f"{name}{suffix}"
        return scored[key] if key in scored.columns else pd.Series(None, index=scored.index, dtype=object)

    return pd.DataFrame(
        {
            "item": scored["item"],
            "turn": scored["turn"],
            "score": pd.to_numeric(column(""), errors="coerce"),
            "result": column("_result"),
            "reason": column("_reason"),
            "error": column("_error"),
        },
        index=scored.index,
    )


def _side_by_side(studio: JudgeStudio, va: JudgeVersion | None, vb: JudgeVersion) -> pd.DataFrame:
    import pandas as pd

    versions = [v for v in (va, vb) if v is not None]
    labels = list(dict.fromkeys(label for v in versions for label in v.results.index))
    out = pd.DataFrame(index=pd.Index(labels))
    for key in ("item", "turn"):
        merged = pd.concat([v.results[key] for v in versions])
        out[key] = merged[~merged.index.duplicated()].reindex(out.index)
    source = studio.df if studio.df is not None and "prompt" in studio.df.columns else None
    if source is not None:
        out["prompt"] = [source.at[label, "prompt"] if label in source.index else None for label in labels]
    for part in ("score", "result", "reason"):
        for v in versions:
            out[f"v{v.number}_{part}"] = v.results[part].reindex(out.index)
        if part == "score" and va is not None:
            out["delta"] = out[f"v{vb.number}_score"] - out[f"v{va.number}_score"]
    if va is not None:
        a, b = out[f"v{va.number}_score"], out[f"v{vb.number}_score"]
        out["changed"] = ~((a == b) | (a.isna() & b.isna())) | (
            out[f"v{va.number}_result"].fillna("") != out[f"v{vb.number}_result"].fillna("")
        )
    return out


# The widget view ------------------------------------------------------------------------------------------
class StudioView:
    """ipywidgets over a ``JudgeStudio``: every control calls a studio method, and every studio change
    (from the widgets or from code) refreshes the panels, so the notebook and the widgets never disagree.

    Controls: ``front_matter`` and ``sections`` (Textareas: ``sections[role]`` is the first section of that
    role, ``section_editors`` all of them in order), ``variables`` / ``problems`` (HTML), ``n``, ``how``,
    ``query``, ``seed`` and ``sample_button``, ``run_button``, ``save_button``, ``progress`` (an Output the
    run's progress bar is drawn in), ``status``, ``results``, ``versions``, ``compare_a`` / ``compare_b`` /
    ``compare_button`` / ``comparison``.
    """

    def __init__(self, studio: JudgeStudio):
        import ipywidgets as w

        self.studio = studio
        self._w = w
        self._syncing = False
        wide = w.Layout(width="100%")
        self.title = w.HTML()
        self.front_matter = w.Textarea(
            value=studio.front_matter_text, layout=w.Layout(width="100%", height="220px")
        )
        self.front_matter.observe(self._front_matter_edited, names="value")
        self.section_editors: list = []
        self.sections: dict[str, Any] = {}
        self.editors = w.Tab(layout=wide)
        self._build_editors()
        self.variables = w.HTML(layout=wide)
        self.problems = w.HTML(layout=wide)

        self.n = w.BoundedIntText(
            value=5, min=1, max=100_000, description="rows", layout=w.Layout(width="140px")
        )
        self.how = w.Dropdown(options=list(SAMPLE_MODES), value="random", description="how",
                              layout=w.Layout(width="200px"))  # fmt: skip
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
        self.status = w.HTML()
        self.results = w.HTML(layout=wide)

        self.versions = w.HTML(layout=wide)
        self.compare_a = w.Dropdown(description="compare", layout=w.Layout(width="180px"))
        self.compare_b = w.Dropdown(description="with", layout=w.Layout(width="180px"))
        self.compare_button = w.Button(description="Compare", icon="columns")
        self.compare_button.on_click(self._compare_clicked)
        self.comparison = w.HTML(layout=wide)

        self.container = w.VBox(
            [
                self.title,
                w.HBox(
                    [
                        w.VBox([self.editors], layout=w.Layout(width="60%")),
                        w.VBox(
                            [w.HTML("<b>Inputs</b>"), self.variables, self.problems],
                            layout=w.Layout(width="40%"),
                        ),
                    ],
                    layout=wide,
                ),
                w.HTML("<b>Sample</b>"),
                w.HBox([self.n, self.how, self.query, self.seed, self.sample_button]),
                self.sample_table,
                w.HBox([self.run_button, self.save_button, self.status]),
                self.progress,
                w.HTML("<b>Results</b> (latest version beside the one before)"),
                self.results,
                w.HTML("<b>Versions</b>"),
                self.versions,
                w.HBox([self.compare_a, self.compare_b, self.compare_button]),
                self.comparison,
            ],
            layout=wide,
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
    def _sample_clicked(self, _button=None) -> None:
        try:
            self.studio.sample(n=self.n.value, how=self.how.value, query=self.query.value or None,
                               seed=self.seed.value)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - shown in the widget, which has no other way to report it
            self.status.value = _error_html("sample", exc)

    def _run_clicked(self, _button=None) -> None:
        rows = self.studio.rows
        count = len(rows) if rows is not None else 5
        self.status.value = f"Running version {len(self.studio.versions) + 1} on {count} rows&hellip;"
        self.run_button.disabled = True
        self.progress.clear_output()
        try:
            with self.progress:
                version = self.studio.run(progress=True)
        except Exception as exc:  # noqa: BLE001
            self.status.value = _error_html("run", exc)
        else:
            self.status.value = (
                f"Version {version.number} ({version.sha256[:12]}): {len(version.results)} rows in "
                f"{version.seconds:.1f} s, {version.calls} judge calls, {version.cache_hits} from the cache"
            )
        finally:
            self.run_button.disabled = False

    def _save_clicked(self, _button=None) -> None:
        import html

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                paths = self.studio.save()
        except Exception as exc:  # noqa: BLE001
            self.status.value = _error_html("save", exc)
            return
        note = f" ({len(caught)} problem(s), see Inputs)" if caught else ""
        self.status.value = "Saved " + ", ".join(html.escape(str(p)) for p in paths) + note

    def _compare_clicked(self, _button=None) -> None:
        import html

        from evalkit.notebook.display import styled

        try:
            table = self.studio.compare_versions(self.compare_a.value, self.compare_b.value)
            diff = self.studio.diff(self.compare_a.value, self.compare_b.value) or "(same prompt)"
        except Exception as exc:  # noqa: BLE001
            self.comparison.value = _error_html("compare", exc)
            return
        self.comparison.value = styled(table).to_html() + f"<pre>{html.escape(diff)}</pre>"

    # Refresh -------------------------------------------------------------------------------------------
    def refresh(self, studio: JudgeStudio | None = None) -> None:
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
        problems = studio.problems()
        self.problems.value = (
            "<ul style='color:#842029'>" + "".join(f"<li>{html.escape(p)}</li>" for p in problems) + "</ul>"
            if problems
            else "<div style='color:#0b5d1e'>No problems found.</div>"
        )
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


def _error_html(what: str, exc: Exception) -> str:
    import html

    return f"<span style='color:#842029'>{what} failed: {html.escape(f'{type(exc).__name__}: {exc}')}</span>"
