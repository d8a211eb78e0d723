"""The jurors' result frames of one LLM judge combined into one result per row, with the row's spread.

Per row, the jurors that gave a verdict (``pass`` / ``fail``) are combined by the jury's rule:

- ``median`` (the default): the score is the median of their scores, the lower middle one for an even count (a
  score a juror gave, so its reason goes with it, as ``evaluators.samples`` picks a sample's); pass when it
  reaches the threshold;
- ``mean``: the mean score (the reason of the juror closest to it); pass when the mean reaches the threshold;
- ``majority``: the verdict most jurors gave (a tie fails) and the score most jurors gave (a tie: the lower
  one). With a 1-5 threshold judge, median and majority give the same verdict; they differ in the score.

``details["jury"]`` (written into the results.json entry): ``combine``, ``jurors`` (labels), ``scores`` and
``results`` (per juror, ``None`` / ``"error"`` for a juror that failed), ``spread`` (highest minus lowest score)
and ``errors`` (jurors that failed on the row). The reason says the same in words, then gives the reason of the
juror whose score it is: ``Jury (median): judge 5, judge~-2 3; spread 2. [judge] ...``. A row no juror could
judge is the first juror's error.

May import: ``evalkit.evaluators.base``, ``evalkit.evaluators.llm_judges.samples``.
"""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

import pandas as pd

from evalkit.evaluators.base import RESULT_COLUMNS
from evalkit.evaluators.llm_judges.samples import _plain


def combine_jurors(frames: list[pd.DataFrame], labels: list[str], rule: str) -> pd.DataFrame:
    """One result frame (``RESULT_COLUMNS``, the first frame's index) from the jurors' frames (same rows)."""
    first = frames[0]
    columns = {c: [f[c].tolist() for f in frames] for c in RESULT_COLUMNS}
    out: dict[str, list] = {c: [] for c in RESULT_COLUMNS}
    for row in range(len(first)):
        results = [juror[row] for juror in columns["result"]]
        judged = [j for j, r in enumerate(results) if r in ("pass", "fail")]
        if judged:
            picked = _combined(columns, row, judged, rule)
            jury = picked["details"]["jury"] = _jury_details(columns, row, judged, labels, rule)
            picked["reason"] = _reason(jury, labels[picked.pop("juror")], picked["reason"])
        else:
            picked = {c: columns[c][0][row] for c in RESULT_COLUMNS}
        for c in RESULT_COLUMNS:
            out[c].append(picked[c])
    return pd.DataFrame(out, index=first.index)


def _combined(columns: dict, row: int, judged: list[int], rule: str) -> dict:
    scores = [float(columns["score"][j][row]) for j in judged]
    threshold = columns["threshold"][judged[0]][row]
    if rule == "mean":
        score = round(statistics.fmean(scores), 6)
        chosen = judged[min(range(len(scores)), key=lambda i: abs(scores[i] - score))]
        verdict = score >= threshold
    elif rule == "majority":
        passed = sum(columns["result"][j][row] == "pass" for j in judged)
        verdict = passed * 2 > len(judged)
        counts = Counter(scores)
        score = min(counts, key=lambda s: (-counts[s], s))
        chosen = judged[scores.index(score)]
    else:
        score = statistics.median_low(scores)
        chosen = judged[scores.index(score)]
        verdict = score >= threshold
    return {
        "score": score,
        "result": "pass" if verdict else "fail",
        "threshold": threshold,
        "reason": columns["reason"][chosen][row],
        "error": None,
        "code": None,
        "details": dict(columns["details"][chosen][row] or {}),
        "juror": chosen,
    }


def _jury_details(columns: dict, row: int, judged: list[int], labels: list[str], rule: str) -> dict[str, Any]:
    scores = [_plain(columns["score"][j][row]) if j in judged else None for j in range(len(labels))]
    given = [s for s in scores if s is not None]
    return {
        "combine": rule,
        "jurors": list(labels),
        "scores": scores,
        "results": [columns["result"][j][row] for j in range(len(labels))],
        "spread": _plain(max(given) - min(given)),
        "errors": len(labels) - len(judged),
    }


def _reason(jury: dict, chosen: str, reason: Any) -> str:
    """``Jury (median): judge 5, judge~-2 3; spread 2. [judge] <that juror's reason>``: the report's item view
    and tooltips show a row's jury and spread through its reason."""
    votes = ", ".join(
        f"{label} {_number(score) if score is not None else 'error'}"
        for label, score in zip(jury["jurors"], jury["scores"])
    )
    return f"Jury ({jury['combine']}): {votes}; spread {_number(jury['spread'])}. [{chosen}] {reason or ''}".strip()


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def spread_column(details: pd.Series) -> pd.Series:
    """The per-row jury spread (highest minus lowest juror score) from a ``<key>_details`` column (NaN: none)."""
    return details.map(
        lambda d: (
            float(d["jury"]["spread"])
            if isinstance(d, dict) and isinstance(d.get("jury"), dict)
            else float("nan")
        )
    )
