"""Which rows of two tables are the same case: rows are matched by their position, (``item``, ``turn``).

- :func:`pair_rows`: the rows of run A and run B that :func:`evalkit.compare` compares (same position *and* same
  prompt), and the unpaired rest (only in A, only in B, prompt changed), columns :data:`UNPAIRED_COLUMNS`.
- :func:`row_keys` / :func:`turn_array`: (item, turn) of a scored table, each at most once, as calibration and
  judge noise match judge results with human labels and with other samples.
- :func:`as_run` / :func:`run_label`: a run given as a DataFrame, a run folder or a results.json file, and the
  short name reports give it.
- :func:`column_texts`: a column as an object array with one value for "missing".
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.documents.case_table import document_title
from evalkit.errors import EvalkitError

__all__ = ["as_run", "column_texts", "pair_rows", "row_keys", "run_label", "turn_array"]

UNPAIRED_COLUMNS = ("item", "turn", "reason", "prompt_a", "prompt_b")
ONLY_A, ONLY_B, PROMPT_CHANGED = "only in A", "only in B", "prompt changed"


def as_run(run: Any, which: str) -> pd.DataFrame:
    """``run`` as a scored case table: a DataFrame as it is, a run folder or results.json read back."""
    if isinstance(run, pd.DataFrame):
        return run
    if isinstance(run, (str, os.PathLike)):
        from evalkit.documents.run_reader import read_run

        return read_run(run)
    raise TypeError(f"run {which} must be a DataFrame, a run folder or a results.json path, not {type(run)}")


def run_label(run: Any, df: pd.DataFrame) -> str:
    """A short name for a run: its folder name (never the full local path: reports get shared).

    Without a folder, the document's ``metadata.name``, else its source file name, else ``"evalkit report"``
    (the title the run's report.html gets).
    """
    source = run if isinstance(run, (str, os.PathLike)) else (df.attrs.get("evalkit") or {}).get("source")
    if source and not str(source).startswith("<"):
        path = Path(source)
        return (path.parent.name or path.name) if path.name == "results.json" else path.name
    return document_title(df)


def column_texts(df: pd.DataFrame, column: str, missing: Any = None) -> np.ndarray:
    """A column as an object array with missing values (None, NaN, NA) replaced by ``missing``."""
    if column not in df.columns:
        return np.full(len(df), missing, dtype=object)
    values = df[column].to_numpy(dtype=object)
    out = values.copy()
    out[pd.isna(values)] = missing
    return out


def _keys(df: pd.DataFrame, which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(df)
    item = df["item"].to_numpy(dtype=np.int64) if "item" in df.columns else np.arange(n, dtype=np.int64)
    if "turn" in df.columns:
        turn = pd.array(df["turn"], dtype="Int64").fillna(-1).to_numpy(dtype=np.int64)
    else:
        turn = np.full(n, -1, dtype=np.int64)
    prompt = column_texts(df, "prompt", "")
    duplicated = pd.MultiIndex.from_arrays([item, turn]).duplicated()
    if duplicated.any():
        first = int(np.flatnonzero(duplicated)[0])
        raise EvalkitError(
            f"run {which} has more than one row for item {item[first]}"
            + ("" if turn[first] < 0 else f", turn {turn[first]}")
            + ": rows are paired by (item, turn), so each may appear once."
        )
    return item, turn, prompt


def pair_rows(a: pd.DataFrame, b: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Positions of the paired rows in A and B (in A's order) and the unpaired rows."""
    item_a, turn_a, prompt_a = _keys(a, "A")
    item_b, turn_b, prompt_b = _keys(b, "B")
    left = pd.DataFrame({"item": item_a, "turn": turn_a, "pos_a": np.arange(len(a))})
    right = pd.DataFrame({"item": item_b, "turn": turn_b, "pos_b": np.arange(len(b))})
    merged = left.merge(right, on=["item", "turn"], how="outer", indicator=True, sort=False)
    both = merged[merged["_merge"] == "both"].sort_values("pos_a")
    pos_a = both["pos_a"].to_numpy(dtype=np.int64)
    pos_b = both["pos_b"].to_numpy(dtype=np.int64)
    same = prompt_a[pos_a] == prompt_b[pos_b]
    same = np.asarray(same, dtype=bool)

    pieces = []
    changed = both[~same]
    if len(changed):
        pieces.append(
            pd.DataFrame(
                {
                    "item": changed["item"].to_numpy(),
                    "turn": changed["turn"].to_numpy(),
                    "reason": PROMPT_CHANGED,
                    "prompt_a": prompt_a[pos_a[~same]],
                    "prompt_b": prompt_b[pos_b[~same]],
                }
            )
        )
    for side, reason in (("left_only", ONLY_A), ("right_only", ONLY_B)):
        rows = merged[merged["_merge"] == side]
        if len(rows):
            column = "pos_a" if side == "left_only" else "pos_b"
            positions = rows[column].to_numpy(dtype=np.int64)
            texts = (prompt_a if side == "left_only" else prompt_b)[positions]
            pieces.append(
                pd.DataFrame(
                    {
                        "item": rows["item"].to_numpy(),
                        "turn": rows["turn"].to_numpy(),
                        "reason": reason,
                        "prompt_a": texts if side == "left_only" else None,
                        "prompt_b": texts if side == "right_only" else None,
                    }
                )
            )
    if pieces:
        unpaired = pd.concat(pieces, ignore_index=True).sort_values(["item", "turn"], kind="stable")
        unpaired = unpaired.reset_index(drop=True)
    else:
        unpaired = pd.DataFrame({c: [] for c in UNPAIRED_COLUMNS})
    unpaired["item"] = unpaired["item"].astype(np.int64)
    turns = unpaired["turn"].to_numpy(dtype=np.int64)
    unpaired["turn"] = pd.array(np.where(turns < 0, None, turns).tolist(), dtype="Int64")
    return pos_a[same], pos_b[same], unpaired[list(UNPAIRED_COLUMNS)]


def row_keys(df: pd.DataFrame, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``item`` and ``turn`` (-1 for single-turn rows) as int arrays; each (item, turn) must appear once."""
    if "item" not in df.columns:
        raise EvalkitError(f"{what} has no 'item' column: give a scored case table (evalkit.evaluate)")
    item = pd.to_numeric(df["item"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if not np.isfinite(item).all():
        raise EvalkitError(f"{what} has rows without an item position")
    item = item.astype(np.int64)
    if "turn" in df.columns:
        turn = pd.to_numeric(df["turn"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        turn = np.where(np.isnan(turn), -1, turn).astype(np.int64)
    else:
        turn = np.full(len(df), -1, dtype=np.int64)
    seen = pd.MultiIndex.from_arrays([item, turn])
    if seen.has_duplicates:
        first = int(np.flatnonzero(seen.duplicated())[0])
        where = f"item {item[first]}" + ("" if turn[first] < 0 else f", turn {turn[first]}")
        raise EvalkitError(f"{what} has more than one row for {where}: rows are matched by (item, turn)")
    return item, turn


def turn_array(turn: np.ndarray) -> pd.arrays.IntegerArray:
    """Turns from :func:`row_keys` (-1 for single-turn rows) back as a nullable integer array (NA for -1)."""
    return pd.array([None if t < 0 else int(t) for t in turn.tolist()], dtype="Int64")
