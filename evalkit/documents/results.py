"""Results files: ``results.json`` (the document enriched with outputs), ``results.csv``, ``report.html``.

Score entries follow the upstream ``ScoreCollection`` shapes: a valid entry carries the evaluator's score
field (``score``, ``match`` for exactMatch, ``count`` for citations, the folder name for custom evaluators),
``result``, ``threshold`` (where the evaluator has one), ``reason`` and its details; an errored entry is
``{"result": "error", "error": "Evaluator failed: <message>", "code": <code>}``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.documents.columns import score_column
from evalkit.documents.json_items import encode_items, json_encoder

__all__ = ["iter_score_collections", "results_metadata", "write_document"]

ERROR_PREFIX = "Evaluator failed: "

#: evalkit's error codes that the upstream schema's closed list lacks, and the upstream code written for them in
#: results.json (which stays valid against the upstream schema); the case table and results.csv keep evalkit's.
UPSTREAM_CODES = {"evaluatorTimeout": "evaluatorError"}


def iter_score_collections(df: pd.DataFrame, order=None) -> Iterator[dict]:
    """Per row (in ``order`` when given), the ``scores`` object of results.json."""
    meta = df.attrs.get("evalkit", {})
    scored = meta.get("scored") or []
    with_codes = supports_error_codes((meta.get("document") or {}).get("schemaVersion"))
    columns = []
    for spec in scored:
        key = spec["key"]
        values = [
            df[f"{key}_result"].tolist(),
            _python_values(df[score_column(key)]),
            *(df[f"{key}_{part}"].tolist() for part in ("threshold", "reason", "error", "code", "details")),
        ]
        if order is not None:
            values = [[v[i] for i in order] for v in values]
        thresholds = {t: _integral(t) for t in set(values[2]) if t == t} if spec["has_threshold"] else None
        columns.append((key, spec["score_field"], thresholds, values))
    for row in range(len(df)):
        collection = {}
        for key, field, thresholds, (results, scores, limits, reasons, errors, codes, details) in columns:
            result = results[row]
            if result.__class__ is not str:
                continue
            if result == "error":
                entry = {"result": "error", "error": ERROR_PREFIX + (errors[row] or "unknown error")}
                if with_codes and codes[row]:
                    entry["code"] = UPSTREAM_CODES.get(codes[row], codes[row])
            else:
                score = scores[row]
                entry = {field: int(score) if field == "count" else score, "result": result}
                if thresholds is not None:
                    entry["threshold"] = thresholds.get(limits[row])
                if reasons[row].__class__ is str:
                    entry["reason"] = reasons[row]
                if details[row]:
                    entry.update(details[row])
            collection[key] = entry
        yield collection


def _python_values(column: pd.Series) -> list:
    """Scores as plain Python values: booleans and numbers stored in object columns may be numpy scalars."""
    values = column.to_numpy()
    if values.dtype != object:
        return values.tolist()
    return [v.item() if isinstance(v, np.generic) else v for v in values.tolist()]


def supports_error_codes(version) -> bool:
    """Errored score entries carry the machine-readable ``code`` from schema 1.9.0 on."""
    try:
        major, minor, _ = (int(part) for part in str(version).split("."))
    except ValueError:
        return True
    return (major, minor) >= (1, 9)


def _integral(value):
    """Thresholds such as 3.0 are written as 3, as the upstream examples do."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def results_metadata(df: pd.DataFrame, metadata: dict) -> dict:
    """The document's metadata plus when it was evaluated and, for judged runs, what judging cost."""
    metadata = {**metadata, "evaluatedAt": _now()}
    metadata["extensions"] = {**(metadata.get("extensions") or {}), "dev.evalkit.run": _run_provenance(df)}
    judge = df.attrs.get("evalkit", {}).get("judge")
    if judge:
        metadata["extensions"] = {**(metadata.get("extensions") or {}), "dev.evalkit.judge": judge}
    return metadata


def _run_provenance(df: pd.DataFrame) -> dict:
    """What produced these results: the evalkit version and the sha256 of the document file, if any."""
    import hashlib

    from evalkit.documents.versions import EVALKIT_VERSION as __version__

    info = {"evalkit_version": __version__}
    source = df.attrs.get("evalkit", {}).get("source")
    if source and not str(source).startswith("<") and Path(source).is_file():
        info["document_sha256"] = hashlib.sha256(Path(source).read_bytes()).hexdigest()
    return info


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_document(document: dict, handle) -> None:
    """Write a document as JSON with one item per line: readable, diff-friendly, and fast.

    ``handle`` is a text or a binary file. ``json.dump`` with ``indent`` falls back to the pure-Python encoder
    (seconds for 100,000 items), so each top-level value is encoded in one C-accelerated call, and the items by
    orjson in chunks (:mod:`evalkit.documents.json_items`: the same bytes as the standard encoder's, which
    writes whatever orjson writes differently).
    """
    encode = json_encoder()
    binary = not isinstance(handle, io.TextIOBase)
    write = handle.write if binary else None
    if not binary:

        def write(data: bytes) -> None:
            handle.write(data.decode("utf-8"))

    parts = []
    for number, (key, value) in enumerate(document.items()):
        parts.append("," if number else "{")
        parts.append(f"\n  {json.dumps(key)}: ")
        if key != "items":
            parts.append(encode(value))
            continue
        parts.append("[")
        write("".join(parts).encode("utf-8"))
        parts = []
        first = True
        for chunk in encode_items(value):
            write((b"\n    " if first else b",\n    ") + b",\n    ".join(chunk))
            first = False
        parts.append("\n  ]")
    parts.append("{\n}\n" if not document else "\n}\n")
    write("".join(parts).encode("utf-8"))
