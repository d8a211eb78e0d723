"""Judge-versus-human figures: the agreement of two label sequences (exact, within one, Cohen's kappa) and
its heatmap, and the heatmap of a calibration (re-exported by :mod:`evalkit.reporting.charts`).

May import ``evalkit.reporting.chart_style``, ``evalkit.analysis.formatting``, ``evalkit.errors``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalkit.analysis.formatting import count, percent
from evalkit.errors import EvalkitError
from evalkit.reporting.chart_style import _go, _layout, plain

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

    from evalkit.analysis.calibration import Calibration


def _labels(values: Sequence[Any]) -> tuple[list[Any], str]:
    """Normalise labels to ``pass``/``fail`` strings or 1-5 integers (None where missing); which kind."""
    out: list[Any] = []
    kinds = set()
    for v in values:
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
        elif isinstance(v, (bool, np.bool_)):
            out.append("pass" if v else "fail")
            kinds.add("binary")
        elif isinstance(v, str) and v.strip().lower() in ("pass", "fail"):
            out.append(v.strip().lower())
            kinds.add("binary")
        else:
            try:
                number = float(v)
            except (TypeError, ValueError):
                raise ValueError(f"{v!r} is neither pass/fail nor a score from 1 to 5") from None
            if number != round(number) or not 1 <= number <= 5:
                raise ValueError(f"{v!r} is not a whole score from 1 to 5")
            out.append(int(number))
            kinds.add("scale")
    if len(kinds) > 1:
        raise ValueError("mix of pass/fail labels and 1-5 scores: give one kind of label")
    return out, (kinds.pop() if kinds else "scale")


def agreement(judge_scores: Sequence[Any], human_scores: Sequence[Any]) -> dict[str, Any]:
    """Confusion matrix and agreement of a judge with human labels (pairs with a missing side are dropped).

    Returns ``labels``, ``matrix`` (rows: human, columns: judge), ``n``, ``exact`` (share of identical labels),
    ``within_one`` (1-5 only: share at most one point apart) and ``kappa``: Cohen's kappa, quadratic-weighted for
    1-5 scores (near misses count partly), unweighted for pass/fail; NaN when undefined (a single label used).
    """
    judge, kind_j = _labels(list(judge_scores))
    human, kind_h = _labels(list(human_scores))
    if len(judge) != len(human):
        raise ValueError(f"{len(judge)} judge scores but {len(human)} human scores: give one of each per row")
    kind = kind_j if any(v is not None for v in judge) else kind_h
    if any(v is not None for v in judge) and any(v is not None for v in human) and kind_j != kind_h:
        raise ValueError("the judge gives pass/fail and the humans 1-5 scores (or the reverse)")
    labels: list[Any] = ["pass", "fail"] if kind == "binary" else [1, 2, 3, 4, 5]
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for j, h in zip(judge, human):
        if j is not None and h is not None:
            matrix[index[h], index[j]] += 1
    n = int(matrix.sum())
    exact = float(np.trace(matrix) / n) if n else math.nan
    within = math.nan
    k = len(labels)
    grid = np.subtract.outer(np.arange(k), np.arange(k))
    if kind == "scale":
        within = float(matrix[np.abs(grid) <= 1].sum() / n) if n else math.nan
        weights = grid.astype(float) ** 2 / (k - 1) ** 2
    else:
        weights = (grid != 0).astype(float)
    kappa = math.nan
    if n:
        expected = np.outer(matrix.sum(axis=1), matrix.sum(axis=0)) / n
        denominator = float((weights * expected).sum())
        if denominator > 0:
            kappa = 1.0 - float((weights * matrix).sum()) / denominator
    return {"labels": labels, "matrix": matrix, "n": n, "exact": exact, "within_one": within, "kappa": kappa}


def agreement_heatmap(judge_scores: Sequence[Any], human_scores: Sequence[Any]) -> go.Figure:
    """Confusion matrix of judge scores (columns) against human labels (rows): 1-5 scores or pass/fail.

    Labels may be 1-5 numbers, ``"pass"`` / ``"fail"`` or booleans (True = pass); pairs with a missing side are
    dropped. The title gives the exact agreement, for 1-5 the share within one point, and Cohen's kappa
    (see :func:`agreement`).
    """
    go = _go()
    stats = agreement(judge_scores, human_scores)
    names = [str(label) for label in stats["labels"]]
    matrix = stats["matrix"]
    figure = go.Figure(
        go.Heatmap(
            z=matrix.tolist(),
            x=names,
            y=names,
            colorscale="Blues",
            texttemplate="%{z}",
            hovertemplate="human %{y}, judge %{x}: %{z} rows<extra></extra>",
            showscale=False,
        )
    )

    def share(value: float) -> str:
        return percent(value)

    parts = [f"{share(stats['exact'])} exact agreement"]
    if not math.isnan(stats["within_one"]):
        parts.append(f"{share(stats['within_one'])} within one point")
    parts.append("kappa n/a" if math.isnan(stats["kappa"]) else f"kappa {stats['kappa']:.2f}")
    _layout(
        figure,
        f"Judge vs human ({count(stats['n'], 'row')}): " + ", ".join(parts),
        xaxis={"title": {"text": "judge"}, "type": "category", "side": "bottom"},
        yaxis={"title": {"text": "human"}, "type": "category", "autorange": "reversed"},
    )
    return figure


def calibration_heatmap(calibration: Calibration, judge: str | None = None) -> go.Figure:
    """Confusion matrix of a calibrated judge (columns) against the humans (rows), via :func:`agreement_heatmap`.

    ``judge`` picks a row of ``calibration.table`` (its name or key; default: the first). Needs judge scores on
    the 1-5 scale (or verdicts): another scale has no square matrix, and raises
    :class:`~evalkit.errors.EvalkitError`.
    """
    name = calibration.judge_name(judge)
    rows = calibration.pairs[calibration.pairs["judge"] == name]
    try:
        figure = agreement_heatmap(rows["judge_value"].tolist(), rows["human_value"].tolist())
    except ValueError as exc:
        raise EvalkitError(f"cannot draw the agreement heatmap of {name!r}: {exc}") from None
    figure.update_layout(title={"text": f"{plain(name)}: {figure.layout.title.text}"})
    return figure
