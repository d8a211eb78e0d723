"""How far can an LLM judge be trusted? Its agreement with human labels, per judge, with bootstrap intervals.

    from evalkit.analysis.calibration import calibrate
    cal = calibrate(scored, "Relevance", "data/demo.labels.json")     # or Labels, or a DataFrame of labels
    cal                                                               # renders in a notebook
    cal.table                                                         # one row per judge: metrics + intervals
    cal.disagreements                                                 # worst disagreements first
    calibrate(scored, ["Relevance", "relevance_v2"], labels)          # two judges on the same labels
    from evalkit.reporting.charts import calibration_heatmap
    calibration_heatmap(cal)                                          # judge x human confusion matrix

**Pairing.** A judge's result on a row and a human label are paired by the row's position, (``item``, ``turn``).
The human labels used for judge ``J`` are those whose ``evaluator`` is ``J``'s name or key, or every label when
the labels name a single evaluator (so a new judge version is calibrated on the labels made for the old one), or
those of ``evaluator=`` when given. Labels without a usable judge result (row not asked, judge error, item not in
the table) are skipped: ``labels`` counts the human labels considered, ``n`` the pairs. A label that records the
fingerprint of the prompt it was given for (``prompt_sha256``) pairs only with a row whose prompt still has it:
after the document's items were reordered or edited, such a label is not paired, and an
:class:`~evalkit.documents.versions.EvalkitWarning` names the items (label them again).

**What is compared** (``on``, per judge): ``"score"`` compares the judge's numeric score with the human 1-5
``score``; ``"verdict"`` compares the judge's ``pass`` / ``fail`` result with the human ``verdict``, coded pass = 1,
fail = 0. By default a judge is compared on scores when the labels have scores and the judge has numeric
(non-boolean) scores, and on verdicts otherwise.

The metrics (exact, within one, kappa, Spearman, bias) and their intervals are defined and computed in
:mod:`evalkit.analysis.agreement`; a judge's own noise over repeated judgments is :mod:`evalkit.analysis.noise`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.agreement import METRICS, agreement_metrics, bootstrap_metrics
from evalkit.analysis.calibration_views import calibration_html, fmt
from evalkit.analysis.labels import Labels, labels_frame, prompt_fingerprint
from evalkit.analysis.pairing import column_texts, row_keys, turn_array
from evalkit.analysis.statistics import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from evalkit.analysis.summaries import numeric_scores, scored_evaluators
from evalkit.documents.columns import score_column
from evalkit.documents.versions import EvalkitWarning
from evalkit.errors import EvalkitError

__all__ = ["PAIR_COLUMNS", "Calibration", "calibrate", "find_judge"]

PAIR_COLUMNS = (
    "judge",
    "key",
    "on",
    "item",
    "turn",
    "thread",
    "judge_value",
    "human_value",
    "difference",
    "judge_result",
    "judge_reason",
    "human_note",
    "labeller",
    "prompt",
    "response",
)


def find_judge(df: pd.DataFrame, judge: str, what: str) -> dict[str, Any]:
    """The scored evaluator of ``df`` whose key or name is ``judge`` (``what`` names ``df`` in the error)."""
    scored = [ev for ev in scored_evaluators(df) if f"{ev['key']}_result" in df.columns]
    for ev in scored:
        if judge in (ev["key"], ev.get("name")):
            return ev
    names = ", ".join(str(ev.get("name", ev["key"])) for ev in scored) or "none"
    raise EvalkitError(f"no evaluator {judge!r} is scored in {what} (scored: {names})")


def _is_boolean(series: pd.Series) -> bool:
    if series.dtype == bool:
        return True
    present = series.dropna()
    return len(present) > 0 and all(isinstance(v, (bool, np.bool_)) for v in present.tolist())


@dataclass
class Calibration:
    """Agreement of one or more judges with human labels. Build it with :func:`calibrate`.

    ``table``: one row per judge (index: its name, or ``"run: name"`` for several runs), columns ``key``,
    ``on``, ``kappa_kind``, ``labels``, ``n`` and each of :data:`METRICS` with ``_low`` / ``_high``.
    ``pairs``: every judged pair, columns :data:`PAIR_COLUMNS` (``difference`` = judge - human; verdicts coded
    pass = 1). ``disagreements``: the pairs that differ, largest ``|difference|`` first.
    """

    table: pd.DataFrame
    pairs: pd.DataFrame
    disagreements: pd.DataFrame
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE

    def __repr__(self) -> str:
        parts = [
            f"{name}: n={int(r['n'])}, exact={fmt(r['exact'])}, kappa={fmt(r['kappa'])}"
            for name, r in self.table.iterrows()
        ]
        return f"<Calibration {'; '.join(parts) or 'no judge'}; {len(self.disagreements)} disagreements>"

    def judge_name(self, judge: str | None = None) -> str:
        """The row of :attr:`table` that ``judge`` means: its name, its key, or its name without the run label.

        Default: the first row. Raises :class:`~evalkit.errors.EvalkitError` for an unknown judge.
        """
        if not len(self.table):
            raise EvalkitError("this calibration has no judge")
        if judge is None:
            return str(self.table.index[0])
        for name, row in self.table.iterrows():
            if judge in (name, row["key"], name.split(": ", 1)[-1]):
                return str(name)
        raise EvalkitError(f"no judge {judge!r} in this calibration (judges: {', '.join(self.table.index)})")

    def _repr_html_(self) -> str:
        """Notebook view: the metrics with their intervals and the worst disagreements (all text escaped)."""
        return calibration_html(self, max_rows=10)


def _labels_for(frame: pd.DataFrame, ev: dict[str, Any], evaluator: str | None) -> pd.DataFrame:
    names = list(dict.fromkeys(frame["evaluator"].tolist()))
    if evaluator is not None:
        chosen = frame[frame["evaluator"] == evaluator]
        if chosen.empty:
            raise EvalkitError(
                f"no human labels for evaluator {evaluator!r} (labels exist for: {', '.join(names)})"
            )
        return chosen
    if len(names) == 1:
        return frame
    chosen = frame[frame["evaluator"].isin([ev["key"], ev.get("name", ev["key"])])]
    if chosen.empty:
        raise EvalkitError(
            f"no human labels for judge {ev.get('name', ev['key'])!r}; labels exist for {', '.join(names)}: "
            "pass evaluator='<name>' to calibrate it on those"
        )
    return chosen


def _choose_on(df: pd.DataFrame, ev: dict[str, Any], human: pd.DataFrame, on: str | None, name: str) -> str:
    has_scores = bool(human["score"].notna().any())
    has_verdicts = bool(human["verdict"].notna().any())
    column = score_column(ev["key"])
    numeric = column in df.columns and not _is_boolean(df[column])
    numeric = numeric and bool(np.isfinite(numeric_scores(df[column])).any())
    if on is None:
        if has_scores and numeric:
            return "score"
        if has_verdicts:
            return "verdict"
        raise EvalkitError(
            f"judge {name!r} has no numeric scores to compare with the human 1-5 scores; "
            "label verdicts ('pass' / 'fail') to calibrate its results"
        )
    if on == "score":
        if not has_scores:
            raise EvalkitError(f"on='score' but the human labels for {name!r} have no scores")
        if not numeric:
            raise EvalkitError(f"on='score' but judge {name!r} has no numeric scores (boolean or missing)")
    elif not has_verdicts:
        raise EvalkitError(f"on='verdict' but the human labels for {name!r} have no verdicts")
    return on


def _pairs(df: pd.DataFrame, ev: dict[str, Any], human: pd.DataFrame, on: str, name: str) -> pd.DataFrame:
    """The judged rows of ``df`` matched with the labels in ``human`` by (item, turn), as :data:`PAIR_COLUMNS`."""
    key = ev["key"]
    item, turn = row_keys(df, "the scored table")
    result = column_texts(df, f"{key}_result")
    if on == "score":
        column = score_column(key)
        values = numeric_scores(df[column])
        values[result == "error"] = np.nan
        human = human[human["score"].notna()]
        human_values = human["score"].to_numpy(dtype=float, na_value=np.nan)
        human_shown = human["score"].astype(object).to_numpy()
    else:
        values = np.where(result == "pass", 1.0, np.where(result == "fail", 0.0, np.nan))
        human = human[human["verdict"].notna()]
        human_values = np.where(human["verdict"].to_numpy(dtype=object) == "pass", 1.0, 0.0)
        human_shown = human["verdict"].to_numpy(dtype=object)
    usable = np.flatnonzero(np.isfinite(values))
    left = pd.DataFrame({"item": item[usable], "turn": turn[usable], "row": usable})
    human_turn = human["turn"].to_numpy(dtype=float, na_value=np.nan)
    right = pd.DataFrame(
        {
            "item": human["item"].to_numpy(dtype=np.int64),
            "turn": np.where(np.isnan(human_turn), -1, human_turn).astype(np.int64),
            "label": np.arange(len(human)),
        }
    )
    matched = right.merge(left, on=["item", "turn"], how="inner", sort=False)
    matched = matched.sort_values(["item", "turn"], kind="stable")
    matched = _same_prompts(matched, df, human, name)
    rows = matched["row"].to_numpy(dtype=np.int64)
    labels = matched["label"].to_numpy(dtype=np.int64)
    judge_values = values[rows]
    if on == "score":
        judge_shown = judge_values.astype(object)
    else:
        judge_shown = np.where(judge_values == 1.0, "pass", "fail").astype(object)
    return pd.DataFrame(
        {
            "judge": name,
            "key": key,
            "on": on,
            "item": item[rows],
            "turn": turn_array(turn[rows]),
            "thread": column_texts(df, "thread")[rows],
            "judge_value": judge_shown,
            "human_value": human_shown[labels],
            "difference": judge_values - human_values[labels],
            "judge_result": result[rows],
            "judge_reason": column_texts(df, f"{key}_reason", "")[rows],
            "human_note": human["note"].to_numpy(dtype=object)[labels],
            "labeller": human["labeller"].to_numpy(dtype=object)[labels],
            "prompt": column_texts(df, "prompt", "")[rows],
            "response": column_texts(df, "response", "")[rows],
        },
        columns=list(PAIR_COLUMNS),
    )


def _same_prompts(matched: pd.DataFrame, df: pd.DataFrame, human: pd.DataFrame, name: str) -> pd.DataFrame:
    """``matched`` without the pairs whose label records another prompt than the row's (warned, by item)."""
    stored = human["prompt_sha256"].to_numpy(dtype=object)[matched["label"].to_numpy(dtype=np.int64)]
    prompts = column_texts(df, "prompt")[matched["row"].to_numpy(dtype=np.int64)]
    stale = np.array(
        [sha is not None and sha != prompt_fingerprint(prompt) for sha, prompt in zip(stored, prompts)],
        dtype=bool,
    )
    if stale.any():
        where = [
            f"item {item}" + ("" if turn < 0 else f" turn {turn}")
            for item, turn in zip(matched["item"][stale], matched["turn"][stale])
        ]
        shown = ", ".join(where[:10]) + (f" and {len(where) - 10} more" if len(where) > 10 else "")
        warnings.warn(
            f"{name}: {len(where)} human label(s) not paired because the row's prompt is not the one labelled "
            f"(the document's items were reordered or edited since): {shown}; label these rows again",
            EvalkitWarning,
            stacklevel=4,
        )
    return matched[~stale]


def calibrate(
    df: pd.DataFrame | Mapping[str, pd.DataFrame],
    judge: str | Sequence[str],
    labels: Labels | str | os.PathLike | pd.DataFrame,
    *,
    evaluator: str | None = None,
    on: str | None = None,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Calibration:
    """Agreement of LLM judge(s) with human labels; every definition is in the module docstring.

    ``df``: a scored case table, or ``{run label: table}`` to compare judge versions scored in separate runs
    (rows of :attr:`Calibration.table` are then named ``"run: judge"``). ``judge``: an evaluator name or key, or
    a list of them (one table row each, all on the same labels). ``labels``: a :class:`~evalkit.analysis.labels.Labels`,
    a labels file, or a DataFrame with ``item``, ``turn`` and ``score`` and / or ``verdict``. ``evaluator``: use
    the labels of this evaluator name for every judge. ``on``: ``"score"`` or ``"verdict"`` (default: scores
    when both sides have them). ``seed``, ``resamples``, ``confidence``: the bootstrap.
    """
    if on not in (None, "score", "verdict"):
        raise ValueError(f"on must be 'score', 'verdict' or None, not {on!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    runs: list[tuple[str | None, pd.DataFrame]]
    if isinstance(df, pd.DataFrame):
        runs = [(None, df)]
    elif isinstance(df, Mapping) and df and all(isinstance(v, pd.DataFrame) for v in df.values()):
        runs = [(str(label), table) for label, table in df.items()]
    else:
        raise TypeError("df must be a scored case table or a non-empty mapping {run label: scored table}")
    judges = [judge] if isinstance(judge, str) else list(dict.fromkeys(judge))
    if not judges:
        raise EvalkitError("give at least one judge (an evaluator name or key)")
    frame = labels_frame(labels)
    if frame.empty:
        raise EvalkitError("there are no human labels yet: label some rows first (Labels.set, then save)")

    rows: dict[str, dict[str, Any]] = {}
    pieces = []
    for run, table in runs:
        what = "the scored table" if run is None else f"run {run!r}"
        for wanted in judges:
            ev = find_judge(table, wanted, what)
            base = str(ev.get("name", ev["key"]))
            name = base if run is None else f"{run}: {base}"
            if name in rows:
                continue
            human = _labels_for(frame, ev, evaluator)
            mode = _choose_on(table, ev, human, on, name)
            pairs = _pairs(table, ev, human, mode, name)
            scale = mode == "score"
            judge_values = _numeric(pairs["judge_value"], mode)
            human_values = _numeric(pairs["human_value"], mode)
            point = agreement_metrics(judge_values, human_values, scale=scale)
            interval = bootstrap_metrics(
                judge_values, human_values, scale=scale, resamples=resamples, seed=seed, confidence=confidence
            )
            row: dict[str, Any] = {
                "key": ev["key"],
                "on": mode,
                "kappa_kind": "quadratic" if scale else "unweighted",
                "labels": int(human["score" if scale else "verdict"].notna().sum()),
                "n": len(pairs),
            }
            for metric in METRICS:
                row[metric] = point[metric]
                row[f"{metric}_low"], row[f"{metric}_high"] = interval[metric]
            rows[name] = row
            pieces.append(pairs)

    columns = ["key", "on", "kappa_kind", "labels", "n"]
    for metric in METRICS:
        columns += [metric, f"{metric}_low", f"{metric}_high"]
    out = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    out = out.astype({"labels": "int64", "n": "int64"})
    out.index.name = "judge"
    pairs = pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame(columns=list(PAIR_COLUMNS))
    gap = pairs["difference"].abs().to_numpy(dtype=float)
    order = np.argsort(-gap[gap > 0], kind="stable")
    disagreements = pairs[gap > 0].iloc[order].reset_index(drop=True)
    return Calibration(
        table=out,
        pairs=pairs,
        disagreements=disagreements,
        seed=seed,
        resamples=resamples,
        confidence=confidence,
    )


def _numeric(values: pd.Series, on: str) -> np.ndarray:
    """Shown pair values as numbers: scores as they are, verdicts pass = 1, fail = 0."""
    if on == "score":
        return values.to_numpy(dtype=float)
    return np.where(values.to_numpy(dtype=object) == "pass", 1.0, 0.0)
