"""Run history: the runs saved under a folder, one row each, oldest first.

    import evalkit
    evalkit.runs("results")        # every results.json under results/, with pass rates per evaluator

``evalkit runs DIR`` prints the same table, and ``--history DIR`` on ``evalkit run`` / ``evalkit report``
adds the trend of pass rates across those runs to the report page.

Columns: ``time`` (the run's ``evaluatedAt``, UTC), ``run`` (its folder, relative to DIR), ``document`` and
``document_sha256``, ``evalkit_version``, ``judge_model``, ``rows``, ``pass_rate`` (row status: passed / all
rows), then ``pass_rate:<evaluator>`` per evaluator that any run scored (passed / (passed + failed), as in
:func:`evalkit.summary`; NaN where a run did not score it), and ``prompt_tokens`` / ``completion_tokens`` of
the judge (0 without one), ``judge_calls`` (requests sent, retries included) and ``judge_cost_usd`` (NaN when no
judge ran or its price was not set: ``EVALKIT_PRICES`` / ``--price``), then ``samples`` (judgments per row:
``--samples K``, 1 for a run judged once), ``pass_rule`` (None) and ``flaky_rows`` (``<NA>``) for a run judged once. A folder that holds no run is a user mistake; a results.json that cannot be read is
skipped with a warning naming it.

The results of ``evalkit spans eval`` (span evaluations: no items, no document) are not rows of this table:
they are listed apart in ``table.attrs["span_runs"]``, one dict each with ``run``, ``results``, ``passed``,
``failed``, ``errors`` and ``pass_rate`` (:func:`evalkit.analysis.span_runs.span_run_counts`), and
``evalkit runs`` prints them under their own heading.
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

import pandas as pd

from evalkit.analysis.run_identity import run_identity
from evalkit.analysis.span_runs import span_run_counts
from evalkit.analysis.summaries import STATUS_ROW, summary
from evalkit.documents.versions import SpanRunError
from evalkit.errors import DocumentError, EvalkitError, shown

__all__ = ["FIXED_COLUMNS", "runs"]

FIXED_COLUMNS = (
    "time",
    "run",
    "document",
    "document_sha256",
    "evalkit_version",
    "judge_model",
    "rows",
    "pass_rate",
)
#: The judge's requests and cost (USD; NaN when no judge ran or its price was not set), last.
COST_COLUMNS = ("judge_calls", "judge_cost_usd")
#: How the verdicts were made (``--samples K``): judgments per row (1: judged once), the pass rule (None when
#: judged once) and the rows whose judgments flipped (None when judged once).
SAMPLE_COLUMNS = ("samples", "pass_rule", "flaky_rows")
#: Most runs listed (the newest by file time); a results folder with more is read in part.
MAX_RUNS = 500


def _row(df: pd.DataFrame, name: str) -> dict:
    identity = run_identity(df)
    table = summary(df)
    row: dict = {
        "time": pd.to_datetime(identity["evaluated_at"], utc=True, errors="coerce"),
        "run": name,
        "document": identity["document"],
        "document_sha256": identity["document_sha256"],
        "evalkit_version": identity["evalkit_version"],
        "judge_model": identity["judge_model"],
        "rows": identity["rows"],
        "pass_rate": float(table.loc[STATUS_ROW, "pass_rate"]) if STATUS_ROW in table.index else math.nan,
    }
    for evaluator, values in table.iterrows():
        if evaluator != STATUS_ROW:
            row[f"pass_rate:{evaluator}"] = float(values["pass_rate"])
    for column in ("prompt_tokens", "completion_tokens"):
        value = table.loc[STATUS_ROW, column] if column in table.columns and STATUS_ROW in table.index else 0
        row[column] = 0 if pd.isna(value) else int(value)
    row.update(_judge_cost(df))
    samples = identity["samples"] or {}
    row["samples"] = samples.get("k", 1)
    row["pass_rule"] = samples.get("pass_rule")
    row["flaky_rows"] = samples.get("flaky_rows")
    return row


def _judge_cost(df: pd.DataFrame) -> dict:
    """``judge_calls`` (requests sent, retries included) and ``judge_cost_usd`` (NaN: no judge, or its price not
    set) from the run's judge summary."""
    judge = (df.attrs.get("evalkit") or {}).get("judge")
    judge = judge if isinstance(judge, dict) else {}
    cost = judge.get("cost") if isinstance(judge.get("cost"), dict) else {}
    calls, usd = judge.get("calls"), cost.get("usd")
    number = isinstance(usd, (int, float)) and not isinstance(usd, bool)
    return {
        "judge_calls": int(calls) if isinstance(calls, int) and not isinstance(calls, bool) else 0,
        "judge_cost_usd": float(usd) if number else math.nan,
    }


def runs(
    folder: str | os.PathLike,
    *,
    current: pd.DataFrame | None = None,
    current_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """The runs saved under ``folder`` (every ``results.json`` below it), one row each, oldest first.

    ``current`` is a scored case table not saved yet (the run being written, into ``current_dir``): it is
    listed from memory as the newest run, and a results.json already in ``current_dir`` (an older run there)
    is left out. See the
    module docstring for the columns. Raises :class:`~evalkit.errors.DocumentError` when ``folder`` is not a
    folder or holds no run.
    """
    from evalkit.documents.run_reader import read_run

    root = Path(folder)
    if not root.is_dir():
        raise DocumentError(f"{root}: not a folder; give the folder that holds your runs (e.g. results)")
    files = sorted(root.rglob("results.json"), key=lambda p: p.stat().st_mtime)[-MAX_RUNS:]
    skip = Path(current_dir).resolve() if current is not None and current_dir is not None else None
    rows, span_runs = [], []
    for file in files:
        if skip is not None and file.parent.resolve() == skip:
            continue
        name = file.parent.relative_to(root).as_posix() if file.parent != root else root.name
        try:
            df = read_run(file, validate=False)
        except SpanRunError:
            span_runs.append({"run": name, **span_run_counts(file)})
            continue
        except EvalkitError as exc:
            warnings.warn(f"{shown(file)}: skipped, not a readable run ({exc})", stacklevel=2)
            continue
        rows.append(_row(df, name))
    if current is not None:
        here = Path(current_dir) if current_dir is not None else Path("(this run)")
        try:
            name = here.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            name = here.name
        row = _row(current, name)
        row["time"] = pd.Timestamp.now(tz="UTC").floor("s")  # it is being written now: the newest run
        rows.append(row)
    if not rows:
        spans = (
            f" (only span evaluations of 'evalkit spans eval': {', '.join(r['run'] for r in span_runs)})"
            if span_runs
            else " (no results.json below it)"
        )
        raise DocumentError(
            f"{root}: no run found{spans}; write runs with 'evalkit run DOC --out {root}/<name>'"
        )
    table = pd.DataFrame(rows)
    evaluators = [c for c in table.columns if c.startswith("pass_rate:")]
    ordered = [
        *FIXED_COLUMNS,
        *evaluators,
        "prompt_tokens",
        "completion_tokens",
        *COST_COLUMNS,
        *SAMPLE_COLUMNS,
    ]
    table = table[ordered].sort_values("time", kind="stable", na_position="first").reset_index(drop=True)
    table["flaky_rows"] = table["flaky_rows"].astype("Int64")  # <NA> for a run judged once
    table.attrs["span_runs"] = span_runs
    return table
