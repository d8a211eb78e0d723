"""JudgeRunner: a judge draft tried on rows of the case table, and every run kept as a ``JudgeVersion``.

Getting a judge right is an edit-run-compare loop; this is the run-and-compare half of it, on top of the
draft (``evalkit.notebook.judge_draft``):

* a sample of rows (``sample``: random with a seed, failing, a pandas query, or the first ``n``);
* ``run()``: the draft is written to a private staging folder and run through ``evalkit.evaluate``
  exactly as a real run would (the judge pool's concurrency and retries, the judge cache, a progress
  bar), so what the studio shows is what ``evalkit run`` will do;
* ``versions``: every run, with the prompt's sha256, a timestamp and the scores per row, so any two can be
  compared (``compare_versions``) and the prompt changes between them read (``diff``).
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.notebook.judge_draft import JudgeDraft
from evalkit.notebook.judge_files import has_text, sha256_of, write_judge

if TYPE_CHECKING:
    import pandas as pd

#: ``sample(how=...)`` choices.
SAMPLE_MODES = ("random", "failing", "query", "first")


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
        files = write_judge(stage / self.name, self.name, prompt_text, wrapper_text)

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
            sha256=sha256_of(prompt_text),
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


# Results tables -------------------------------------------------------------------------------------------
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


def _side_by_side(studio: JudgeRunner, va: JudgeVersion | None, vb: JudgeVersion) -> pd.DataFrame:
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
