"""How much does a judge disagree with itself? Spread, flips, pass^k and pass@k over k samples of one run.

    import evalkit
    from evalkit.analysis.noise import judge_noise
    runs = evalkit.sample_judgments(df, 3)                            # k samples of the same judge
    noise = judge_noise(runs)                                         # renders in a notebook
    noise.table                                                       # one row per evaluator
    noise.rows                                                        # one row per (evaluator, case row)

**Judge noise** (:func:`judge_noise`): ``k`` scored tables of the same document (``k`` samples of the same judge),
aligned by (``item``, ``turn``). Per row and evaluator: the ``k`` scores and results, ``spread`` (max - min of the
scores), ``std`` (sample standard deviation, ``ddof=1``; both need two finite scores), ``flip`` (both ``pass``
and ``fail`` among the results), ``pass_all`` (every sample passed) and ``pass_any`` (some sample passed). Per
evaluator: ``mean_spread`` and ``mean_std`` over the rows where they are defined, and over the *complete* rows
(every sample ``pass`` or ``fail``; errored samples say nothing about the answer, as in :func:`evalkit.summary`)
``flip_rate``, ``pass_rate`` (mean single-sample pass rate), ``pass_hat_k`` (pass^k: share of rows that passed
in all ``k`` samples) and ``pass_at_k`` (pass@k: passed in at least one). ``pass_hat_k <= pass_rate <=
pass_at_k``; the gap between them is the judge's (or the agent's) inconsistency.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.calibration import find_judge
from evalkit.analysis.calibration_views import fmt, noise_html
from evalkit.analysis.pairing import column_texts, row_keys, turn_array
from evalkit.analysis.summaries import numeric_scores, scored_evaluators
from evalkit.documents.columns import score_column
from evalkit.errors import EvalkitError

__all__ = ["NOISE_COLUMNS", "NOISE_ROW_COLUMNS", "JudgeNoise", "judge_noise"]

NOISE_ROW_COLUMNS = (
    "judge",
    "key",
    "item",
    "turn",
    "prompt",
    "scores",
    "results",
    "samples",
    "spread",
    "std",
    "passes",
    "fails",
    "errors",
    "flip",
    "complete",
    "pass_all",
    "pass_any",
)
NOISE_COLUMNS = (
    "key",
    "samples",
    "rows",
    "complete",
    "mean_spread",
    "max_spread",
    "mean_std",
    "flips",
    "flip_rate",
    "pass_rate",
    "pass_hat_k",
    "pass_at_k",
)


@dataclass
class JudgeNoise:
    """How much ``samples`` runs of the same judge on the same document disagree. Build with :func:`judge_noise`.

    ``rows``: one row per (evaluator, case row) asked in some sample, columns :data:`NOISE_ROW_COLUMNS`.
    ``table``: one row per evaluator (index: its name), columns :data:`NOISE_COLUMNS`. ``unmatched``: rows of
    the first table missing from some other sample (left out).
    """

    rows: pd.DataFrame
    table: pd.DataFrame
    samples: int
    unmatched: int = 0

    def __repr__(self) -> str:
        parts = [
            f"{name}: mean spread {fmt(r['mean_spread'])}, flip rate {fmt(r['flip_rate'])}"
            for name, r in self.table.iterrows()
        ]
        return f"<JudgeNoise k={self.samples}; {'; '.join(parts) or 'no evaluator'}>"

    def _repr_html_(self) -> str:
        """Notebook view: the per-evaluator table and the noisiest rows (all text escaped)."""
        return noise_html(self, max_rows=10)


def _sample_frames(samples: Any) -> list[pd.DataFrame]:
    if isinstance(samples, pd.DataFrame):
        if "sample" not in samples.columns:
            raise EvalkitError(
                "one table was given: it needs a 'sample' column (the judge sample index) to hold k samples; "
                "or pass a list of k scored tables"
            )
        frames = []
        for _, group in samples.groupby("sample", sort=True):
            group = group.copy()
            group.attrs = dict(samples.attrs)
            frames.append(group)
    elif isinstance(samples, Mapping):
        frames = list(samples.values())
    else:
        frames = list(samples)
    if not all(isinstance(f, pd.DataFrame) for f in frames):
        raise TypeError("samples must be scored case tables (DataFrames)")
    if len(frames) < 2:
        raise EvalkitError(f"judge noise needs at least two samples of the same run, got {len(frames)}")
    return frames


def judge_noise(
    samples: Sequence[pd.DataFrame] | Mapping[str, pd.DataFrame] | pd.DataFrame,
    key: str | Sequence[str] | None = None,
) -> JudgeNoise:
    """Spread, flips, pass^k and pass@k of ``k`` scored tables of the same document (see the module docstring).

    ``samples``: a list (or mapping) of ``k >= 2`` scored tables, or one table with a ``sample`` column.
    ``key``: an evaluator name or key, a list of them, or None for every evaluator scored in all samples. Rows
    are matched by (item, turn); their prompts must agree (the samples must be runs of the same document).
    """
    frames = _sample_frames(samples)
    k = len(frames)
    specs = [
        {ev["key"]: ev for ev in scored_evaluators(f) if f"{ev['key']}_result" in f.columns} for f in frames
    ]
    if key is None:
        chosen = [ev for name, ev in specs[0].items() if all(name in s for s in specs[1:])]
    else:
        wanted = [key] if isinstance(key, str) else list(dict.fromkeys(key))
        chosen = [find_judge(frames[0], name, "sample 0") for name in wanted]
        for ev in chosen:
            for number, spec in enumerate(specs[1:], 1):
                if ev["key"] not in spec:
                    raise EvalkitError(
                        f"evaluator {ev.get('name', ev['key'])!r} is not scored in sample {number}"
                    )
    if not chosen:
        raise EvalkitError("no evaluator is scored in every sample")

    item, turn = row_keys(frames[0], "sample 0")
    base = pd.MultiIndex.from_arrays([item, turn])
    positions = [np.arange(len(frames[0]))]
    for number, frame in enumerate(frames[1:], 1):
        other = pd.MultiIndex.from_arrays(row_keys(frame, f"sample {number}"))
        positions.append(other.get_indexer(base))
    where = np.column_stack(positions)
    present = (where >= 0).all(axis=1)
    where, item, turn = where[present], item[present], turn[present]
    prompts = [column_texts(f, "prompt", "")[where[:, s]] for s, f in enumerate(frames)]
    for number in range(1, k):
        changed = np.flatnonzero(prompts[number] != prompts[0])
        if len(changed):
            first = changed[0]
            at = f"item {item[first]}" + ("" if turn[first] < 0 else f", turn {turn[first]}")
            raise EvalkitError(
                f"sample {number} has another prompt than sample 0 at {at}: the samples must be runs of the "
                "same document"
            )

    row_pieces, table = [], {}
    for ev in chosen:
        name, column = str(ev.get("name", ev["key"])), score_column(ev["key"])
        results = np.column_stack(
            [column_texts(f, f"{ev['key']}_result")[where[:, s]] for s, f in enumerate(frames)]
        )
        scores = np.column_stack(
            [
                numeric_scores(f[column])[where[:, s]] if column in f.columns else np.full(len(where), np.nan)
                for s, f in enumerate(frames)
            ]
        )
        judged = (results == "pass") | (results == "fail")
        scores = np.where(judged, scores, np.nan)
        asked = np.flatnonzero((results != None).any(axis=1))  # noqa: E711 (elementwise)
        results, scores, judged = results[asked], scores[asked], judged[asked]
        finite = np.isfinite(scores).sum(axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # rows with fewer than two scores
            spread = np.where(finite >= 2, np.nanmax(scores, axis=1) - np.nanmin(scores, axis=1), np.nan)
            std = np.where(finite >= 2, np.nanstd(scores, axis=1, ddof=1), np.nan)
        passes = (results == "pass").sum(axis=1)
        fails = (results == "fail").sum(axis=1)
        errors = (results == "error").sum(axis=1)
        flip = (passes > 0) & (fails > 0)
        complete = judged.all(axis=1)
        pass_all, pass_any = passes == k, passes > 0
        row_pieces.append(
            pd.DataFrame(
                {
                    "judge": name,
                    "key": ev["key"],
                    "item": item[asked],
                    "turn": turn_array(turn[asked]),
                    "prompt": prompts[0][asked],
                    "scores": [[float(v) for v in line] for line in scores.tolist()],
                    "results": [list(line) for line in results.tolist()],
                    "samples": finite,
                    "spread": spread,
                    "std": std,
                    "passes": passes,
                    "fails": fails,
                    "errors": errors,
                    "flip": flip,
                    "complete": complete,
                    "pass_all": pass_all,
                    "pass_any": pass_any,
                },
                columns=list(NOISE_ROW_COLUMNS),
            )
        )
        done = int(complete.sum())

        def share(mask: np.ndarray, done: int = done, complete: np.ndarray = complete) -> float:
            return float(mask[complete].sum() / done) if done else math.nan

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no row with two scores
            table[name] = {
                "key": ev["key"],
                "samples": k,
                "rows": len(asked),
                "complete": done,
                "mean_spread": float(np.nanmean(spread)) if np.isfinite(spread).any() else math.nan,
                "max_spread": float(np.nanmax(spread)) if np.isfinite(spread).any() else math.nan,
                "mean_std": float(np.nanmean(std)) if np.isfinite(std).any() else math.nan,
                "flips": int(flip[complete].sum()),
                "flip_rate": share(flip),
                "pass_rate": float(passes[complete].sum() / (done * k)) if done else math.nan,
                "pass_hat_k": share(pass_all),
                "pass_at_k": share(pass_any),
            }
    out = pd.DataFrame.from_dict(table, orient="index", columns=list(NOISE_COLUMNS))
    out.index.name = "judge"
    return JudgeNoise(
        rows=pd.concat(row_pieces, ignore_index=True),
        table=out,
        samples=k,
        unmatched=int((~present).sum()),
    )
