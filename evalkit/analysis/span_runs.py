"""A ``spans eval`` results folder as a scored case table, so span runs summarise and compare like runs.

``evalkit spans eval`` writes AgentCore's result entries (``results.json``: ``evaluationResults`` and the
``passingLabels`` rule of each evaluator). The CI outputs (Markdown summary, JUnit, the regression gate) read
scored case tables, so :func:`span_case_table` turns entries into one: one row per evaluated target (a session,
a trace or a tool call span, from the entry's ``context.spanContext``), one evaluator per evaluator id (named
``name (LEVEL)``), with ``K_result`` pass / fail / error by the evaluator's own passing rule, ``K`` the value,
``K_reason`` the explanation (or label) and ``K_error`` the error code and message. The row ``status`` is
``partial`` when an evaluator errored, else ``fail`` when one failed, else ``pass``.

Rows are paired across two span runs by their target: ``prompt`` holds the target's text (``session S / trace
T / span X``) and ``item`` its position in the sorted union of both runs' targets (:func:`span_case_tables`),
so :func:`evalkit.analysis.comparison.compare` pairs the same target in both runs and nothing else.

May import: ``evalkit.spans.lambdas`` (the passing rule), ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.errors import EvalkitError

__all__ = [
    "SPAN_SOURCE",
    "read_span_results",
    "span_case_table",
    "span_case_tables",
    "span_run_counts",
    "target_text",
]

#: ``attrs["evalkit"]["source"]`` of a span run's case table: how the CI outputs tell it from a document's run.
SPAN_SOURCE = "<spans>"
LEVEL_ORDER = {"SESSION": 0, "TRACE": 1, "TOOL_CALL": 2}


def read_span_results(folder: str | os.PathLike) -> tuple[list[dict], dict[str, Any]]:
    """``(entries, rules)`` of a ``spans eval --out`` folder (or its results.json): the result entries and the
    passing labels by evaluator id. A folder that is not a span run is a clear error naming it."""
    from evalkit.documents.json_input import JsonInputError, parse_json, read_limited

    path = Path(folder)
    path = path / "results.json" if path.is_dir() else path
    if not path.is_file():
        raise EvalkitError(
            f"{folder}: no span results here (expected the --out folder of evalkit spans eval)"
        )
    try:
        data = parse_json(read_limited(path))
    except JsonInputError as exc:
        raise EvalkitError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("evaluationResults"), list):
        raise EvalkitError(
            f"{path}: not the results of evalkit spans eval (no evaluationResults list); a baseline for spans "
            "eval is another spans eval --out folder"
        )
    rules = data.get("passingLabels") if isinstance(data.get("passingLabels"), dict) else {}
    return [e for e in data["evaluationResults"] if isinstance(e, dict)], rules


def span_run_counts(folder: str | os.PathLike) -> dict[str, Any]:
    """``results``, ``passed``, ``failed``, ``errors`` and ``pass_rate`` (passed / results, as ``spans eval``
    prints it; NaN without results) of a ``spans eval --out`` folder, each entry judged by its evaluator's
    passing rule: how ``evalkit runs`` lists a span run next to the document runs."""
    entries, rules = read_span_results(folder)
    results = [_result(entry, rules) for entry in entries]
    total = len(results)
    return {
        "results": total,
        "passed": results.count("pass"),
        "failed": results.count("fail"),
        "errors": results.count("error"),
        "pass_rate": results.count("pass") / total if total else float("nan"),
    }


def _level(entry: dict) -> str:
    ctx = _context(entry)
    return "TOOL_CALL" if "spanId" in ctx else "TRACE" if "traceId" in ctx else "SESSION"


def _context(entry: dict) -> dict:
    context = entry.get("context")
    span_context = context.get("spanContext") if isinstance(context, dict) else None
    return span_context if isinstance(span_context, dict) else {}


def target_text(entry: dict) -> str:
    """``session S``, ``session S / trace T`` or ``session S / trace T / span X``: what an entry evaluated."""
    ctx = _context(entry)
    parts = [f"session {ctx.get('sessionId')}"]
    if "traceId" in ctx:
        parts.append(f"trace {ctx['traceId']}")
    if "spanId" in ctx:
        parts.append(f"span {ctx['spanId']}")
    return " / ".join(parts)


def _target_key(entry: dict) -> tuple:
    ctx = _context(entry)
    return (
        LEVEL_ORDER[_level(entry)],
        str(ctx.get("sessionId")),
        str(ctx.get("traceId", "")),
        str(ctx.get("spanId", "")),
    )


def _result(entry: dict, rules: dict[str, Any]) -> str:
    from evalkit.spans.lambdas.passing_rule import entry_passes

    if "errorCode" in entry:
        return "error"
    labels = rules.get(entry.get("evaluatorId"))
    rule = {entry.get("evaluatorId"): frozenset(labels) if labels is not None else None}
    return "pass" if entry_passes(entry, rule) else "fail"


def _evaluator_key(entry: dict) -> str:
    return str(entry.get("evaluatorId") or entry.get("evaluatorName"))


def span_case_tables(
    entries: list[dict], rules: dict[str, Any], baseline: tuple[list[dict], dict[str, Any]] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The candidate's (and the baseline's) case tables with item numbers shared across both runs."""
    keys = {_target_key(e): target_text(e) for e in entries}
    if baseline is not None:
        keys.update({_target_key(e): target_text(e) for e in baseline[0]})
    items = {key: position for position, key in enumerate(sorted(keys))}
    candidate = span_case_table(entries, rules, items)
    return candidate, (span_case_table(baseline[0], baseline[1], items) if baseline is not None else None)


def span_case_table(
    entries: list[dict], rules: dict[str, Any], items: dict[tuple, int] | None = None
) -> pd.DataFrame:
    """Result entries as a scored case table (see the module docstring); ``items`` numbers the targets."""
    if items is None:
        items = {key: i for i, key in enumerate(sorted({_target_key(e) for e in entries}))}
    evaluators: dict[str, dict] = {}
    rows: dict[tuple, dict] = {}
    for entry in entries:
        ev_key = _evaluator_key(entry)
        if ev_key not in evaluators:
            name = f"{entry.get('evaluatorName') or ev_key} ({_level(entry)})"
            # the same evaluator id gives the same column key in both runs, so compare() matches them
            column = "span_" + re.sub("[^0-9A-Za-z]+", "_", ev_key)
            evaluators[ev_key] = {"name": name, "key": column, "level": _level(entry)}
        key = _target_key(entry)
        row = rows.setdefault(key, {"item": items[key], "prompt": target_text(entry), "level": _level(entry)})
        column = evaluators[ev_key]["key"]
        value = entry.get("value")
        row[f"{column}_result"] = _result(entry, rules)
        row[column] = (
            float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else np.nan
        )
        row[f"{column}_reason"] = entry.get("explanation") or entry.get("label")
        if "errorCode" in entry:
            row[f"{column}_error"] = f"{entry['errorCode']}: {entry.get('errorMessage') or ''}".rstrip(": ")
    return _frame(sorted(rows.values(), key=lambda r: r["item"]), list(evaluators.values()))


def _frame(rows: list[dict], evaluators: list[dict]) -> pd.DataFrame:
    columns: dict[str, list] = {
        "item": [],
        "turn": [],
        "prompt": [],
        "level": [],
        "response": [],
        "status": [],
    }
    for ev in evaluators:
        for suffix in ("", "_result", "_reason", "_error"):
            columns[f"{ev['key']}{suffix}"] = []
    for row in rows:
        results = [row.get(f"{ev['key']}_result") for ev in evaluators]
        status = "partial" if "error" in results else "fail" if "fail" in results else "pass"
        for name, values in columns.items():
            values.append(status if name == "status" else row.get(name))
    df = pd.DataFrame(columns)
    df["item"] = df["item"].astype(np.int64)
    df["turn"] = pd.array([pd.NA] * len(df), dtype="Int64")
    for ev in evaluators:
        df[ev["key"]] = pd.to_numeric(df[ev["key"]], errors="coerce")
    scored = [
        {"name": ev["name"], "key": ev["key"], "score_field": ev["key"], "level": ev["level"]}
        for ev in evaluators
    ]
    df.attrs["evalkit"] = {"scored": scored, "document": {}, "source": SPAN_SOURCE}
    return df
