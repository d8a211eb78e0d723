"""JudgeVersion: one prompt of a judge (its sha256) and everything it judged, run by run.

A version is a prompt, not a run: running the same prompt again, on more rows or the same ones, adds those
rows to the version it already is (``JudgeVersion.add``), so versions v2, v3 and v4 never share one sha256.
Each run is kept as a ``JudgeRun`` (when, which rows, time, judge calls, cache hits, errors), which is what
the studio's status line tells.

Comparing two versions is only meaningful on rows both judged: ``side_by_side`` puts their scores,
outcomes, reasons and errors next to each other for the row labels it is given, and marks ``changed`` only
where both have a result (``<NA>`` elsewhere, never a blank delta read as a change).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.analysis.formatting import count, percent

if TYPE_CHECKING:
    import pandas as pd

#: The columns of ``JudgeVersion.results``.
RESULT_COLUMNS = ("item", "turn", "score", "result", "reason", "error")


@dataclass
class JudgeRun:
    """One ``run()`` of a version: when, which rows (labels), how long, judge calls, cache hits, errors."""

    timestamp: str
    rows: list
    seconds: float
    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    first_error: str = ""
    note: str = ""

    def describe(self) -> str:
        """The status line of this run: ``3 rows: 3 errors — <first message>`` when rows errored, else
        ``3 rows in 4.2 s, 15 judge calls, 0 from the cache``."""
        rows = count(len(self.rows), "row")
        if self.errors:
            return f"{rows}: {count(self.errors, 'error')} \u2014 {self.first_error}"
        return (
            f"{rows} in {self.seconds:.1f} s, {count(self.calls, 'judge call')}, "
            f"{self.cache_hits} from the cache"
        )


@dataclass(repr=False)
class JudgeVersion:
    """One prompt of the judge (``sha256``), the exact prompt and wrapper it runs, and its result per row.

    ``results`` is indexed by the case table's row labels, with columns ``item``, ``turn``, ``score``,
    ``result`` (pass / fail / error), ``reason`` and ``error`` (the message of an errored row); a row judged
    again keeps its latest result. ``runs`` lists every run of this prompt; ``calls``, ``cache_hits`` and
    ``seconds`` add them up. ``inputs`` holds the case-table rows it judged, so the version can be run on
    another version's rows later (``JudgeStudio.compare_versions(..., fill=True)``).
    """

    number: int
    sha256: str
    prompt_text: str
    wrapper_text: str
    threshold: float
    results: pd.DataFrame
    inputs: pd.DataFrame
    runs: list[JudgeRun] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def __repr__(self) -> str:
        s = self.summary()
        mean = "n/a" if s["mean_score"] != s["mean_score"] else f"{s['mean_score']:.2f}"
        return (
            f"<JudgeVersion {self.number} ({s['sha256']}): {count(s['rows'], 'row')} in "
            f"{count(len(self.runs), 'run')}, mean score {mean}, pass rate {percent(s['pass_rate'])}, "
            f"{count(s['errors'], 'error')}, {count(self.calls, 'judge call')}, {self.cache_hits} cached>"
        )

    # Runs ----------------------------------------------------------------------------------------------
    def add(self, results: pd.DataFrame, inputs: pd.DataFrame, run: JudgeRun) -> None:
        """Add one run's ``results`` (and the case-table ``inputs`` it judged) to this version; rows judged
        before take the new result."""
        import pandas as pd

        kept = self.results.loc[~self.results.index.isin(results.index)]
        self.results = pd.concat([kept, results]) if len(kept) else results
        old = self.inputs.loc[~self.inputs.index.isin(inputs.index)]
        self.inputs = pd.concat([old, inputs]) if len(old) else inputs
        self.runs.append(run)

    @property
    def last_run(self) -> JudgeRun:
        return self.runs[-1]

    @property
    def timestamp(self) -> str:
        """When the version first ran (ISO 8601, UTC)."""
        return self.runs[0].timestamp if self.runs else ""

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.runs)

    @property
    def cache_hits(self) -> int:
        return sum(r.cache_hits for r in self.runs)

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runs)

    @property
    def note(self) -> str:
        return "; ".join(dict.fromkeys(r.note for r in self.runs if r.note))

    @property
    def scores(self) -> dict:
        """Score per row label (NaN where the judge errored)."""
        return self.results["score"].to_dict()

    def errors(self) -> pd.Series:
        """The error message of each errored row (by row label)."""
        errored = self.results[self.results["result"] == "error"]
        return errored["error"].fillna("").astype(str)

    def summary(self) -> dict:
        """One line of ``JudgeStudio.versions_table()``."""
        outcome = self.results["result"]
        judged = outcome.isin(["pass", "fail"])
        return {
            "version": self.number,
            "sha256": self.sha256[:12],
            "timestamp": self.timestamp,
            "runs": len(self.runs),
            "rows": len(self.results),
            "mean_score": self.results["score"].mean(),
            "pass_rate": float((outcome == "pass").sum() / judged.sum()) if judged.any() else float("nan"),
            "errors": int((outcome == "error").sum()),
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "seconds": round(self.seconds, 3),
            "note": self.note,
        }


def run_record(results: pd.DataFrame, *, timestamp: str, seconds: float, judge: dict, note: str) -> JudgeRun:
    """The ``JudgeRun`` of one scoring pass (``judge``: the run's ``attrs["evalkit"]["judge"]``)."""
    errored = results[results["result"] == "error"]
    messages = [str(m) for m in errored["error"] if isinstance(m, str) and m.strip()]
    first = messages[0] if messages else ("no message" if len(errored) else "")
    return JudgeRun(
        timestamp=timestamp,
        rows=list(results.index),
        seconds=seconds,
        calls=int(judge.get("calls", 0)),
        cache_hits=int(judge.get("cache_hits", 0)),
        errors=len(errored),
        first_error=first,
        note=note,
    )


# Results tables -------------------------------------------------------------------------------------------
def results_frame(scored: pd.DataFrame, name: str) -> pd.DataFrame:
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


def shared_rows(va: JudgeVersion, vb: JudgeVersion) -> list:
    """Row labels both versions judged, in ``vb``'s order."""
    judged = set(va.results.index)
    return [label for label in vb.results.index if label in judged]


def side_by_side(
    labels: list, va: JudgeVersion | None, vb: JudgeVersion, prompts: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Scores, outcomes, reasons and errors of ``va`` and ``vb`` for the row ``labels``.

    Columns: ``item``, ``turn``, ``prompt`` (from ``prompts`` when given), ``v<a>_score``, ``v<b>_score``,
    ``delta`` (b - a), ``v<a>_result``, ``v<b>_result``, ``v<a>_reason``, ``v<b>_reason``, ``v<a>_error``,
    ``v<b>_error``, ``changed`` (score or outcome differs; ``<NA>`` for a row one of them did not judge).
    With ``va`` None, ``vb``'s columns alone.
    """
    import pandas as pd

    versions = [v for v in (va, vb) if v is not None]
    out = pd.DataFrame(index=pd.Index(labels))
    for key in ("item", "turn"):
        merged = pd.concat([v.results[key] for v in versions])
        out[key] = merged[~merged.index.duplicated()].reindex(out.index)
    if prompts is not None and "prompt" in prompts.columns:
        out["prompt"] = [prompts.at[label, "prompt"] if label in prompts.index else None for label in labels]
    for part in ("score", "result", "reason", "error"):
        for v in versions:
            out[f"v{v.number}_{part}"] = v.results[part].reindex(out.index)
        if part == "score" and va is not None:
            out["delta"] = out[f"v{vb.number}_score"] - out[f"v{va.number}_score"]
    if va is not None:
        a, b = out[f"v{va.number}_score"], out[f"v{vb.number}_score"]
        differs = ~((a == b) | (a.isna() & b.isna())) | (
            out[f"v{va.number}_result"].fillna("") != out[f"v{vb.number}_result"].fillna("")
        )
        both = out.index.isin(va.results.index) & out.index.isin(vb.results.index)
        out["changed"] = pd.array([bool(d) if s else pd.NA for d, s in zip(differs, both)], dtype="boolean")
    return out
