"""The figures and the report of a run whose rows are streamed: totals added up chunk by chunk, and report.html
written column by column through temporary files, so the driver never holds the run.

report.html embeds its rows column-wise (one JSON list per column, see ``evalkit.reporting.html_page``), while
rows arrive chunk by chunk: each chunk's columns are appended to one temporary file per column, and the page is
assembled at the end (head with the totals, then each column's file). The embedded values and the page are
those ``write_html`` produces for the whole table at once: the same ``_columns`` and ``_head_html`` render them.
"""

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
from evalkit.documents.atomic import atomic_write
from evalkit.documents.columns import score_column
from evalkit.reporting.html_page import (
    JS,
    TEXT_LIMIT,
    _columns,
    _head_html,
    report_title,
    script_safe_json,
)


class Totals:
    """Row statuses and per-evaluator counts and mean scores, added up over chunks of a scored table."""

    def __init__(self, specs: list[dict]):
        self.specs = specs
        self.rows = 0
        self.counts = {name: 0 for name in STATUSES}
        self.evaluators = {
            str(s.get("name", s["key"])): dict.fromkeys(
                ("asked", "passed", "failed", "errored", "n", "sum"), 0
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
                for column in ("asked", "passed", "failed", "errored"):
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
                "partial": 0,
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
    """report.html from chunks: ``add(chunk)`` per chunk, then ``finish(path, template, totals)``."""

    def __init__(self, specs: list[dict], text_limit: int = TEXT_LIMIT):
        self.evaluators = [dict(s) for s in specs]
        self.limit = text_limit
        self.folder = Path(tempfile.mkdtemp(prefix="evalkit-report-"))
        self.names: list[str] = []
        self.handles: list = []

    def add(self, chunk: pd.DataFrame) -> None:
        for position, (name, values) in enumerate(_columns(chunk, self.evaluators, self.limit)):
            if position == len(self.handles):
                self.names.append(name)
                self.handles.append(open(self.folder / f"{position}.json", "wb"))  # noqa: SIM115 - kept open
            if values:
                handle = self.handles[position]
                text = script_safe_json(values)[1:-1]
                handle.write((b"," if handle.tell() else b"") + text.encode("utf-8", "backslashreplace"))

    def finish(
        self, path: str | os.PathLike, template: pd.DataFrame, totals: Totals, judge: dict | None
    ) -> None:
        """Write the page; ``template`` is an empty frame with the run's attrs (title, source)."""
        if not self.handles:  # no rows at all: the columns of an empty chunk
            self.add(template)
        try:
            for handle in self.handles:
                handle.close()
            head = _head_html(
                template,
                report_title(template),
                self.evaluators,
                self.limit,
                {"rows": totals.rows, "counts": totals.status_counts(), "summary": totals.summary(judge)},
            )
            meta = {
                "rows": totals.rows,
                "statuses": ["", *STATUSES],
                "evaluators": [
                    {"name": str(e.get("name", e["key"])), "key": str(e["key"])} for e in self.evaluators
                ],
            }
            with atomic_write(path, "wb") as out:
                out.write(head.encode("utf-8", "backslashreplace"))
                out.write(b'<script type="application/json" id="evalkit-data">')
                out.write((script_safe_json(meta)[:-1] + ',"columns":{').encode())
                for position, name in enumerate(self.names):
                    out.write((("," if position else "") + script_safe_json(name) + ":[").encode())
                    with open(self.folder / f"{position}.json", "rb") as column:
                        shutil.copyfileobj(column, out, 1 << 20)
                    out.write(b"]")
                out.write(b"}}</script>\n")
                out.write(f"<script>{JS}</script>\n</body>\n</html>\n".encode())
        finally:
            self.close()

    def close(self) -> None:
        for handle in self.handles:
            handle.close()
        shutil.rmtree(self.folder, ignore_errors=True)
