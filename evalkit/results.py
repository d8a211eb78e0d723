"""Results files: ``results.json`` (the document enriched with outputs), ``results.csv``, ``report.html``.

Score entries follow the upstream ``ScoreCollection`` shapes: a valid entry carries the evaluator's score
field (``score``, ``match`` for exactMatch, ``count`` for citations, the folder name for custom evaluators),
``result``, ``threshold`` (where the evaluator has one), ``reason`` and its details; an errored entry is
``{"result": "error", "error": "Evaluator failed: <message>", "code": <code>}``.
"""

from __future__ import annotations

import json
import math
import os
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from .atomic import atomic_write
from .statuses import thread_summary

__all__ = ["save_results", "score_collections", "thread_summary"]

ERROR_PREFIX = "Evaluator failed: "


def score_collections(df: pd.DataFrame) -> list[dict | None]:
    """Per row, the ``scores`` object of results.json (None for rows that were not scored)."""
    scored = df.attrs.get("evalkit", {}).get("scored") or []
    collections: list[dict] = [{} for _ in range(len(df))]
    for spec in scored:
        key = spec["key"]
        field, with_threshold = spec["score_field"], spec["has_threshold"]
        columns = zip(
            df[f"{key}_result"].tolist(),
            df[key].tolist(),
            df[f"{key}_threshold"].tolist(),
            df[f"{key}_reason"].tolist(),
            df[f"{key}_error"].tolist(),
            df[f"{key}_code"].tolist(),
            df[f"{key}_details"].tolist(),
        )
        for collection, (result, score, threshold, reason, error, code, details) in zip(collections, columns):
            if not isinstance(result, str):
                continue
            if result == "error":
                entry = {"result": "error", "error": ERROR_PREFIX + (error or "unknown error")}
                if code:
                    entry["code"] = code
            else:
                score = _plain(score)
                entry = {field: int(score) if field == "count" else score, "result": result}
                if with_threshold:
                    entry["threshold"] = _integral(_plain(threshold))
                if isinstance(reason, str):
                    entry["reason"] = reason
                if details:
                    entry.update(details)
            collection[key] = entry
    return collections


def _plain(value):
    """JSON-friendly scalars: numpy types to Python, integral floats kept as numbers."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _integral(value):
    """Thresholds such as 3.0 are written as 3, as the upstream examples do."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def save_results(
    df: pd.DataFrame, out_dir: str | os.PathLike, *, title: str | None = None
) -> dict[str, Path]:
    """Write results.json, results.csv and report.html into ``out_dir``, each replaced atomically."""
    from .documents import to_document
    from .reports.csv_report import write_csv
    from .reports.html_report import write_html

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    document = to_document(df)
    metadata = dict(document.get("metadata") or {})
    metadata["evaluatedAt"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    document["metadata"] = metadata
    paths = {"json": out / "results.json", "csv": out / "results.csv", "html": out / "report.html"}
    with atomic_write(paths["json"]) as handle:
        json.dump(document, handle, ensure_ascii=False, indent=2)
        handle.write("\n")
    write_csv(df, paths["csv"])
    write_html(df, paths["html"], title=title)
    return paths
