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

import numpy as np
import pandas as pd

from evalkit.documents.columns import score_column
from evalkit.documents.encoding.json_items import encode_items, json_encoder

__all__ = [
    "collection",
    "entry_score",
    "iter_score_collections",
    "results_metadata",
    "score_chunks",
    "write_document",
]

ERROR_PREFIX = "Evaluator failed: "

#: evalkit's error codes that the upstream schema's closed list lacks, and the upstream code written for them in
#: results.json (which stays valid against the upstream schema); the case table and results.csv keep evalkit's.
UPSTREAM_CODES = {"evaluatorTimeout": "evaluatorError"}


#: Rows whose column values are taken out of the table at a time while results are written, so the lists
#: in memory stay small (issue 20: the whole table's lists added about 30 MB at 100,000 rows; chunks of 5,000
#: rows held 14.7 MB while results.json was written, chunks of 2,000 hold 6.4 MB, as fast).
CHUNK_ROWS = 2_000


def iter_score_collections(df: pd.DataFrame, order=None) -> Iterator[dict]:
    """Per row (in ``order`` when given), the ``scores`` object of results.json."""
    for columns, count, with_codes in score_chunks(df, order):
        for row in range(count):
            yield collection(columns, row, with_codes)


def score_chunks(df: pd.DataFrame, order=None) -> Iterator[tuple[list, int, bool]]:
    """Per ``CHUNK_ROWS`` rows (in ``order`` when given): the scored evaluators' columns as lists, one
    ``(key, score field, thresholds, [results, scores, thresholds, reasons, errors, codes, details])`` per
    evaluator, the chunk's row count, and whether errored entries carry their ``code``."""
    meta = df.attrs.get("evalkit", {})
    scored = meta.get("scored") or []
    with_codes = supports_error_codes((meta.get("document") or {}).get("schemaVersion"))
    specs = []
    for spec in scored:
        key = spec["key"]
        names = [
            f"{key}_result",
            score_column(key),
            *(f"{key}_{p}" for p in ("threshold", "reason", "error")),
        ]
        arrays = [_array(df[name], name == names[1]) for name in (*names, f"{key}_code", f"{key}_details")]
        thresholds = None
        if spec["has_threshold"]:
            thresholds = {t: _integral(t) for t in set(arrays[2].tolist()) if t == t}
        specs.append((key, spec["score_field"], thresholds, arrays))
    for start in range(0, len(df), CHUNK_ROWS):
        rows = slice(start, start + CHUNK_ROWS) if order is None else order[start : start + CHUNK_ROWS]
        columns = [(key, field, thresholds, _chunk(arrays, rows)) for key, field, thresholds, arrays in specs]
        yield columns, min(CHUNK_ROWS, len(df) - start), with_codes


def _array(column: pd.Series, score: bool) -> np.ndarray:
    """A column's values as ``Series.tolist`` gives them (``pd.NA`` kept), the score column as ``to_numpy``."""
    if score or isinstance(column.dtype, np.dtype):
        return column.to_numpy()
    return column.astype(object).to_numpy()


def _chunk(arrays: list[np.ndarray], rows) -> list[list]:
    values = [array[rows] for array in arrays]
    return [values[0].tolist(), _python_values(values[1]), *(v.tolist() for v in values[2:])]


def collection(columns: list, row: int, with_codes: bool) -> dict:
    """Row ``row``'s ``scores`` object, from a chunk's columns (:func:`score_chunks`)."""
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
            entry = {field: entry_score(field, scores[row]), "result": result}
            if thresholds is not None:
                entry["threshold"] = thresholds.get(limits[row])
            if reasons[row].__class__ is str:
                entry["reason"] = reasons[row]
            if details[row]:
                entry.update(details[row])
        collection[key] = entry
    return collection


def entry_score(field: str, score):
    """A valid entry's score as results.json holds it: a Citations ``count`` as an integer, others as scored.
    Surfaces that print a score (the JUnit file) print this value, so they say what results.json says."""
    return int(score) if field == "count" else score


def _python_values(values: np.ndarray) -> list:
    """Scores as plain Python values: booleans and numbers stored in object columns may be numpy scalars."""
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
    samples = df.attrs.get("evalkit", {}).get("samples")  # --samples K: k, pass_rule, flaky_rows
    if samples:
        metadata["extensions"] = {**(metadata.get("extensions") or {}), "dev.evalkit.samples": samples}
    return metadata


def _run_provenance(df: pd.DataFrame) -> dict:
    """What produced these results: the evalkit version and the sha256 of the document file, if any: the
    digest of the bytes read and scored (``case_cells.read_cells``), never the file re-read now, which may
    have changed since."""
    from evalkit.documents.versions import EVALKIT_VERSION as __version__

    info = {"evalkit_version": __version__}
    digest = df.attrs.get("evalkit", {}).get("document_sha256")
    if isinstance(digest, str):
        info["document_sha256"] = digest
    return info


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_document(document: dict, handle) -> None:
    """Write a document as JSON with one item per line: readable, diff-friendly, and fast.

    ``handle`` is a text or a binary file. ``json.dump`` with ``indent`` falls back to the pure-Python encoder
    (seconds for 100,000 items), so each top-level value is encoded in one C-accelerated call, and the items by
    orjson in chunks (:mod:`evalkit.documents.encoding.json_items`: the same bytes as the standard encoder's, which
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
