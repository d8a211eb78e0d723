"""JudgeRunner: a judge draft tried on rows of the case table, and every run kept as a ``JudgeVersion``.

Getting a judge right is an edit-run-compare loop; this is the run-and-compare half of it, on top of the
draft (``evalkit.notebook.judge_draft``):

* a sample of rows (``sample``: random with a seed, failing, a pandas query, or the first ``n``);
* ``run()``: the draft is written to a private staging folder and run through ``evalkit.evaluate``
  exactly as a real run would (the judge pool's concurrency and retries, the judge cache, a progress
  bar), so what the studio shows is what ``evalkit run`` will do;
* ``versions``: one per prompt (its sha256; ``evalkit.notebook.judge_versions``): running a prompt again,
  on more rows, adds rows to its version, so any two versions can be compared on the rows both judged
  (``compare_versions``, which judges the missing rows first when asked) and the prompt changes between
  them read (``diff``).
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
import time
import weakref
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.analysis.formatting import count
from evalkit.notebook.judge_draft import JudgeDraft
from evalkit.notebook.judge_files import has_text, sha256_of, write_judge
from evalkit.notebook.judge_versions import (
    RESULT_COLUMNS,
    JudgeRun,
    JudgeVersion,
    results_frame,
    run_record,
    shared_rows,
    side_by_side,
)

__all__ = ["SAMPLE_MODES", "JudgeRun", "JudgeRunner", "JudgeVersion"]

if TYPE_CHECKING:
    import pandas as pd

#: ``sample(how=...)`` choices.
SAMPLE_MODES = ("random", "failing", "query", "first")


class JudgeRunner(JudgeDraft):
    """A ``JudgeDraft`` that samples rows of ``df``, runs on them and keeps its versions (see module docs).

    Args:
        name, custom_dir, df: as ``JudgeDraft``; ``df`` is also the table ``sample()`` draws from (a scored
            table from ``evalkit.evaluate`` gives ``sample(how="failing")`` its ``status`` /
            ``<name>_result`` columns).
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
        super().__init__(name, custom_dir, df)
        self.model_config = model_config
        self.threshold = threshold
        self.options = dict(options or {})
        self.concurrency = concurrency
        self.cache = cache
        self.seed = seed
        self.versions: list[JudgeVersion] = []
        self.sample_note = ""
        self.last_scored: pd.DataFrame | None = None  # evalkit.evaluate's table of the latest run
        self._order: list[int] = []  # version numbers, the one that ran last at the end
        self._stage = Path(tempfile.mkdtemp(prefix=f"evalkit-studio-{name}-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self._stage), True)

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
        pool = self.df[self.df["response"].map(has_text)] if "response" in self.df.columns else self.df
        skipped = len(self.df) - len(pool)
        if how == "random":
            seed = self.seed if seed is None else seed
            picked = pool.sample(n=min(n, len(pool)), random_state=seed)
            chosen = pool.loc[[label for label in pool.index if label in set(picked.index)]]
            note = f"{count(len(chosen), 'random row')} (seed {seed})"
        elif how == "first":
            chosen, note = pool.head(n), f"the first {count(min(n, len(pool)), 'row')}"
        elif how == "query":
            if not query:
                raise ValueError('how="query" needs query=..., a pandas query such as "item in [1, 4]"')
            matched = pool.query(query, engine="python")
            chosen, note = (
                matched.head(n),
                f"{min(n, len(matched))} of {count(len(matched), 'row')} matching {query!r}",
            )
        else:
            failing, source = self._failing(pool)
            if not len(failing):
                raise ValueError(f"no failing rows ({source}); sample how='random' or by query instead")
            chosen, note = (
                failing.head(n),
                f"{min(n, len(failing))} of {count(len(failing), 'failing row')} ({source})",
            )
        if not len(chosen):
            raise ValueError(f"the sample is empty: {note}")
        if skipped:
            note += f"; {count(skipped, 'row')} without a response left out"
        self.rows, self.sample_note = chosen, note
        self._changed()
        return chosen

    def _failing(self, pool: pd.DataFrame) -> tuple[pd.DataFrame, str]:
        column = f"{self.name}_result"
        if column in pool.columns:
            return pool[pool[column].isin(["fail", "error"])], f"{column} is fail or error"
        if self.versions:
            latest = self.latest
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
        use the studio's ``threshold`` and ``options``. A new prompt becomes a new entry of ``versions``; a
        prompt that already has a version (same sha256) adds the rows to it. Returns the version; its
        ``last_run`` tells this run (rows, time, calls, errors and the first error message).

        Raises ValueError, before any model call, when the front matter is not valid YAML or the template
        does not parse.
        """
        if rows is None:
            rows = self.rows if self.rows is not None else self.sample()
        if not len(rows):
            raise ValueError("no rows to run the judge on")
        import pandas as pd

        self.check()  # fail now, with the YAML / template message, rather than inside promptflow
        prompt_text, wrapper_text = self.prompt_text, self.wrapper_text
        sha = sha256_of(prompt_text)
        version = next((v for v in self.versions if v.sha256 == sha), None)
        if version is None:
            version = JudgeVersion(
                number=len(self.versions) + 1,
                sha256=sha,
                prompt_text=prompt_text,
                wrapper_text=wrapper_text,
                threshold=self.threshold,
                results=pd.DataFrame(columns=list(RESULT_COLUMNS)),
                inputs=rows.iloc[:0],
            )
            self.versions.append(version)
        self._score(version, rows, progress=progress, note=note)
        return version

    def _score(
        self, version: JudgeVersion, rows: pd.DataFrame, *, progress: bool | None, note: str
    ) -> JudgeRun:
        """Score ``rows`` with ``version``'s prompt and wrapper through ``evalkit.evaluate``; the results are
        added to the version and the run is recorded."""
        import evalkit
        from evalkit.documents.case_table import CASE_COLUMNS

        stage = self._stage / f"v{version.number}-{len(version.runs) + 1}"
        files = write_judge(stage / self.name, self.name, version.prompt_text, version.wrapper_text)
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
        results = results_frame(scored, self.name)
        run = run_record(
            results,
            timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            seconds=time.perf_counter() - started,
            judge=(scored.attrs.get("evalkit") or {}).get("judge") or {},
            note=note,
        )
        version.add(results, table, run)
        version.files = files
        self.last_scored = scored
        self._order = [n for n in self._order if n != version.number] + [version.number]
        self._changed()
        return run

    # Versions ------------------------------------------------------------------------------------------
    def version(self, ref: int | JudgeVersion) -> JudgeVersion:
        """A version by number (1 is the first prompt) or by position from the end (-1 is the newest)."""
        if isinstance(ref, JudgeVersion):
            return ref
        if not self.versions:
            raise ValueError("no versions yet: run() the judge first")
        if ref < 0:
            if -ref > len(self.versions):
                raise IndexError(
                    f"there {'is' if len(self.versions) == 1 else 'are'} only {count(len(self.versions), 'version')}"
                )
            return self.versions[ref]
        if not 1 <= ref <= len(self.versions):
            raise IndexError(f"no version {ref}: versions are numbered 1 to {len(self.versions)}")
        return self.versions[ref - 1]

    @property
    def latest(self) -> JudgeVersion | None:
        """The version that ran last (None before the first run)."""
        return self.version(self._order[-1]) if self._order else None

    def versions_table(self) -> pd.DataFrame:
        """One row per version: sha256 (12 characters), first run, runs, rows, mean score, pass rate, errors,
        judge calls and cache hits, seconds, note."""
        import pandas as pd

        columns = ["version", "sha256", "timestamp", "runs", "rows", "mean_score", "pass_rate", "errors",
                   "calls", "cache_hits", "seconds", "note"]  # fmt: skip
        return pd.DataFrame([v.summary() for v in self.versions], columns=columns).set_index("version")

    def compare_versions(
        self, a: int | JudgeVersion = -2, b: int | JudgeVersion = -1, *, fill: bool = False, progress=None
    ) -> pd.DataFrame:
        """Scores, outcomes, reasons and errors of versions ``a`` and ``b`` side by side, on the rows both
        judged (see ``judge_versions.side_by_side`` for the columns).

        ``fill=True`` first runs each version on the rows only the other one judged, so the comparison covers
        every row either judged. Without it, two versions that share no rows raise ValueError saying so.
        """
        va, vb = self.version(a), self.version(b)
        if va.number == vb.number:
            raise ValueError(f"compare two different versions (both are version {va.number})")
        if fill:
            for this, other in ((va, vb), (vb, va)):
                missing = other.inputs.loc[~other.inputs.index.isin(this.results.index)]
                if len(missing):
                    self._score(this, missing, progress=progress, note=f"rows of version {other.number}")
        labels = shared_rows(va, vb)
        if not labels:
            raise ValueError(
                f"versions {va.number} and {vb.number} share no rows: compare_versions({va.number}, "
                f"{vb.number}, fill=True) judges each version's missing rows first"
            )
        return side_by_side(labels, va, vb, self._prompts())

    def results(self) -> pd.DataFrame:
        """The rows of the version that ran last, beside the version that ran before it where that one judged
        the same rows (``changed`` is ``<NA>`` for the rows it did not); the latest alone when no other
        version ran."""
        latest = self.latest
        if latest is None:
            raise ValueError("no versions yet: run() the judge first")
        before = self.version(self._order[-2]) if len(self._order) > 1 else None
        return side_by_side(list(latest.results.index), before, latest, self._prompts())

    def _prompts(self) -> pd.DataFrame | None:
        return self.df if self.df is not None and "prompt" in self.df.columns else None

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
