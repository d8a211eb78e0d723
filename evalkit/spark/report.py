"""The figures and the report of a run whose rows are streamed: totals added up chunk by chunk (the printed
summary, the gate, the report's head), and report.html written chunk by chunk (see ``StreamedReport``)."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.analysis.summaries import (
    STATUS_ROW,
    STATUSES,
    SUMMARY_COLUMNS,
    numeric_scores,
    status_counts,
    summary,
)
from evalkit.documents.columns import score_column
from evalkit.reporting.page_data import TEXT_LIMIT
from evalkit.reporting.page_stream import PageStream


class Totals:
    """Row statuses and per-evaluator counts and mean scores, added up over chunks of a scored table."""

    def __init__(self, specs: list[dict]):
        self.specs = specs
        self.rows = 0
        self.counts = {name: 0 for name in STATUSES}
        self.evaluators = {
            str(s.get("name", s["key"])): dict.fromkeys(
                ("asked", "passed", "failed", "errored", "partial", "n", "sum"), 0
            )
            for s in specs
        }

    def add(self, chunk: pd.DataFrame) -> None:
        self.rows += len(chunk)
        counts = status_counts(chunk)
        for name in STATUSES:
            self.counts[name] += counts[name]
        table = summary(chunk)
        for spec in self.specs:
            name = str(spec.get("name", spec["key"]))
            mine = self.evaluators[name]
            if name in table.index:
                for column in ("asked", "passed", "failed", "errored", "partial"):
                    mine[column] += int(table.loc[name, column])
            result, column = f"{spec['key']}_result", score_column(spec["key"])
            if result in chunk.columns and column in chunk.columns:
                values = numeric_scores(chunk[column])[chunk[result].notna().to_numpy()]
                values = values[~np.isnan(values)]
                mine["n"] += len(values)
                mine["sum"] += float(values.sum())

    def status_counts(self) -> dict[str, int]:
        return {**self.counts, "total": self.rows}

    def summary(self, judge: dict | None = None) -> pd.DataFrame:
        """The table ``evalkit.summary`` gives for the whole run."""
        rows = {}
        for name, mine in self.evaluators.items():
            decided = mine["passed"] + mine["failed"]
            rows[name] = {
                "asked": mine["asked"],
                "passed": mine["passed"],
                "failed": mine["failed"],
                "errored": mine["errored"],
                "partial": mine["partial"],
                "pass_rate": mine["passed"] / decided if decided else math.nan,
                "mean_score": mine["sum"] / mine["n"] if mine["n"] else math.nan,
            }
        rows[STATUS_ROW] = {
            "asked": self.rows,
            "passed": self.counts["pass"],
            "failed": self.counts["fail"],
            "errored": self.counts["error"],
            "partial": self.counts["partial"],
            "pass_rate": self.counts["pass"] / self.rows if self.rows else math.nan,
            "mean_score": math.nan,
        }
        out = pd.DataFrame.from_dict(rows, orient="index", columns=list(SUMMARY_COLUMNS))
        out = out.astype({c: "int64" for c in SUMMARY_COLUMNS[:5]}).astype(
            {"pass_rate": float, "mean_score": float}
        )
        out.index.name = "evaluator"
        if judge and judge.get("tokens"):
            tokens = judge["tokens"]
            out["prompt_tokens"] = [tokens.get(n, {}).get("prompt", 0) for n in out.index]
            out["completion_tokens"] = [tokens.get(n, {}).get("completion", 0) for n in out.index]
            out.loc[STATUS_ROW, "prompt_tokens"] = judge.get("prompt_tokens", 0)
            out.loc[STATUS_ROW, "completion_tokens"] = judge.get("completion_tokens", 0)
        return out


class StreamedReport:
    """report.html from chunks: ``add(chunk)`` per chunk, then ``finish(path, template, totals, judge)``.

    The one report page (:mod:`evalkit.reporting.page`) written by
    :class:`~evalkit.reporting.page_stream.PageStream`: each chunk's page columns go to spool files in a
    temporary folder inside the run's results folder (on disk, not in memory), its scores into the charts'
    counts; at the end the head is rendered from the run's :class:`Totals` and the columns are copied into the
    page from their files. The driver holds one chunk at a time, whatever the row count: the page is the one a
    pandas run of the same rows writes (the same head and item data).
    """

    def __init__(self, template: pd.DataFrame, folder: str | os.PathLike, text_limit: int = TEXT_LIMIT):
        self.spool = Path(tempfile.mkdtemp(prefix=".evalkit-report-", dir=folder))
        self.page = PageStream(template, self.spool, text_limit)

    def add(self, chunk: pd.DataFrame) -> None:
        self.page.add(chunk)

    def finish(
        self, path: str | os.PathLike, template: pd.DataFrame, totals: Totals, judge: dict | None
    ) -> None:
        """Write the page; ``template`` is an empty frame with the run's attrs (title, source, judge)."""
        page = template.copy()
        page.attrs = dict(template.attrs)
        if judge:
            page.attrs["evalkit"] = {**(page.attrs.get("evalkit") or {}), "judge": judge}
        # every scored row has a status; the template (no rows) has no columns at all
        statuses = totals.status_counts() if totals.rows or "status" in template.columns else None
        table = totals.summary(judge)
        if statuses is None:  # as evalkit.summary: no status row without a status column
            table = table[table.index != STATUS_ROW]
        try:
            self.page.write(path, page, statuses, table)
        finally:
            self.close()

    def close(self) -> None:
        """Remove the spool files and their folder."""
        self.page.close()
        shutil.rmtree(self.spool, ignore_errors=True)
