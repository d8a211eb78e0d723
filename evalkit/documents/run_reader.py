"""Read a saved run back into a scored case table: ``read_run("results/demo")``.

``evalkit run`` (and :func:`evalkit.save_results`) write ``results.json``: the eval document enriched with each
row's ``scores`` entries, ``status`` and ``error``. :func:`read_run` turns that file back into the same scored
case table that :func:`evalkit.evaluate` returned in memory, so that comparisons, charts and reports work on
yesterday's run exactly as on today's, without re-running anything.

How a ``scores`` entry maps onto the result columns of evaluator key ``K`` (the reverse of
:func:`evalkit.documents.results.iter_score_collections`):

* ``K``: the entry's score field: ``match`` for exactMatch, ``count`` for citations, the key itself for a
  custom evaluator (its entry holds a field named like its folder), else ``score``. Scores are float (NaN
  where missing) unless some are not plain numbers (exactMatch's booleans): then an object column, NaN missing.
* ``K_result``, ``K_threshold`` (float, NaN missing), ``K_reason``.
* ``K_error``: the ``error`` text without the ``"Evaluator failed: "`` prefix the writer added; ``K_code``.
* ``K_details``: every other field of the entry (citations list, ``diagnostic_code``, …) as a dict, or None.

Rows that did not ask for ``K`` get None / NaN throughout, as in memory. Known losses, because results.json does
not store them: the threshold of an *errored* entry, and whether a custom evaluator is an LLM judge
(``is_llm`` is None for custom evaluators; True / False for the built-ins).
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.documents.columns import score_column
from evalkit.documents.evaluator_maps import BUILTIN_NAMES, LLM_BUILTINS
from evalkit.documents.results import ERROR_PREFIX
from evalkit.errors import DocumentError, shown

__all__ = ["read_run", "results_file"]

#: Name of the results file inside a run folder.
RESULTS_NAME = "results.json"

#: Output keys of the built-ins whose score field is not ``score``.
_SPECIAL_FIELDS = {"exactMatch": "match", "citations": "count"}
#: Built-ins without a threshold in their entries.
_NO_THRESHOLD = frozenset({"exactMatch"})
#: Entry fields that map onto a result column; everything else (besides the score field) is a detail.
_COLUMN_FIELDS = frozenset({"result", "threshold", "reason", "error", "code"})
_NAME_BY_KEY = {key: name for name, key in BUILTIN_NAMES.items()}
_LLM_KEYS = frozenset(LLM_BUILTINS.values())


def results_file(path: str | os.PathLike) -> Path:
    """The results.json of ``path``: the file itself, or ``<folder>/results.json`` for a run folder.

    Raises :class:`~evalkit.errors.DocumentError` (exit code 2) when neither exists, naming what was looked for.
    """
    target = Path(path)
    if target.is_dir():
        candidate = target / RESULTS_NAME
        if not candidate.is_file():
            raise DocumentError(
                f"{shown(target)}: no {RESULTS_NAME} in this folder. Point to a run folder written by "
                f"'evalkit run DOC --out {target}', or to a results.json file."
            )
        return candidate
    if not target.exists():
        raise DocumentError(
            f"{shown(target)}: no such file or folder (expected a run folder or a results.json file)"
        )
    return target


def score_field(key: str, entry: dict) -> str:
    """The field of a ``scores`` entry that holds evaluator ``key``'s score (see the module docstring)."""
    special = _SPECIAL_FIELDS.get(key)
    if special is not None:
        return special
    return key if key in entry else "score"


class _Columns:
    """The result columns of one evaluator key, filled row by row while the entries are read."""

    def __init__(self, key: str, n: int):
        self.key = key
        self.score: list[Any] = [np.nan] * n
        self.result: list[Any] = [None] * n
        self.threshold = np.full(n, np.nan)
        self.reason: list[Any] = [None] * n
        self.error: list[Any] = [None] * n
        self.code: list[Any] = [None] * n
        self.details: list[Any] = [None] * n
        self.field: str | None = None
        self.saw_valid = False
        self.saw_threshold = False

    def put(self, row: int, entry: dict) -> None:
        result = entry.get("result")
        self.result[row] = result if isinstance(result, str) else None
        if result == "error":
            error = entry.get("error")
            if isinstance(error, str):
                self.error[row] = error[len(ERROR_PREFIX) :] if error.startswith(ERROR_PREFIX) else error
            elif error is not None:
                self.error[row] = str(error)
            code = entry.get("code")
            self.code[row] = code if isinstance(code, str) else None
            return
        field = score_field(self.key, entry)
        if self.field is None:
            self.field = field
        self.saw_valid = True
        self.score[row] = entry.get(field, np.nan)
        if "threshold" in entry:
            self.saw_threshold = True
            threshold = entry["threshold"]
            if isinstance(threshold, numbers.Real) and not isinstance(threshold, bool):
                self.threshold[row] = float(threshold)
        reason = entry.get("reason")
        self.reason[row] = reason if reason is None or isinstance(reason, str) else str(reason)
        details = {k: v for k, v in entry.items() if k != field and k not in _COLUMN_FIELDS}
        self.details[row] = details or None

    def frame_columns(self) -> dict[str, Any]:
        key = self.key
        return {
            score_column(key): _score_column(self.score),
            f"{key}_result": self.result,
            f"{key}_threshold": self.threshold,
            f"{key}_reason": self.reason,
            f"{key}_error": self.error,
            f"{key}_code": self.code,
            f"{key}_details": self.details,
        }

    def spec(self) -> dict[str, Any]:
        key = self.key
        has_threshold = self.saw_threshold if self.saw_valid else key not in _NO_THRESHOLD
        name = _NAME_BY_KEY.get(key, key)
        return {
            "name": name,
            "key": key,
            "score_field": self.field or _SPECIAL_FIELDS.get(key, key if name == key else "score"),
            "has_threshold": has_threshold,
            "is_llm": True if key in _LLM_KEYS else (False if name != key else None),
        }


def _is_plain_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _score_column(values: list[Any]) -> np.ndarray:
    """Float when every present score is a plain number (as the engine stores them), else object with NaN."""
    present = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
    if all(_is_plain_number(v) for v in present):
        return np.asarray(values, dtype=float)
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def read_run(path: str | os.PathLike, *, validate: bool | None = None) -> pd.DataFrame:
    """The scored case table of a saved run (a run folder or its results.json), as ``evaluate`` returned it.

    The document is read with :func:`evalkit.load`, then each row's ``scores`` entries become the result
    columns (see the module docstring), ``status`` comes from the row, ``error_code`` / ``error_message`` from
    its ``error``, and
    ``df.attrs["evalkit"]["scored"]`` lists the evaluator keys in first-seen order. A judged run's judge summary
    (``metadata.extensions["dev.evalkit.judge"]``) is restored to ``attrs["evalkit"]["judge"]``, a sampled run's
    ``dev.evalkit.samples`` (``--samples K``: k, pass_rule, flaky_rows) to ``attrs["evalkit"]["samples"]``.

    ``validate``: True checks the file against the schema first (about 0.25 ms per scored row: 2.5 s for 10,000
    rows); False never does; None (the default) reads without the check and, only if the file turns out not to
    be readable, checks it then, so that the error names the exact place that is wrong. Results files written
    by evalkit are valid, so the default costs nothing on them.

    Raises :class:`~evalkit.errors.DocumentError` (a user mistake, exit code 2) when the path does not exist,
    the JSON is not a document, or no row has a ``status`` (an eval document that was never run); its subclass
    :class:`~evalkit.documents.versions.SpanRunError` when the file is the results of ``evalkit spans eval``.
    """
    file = results_file(path)
    try:
        return _read(file, validate=bool(validate))
    except DocumentError:
        raise
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        if validate is None:
            _read(file, validate=True)  # raises DocumentError naming what is wrong, when the schema knows
        raise DocumentError(
            f"{shown(file)}: cannot be read as the results of a run ({type(exc).__name__}: {exc})"
        ) from None


def _read(file: Path, *, validate: bool) -> pd.DataFrame:
    from evalkit.documents.case_table import load

    df = load(file, validate=validate)
    entries = df["source"].tolist()
    n = len(entries)
    if n and not any(isinstance(e, dict) and isinstance(e.get("status"), str) for e in entries):
        raise DocumentError(
            f"{shown(file)}: no item has a 'status', so this is an eval document, not the results of a run. "
            f"Run it first: evalkit run {file} --out <folder>, then use <folder>."
        )

    groups: dict[str, _Columns] = {}
    status: list[Any] = [None] * n
    codes: list[Any] = [None] * n
    messages: list[Any] = [None] * n
    for row, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        value = entry.get("status")
        status[row] = value if isinstance(value, str) else None
        error = entry.get("error")
        if isinstance(error, dict):
            codes[row] = error.get("code")
            messages[row] = error.get("message")
        scores = entry.get("scores")
        if not isinstance(scores, dict):
            continue
        for key, score_entry in scores.items():
            if not isinstance(score_entry, dict):
                continue
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Columns(key, n)
            group.put(row, score_entry)

    added: dict[str, Any] = {}
    for group in groups.values():
        added.update(group.frame_columns())
    added["status"] = status
    added["error_code"] = codes
    added["error_message"] = messages
    # A score column may share its name with an input column (the Citations key "citations"): as in memory,
    # the score replaces it.
    table = df.copy()
    for column in [c for c in added if c in table.columns]:
        table[column] = added.pop(column)
    table = pd.concat([table, pd.DataFrame(added, index=table.index)], axis=1)
    meta = dict(df.attrs.get("evalkit") or {})
    meta["scored"] = [group.spec() for group in groups.values()]
    judge = _judge_summary(meta.get("document"))
    if judge is not None:
        meta["judge"] = judge
    samples = _extension(meta.get("document"), "dev.evalkit.samples")  # a run with --samples K
    if samples is not None:
        meta["samples"] = samples
    table.attrs["evalkit"] = meta
    return table


def _judge_summary(document: Any) -> dict | None:
    return _extension(document, "dev.evalkit.judge")


def _extension(document: Any, name: str) -> dict | None:
    """The document's ``metadata.extensions[name]`` when it is a dict, else None."""
    metadata = document.get("metadata") if isinstance(document, dict) else None
    extensions = metadata.get("extensions") if isinstance(metadata, dict) else None
    value = extensions.get(name) if isinstance(extensions, dict) else None
    return value if isinstance(value, dict) else None
