"""The case table as Spark columns, and back: flat columns, with nested values as JSON strings.

Spark needs one type per column, and the nested values of a case table (citations, retrieval executions,
evaluator maps, the item's own dict) differ from row to row, so they travel as JSON text: ``citations`` is
``'[{"index": 1, ...}]'``, ``evaluators`` is ``'{"ExactMatch": {}}'``. Everything else keeps its type:
``item`` and ``turn`` are integers (``turn`` null for a single-turn item), texts are strings.

Result columns follow the pandas engine: per evaluator key ``K`` the score (``K``, or ``K_score`` where ``K``
is an input column name), ``K_result``, ``K_threshold``, ``K_reason``, ``K_error``, ``K_code`` and
``K_details`` (JSON text), then ``status``, ``error_code``, ``error_message``. Scores are doubles, except
exactMatch's ``match``, which is a boolean as in the pandas engine.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from evalkit.documents.case_table import CASE_COLUMNS
from evalkit.documents.columns import score_column
from evalkit.documents.json_input import parse_json_text
from evalkit.errors import DocumentError
from evalkit.evaluators.base import RESULT_COLUMNS

#: Case-table columns held as JSON text, with what a null becomes (a fresh value per row).
JSON_COLUMNS: dict[str, Any] = {
    "citations": list,
    "retrieval_executions": list,
    "tool_calls": None,
    "spans": list,
    "evaluators": dict,
    "extensions": dict,
    "source": dict,
    "thread_source": None,
    "allowed_tools": None,
}
#: JSON columns whose equal texts may share one parsed object: the engine groups rows by evaluator-map identity.
_SHARED = frozenset({"evaluators", "thread_source"})
INTEGER_COLUMNS = ("item", "turn")
#: The row verdict columns the engine adds after the evaluators' columns.
STATUS_COLUMNS = ("status", "error_code", "error_message")

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_EMPTY = {"[]": list, "{}": dict}


def case_schema(columns) -> str:
    """The Spark DDL schema of a case table with ``columns`` (from :func:`spark_frame`)."""
    return ", ".join(f"`{c}` {'bigint' if c in INTEGER_COLUMNS else 'string'}" for c in columns)


def spark_frame(table: pd.DataFrame) -> pd.DataFrame:
    """A case table (from ``evalkit.load``) as a pandas frame of Spark-ready columns: nested values as JSON."""
    columns = [c for c in CASE_COLUMNS if c in table.columns]
    columns += [c for c in table.columns if c in JSON_COLUMNS and c not in columns]
    out = {}
    for column in columns:
        values = table[column]
        if column in JSON_COLUMNS:
            memo: dict[int, str] = {}
            texts = []
            for value in values.tolist():
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    texts.append(None)
                    continue
                text = memo.get(id(value))
                if text is None:
                    text = _dumps(value)
                    if column in _SHARED:
                        memo[id(value)] = text
                texts.append(text)
            out[column] = texts
        elif column == "turn":
            out[column] = pd.array(values, dtype="Int64")
        elif column == "item":
            out[column] = values.astype("int64")
        else:
            out[column] = [v if isinstance(v, str) else None for v in values.tolist()]
    return pd.DataFrame(out, columns=columns)


def case_table(batch: pd.DataFrame) -> pd.DataFrame:
    """A batch of Spark rows (as pandas) back into a case table the engine reads: JSON parsed, ``turn`` as
    nullable integers. Equal evaluator maps share one dict, as the maps of a loaded document do."""
    out = {}
    for column in batch.columns:
        values = batch[column]
        if column in JSON_COLUMNS:
            out[column] = _parse(values, column)
        elif column == "turn":
            out[column] = values.astype("Int64") if len(values) else pd.array([], dtype="Int64")
        elif column == "item":
            out[column] = values.astype("int64")
        else:
            out[column] = values
    return pd.DataFrame(out, index=batch.index, columns=list(batch.columns))


def _parse(values: pd.Series, column: str) -> list:
    default = JSON_COLUMNS[column]
    shared = column in _SHARED
    memo: dict[str, Any] = {}
    parsed = []
    for position, text in enumerate(values.tolist()):
        if text is None or (isinstance(text, float) and math.isnan(text)):
            parsed.append(default() if default is not None else None)
            continue
        empty = _EMPTY.get(text)
        if empty is not None:  # the common "[]" / "{}": a fresh value, no parsing
            parsed.append(empty())
            continue
        if shared and text in memo:
            parsed.append(memo[text])
            continue
        try:
            value = parse_json_text(text)
        except (TypeError, ValueError) as exc:
            raise DocumentError(
                f"column '{column}' must hold JSON text; row {position} of a batch holds {str(text)[:80]!r} "
                f"({exc})"
            ) from None
        if shared:
            memo[text] = value
        parsed.append(value)
    return parsed


# --- result columns ----------------------------------------------------------------------------------------


def result_fields(specs: list[dict]) -> list[tuple[str, str]]:
    """``(column, Spark type)`` of the result columns for the scored evaluators ``specs``, in engine order."""
    fields = []
    for spec in specs:
        key = spec["key"]
        fields.append((score_column(key), "boolean" if spec["score_field"] == "match" else "double"))
        for part in RESULT_COLUMNS[1:]:
            fields.append((f"{key}_{part}", "double" if part == "threshold" else "string"))
    fields.extend((c, "string") for c in STATUS_COLUMNS)
    return fields


def result_frame(scored: pd.DataFrame, fields: list[tuple[str, str]]) -> pd.DataFrame:
    """The engine's result columns in Arrow-ready form: every field present, details as JSON text."""
    n = len(scored)
    out = {}
    for column, kind in fields:
        if column not in scored.columns:
            out[column] = np.full(n, np.nan) if kind == "double" else [None] * n
            continue
        values = scored[column]
        if kind == "double":
            out[column] = _floats(values)
        elif kind == "boolean":
            out[column] = [bool(v) if isinstance(v, (bool, np.bool_)) else None for v in values.tolist()]
        elif column.endswith("_details"):
            out[column] = [None if v is None else _dumps(v) for v in values.tolist()]
        elif values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):
            out[column] = values.to_numpy()  # str and None / NaN only: Arrow reads NaN as null
        else:
            out[column] = [v if isinstance(v, str) else None for v in values.tolist()]
    return pd.DataFrame(out, columns=[c for c, _ in fields], copy=False)


def _floats(values: pd.Series) -> np.ndarray:
    try:
        return values.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def scored_table(batch: pd.DataFrame, specs: list[dict], meta: dict | None = None) -> pd.DataFrame:
    """Rows of an evaluated Spark frame (as pandas) as the scored case table the pandas engine returns:
    inputs parsed, details as dicts, exactMatch's missing scores NaN, ``attrs["evalkit"]`` set."""
    table = case_table(batch)
    for spec in specs:
        key = spec["key"]
        details = f"{key}_details"
        if details in table.columns:
            table[details] = [None if v is None else json.loads(v) for v in table[details].tolist()]
        column = score_column(key)
        if spec["score_field"] == "match" and column in table.columns:
            table[column] = np.array(
                [np.nan if v is None else bool(v) for v in table[column].tolist()], dtype=object
            )
    table.attrs["evalkit"] = {**(meta or {}), "scored": [dict(s) for s in specs]}
    return table
