"""Noise where the verdict is made: one LLM judge's K judgments of each row combined into one result.

``evaluate(samples=K)`` / ``evalkit run --samples K`` judge every row of every LLM evaluator K times (samples
0..K-1, each its own judge-cache entry, so a re-run is free and K+1 adds one judgment); ``combine`` turns the
K result frames into the row's result:

- the verdict by ``pass_rule``: ``all`` (the default: the row passes only when every judgment that gave a
  verdict passed, so a flaky row never passes a gate) or ``majority`` (more than half passed; a tie fails);
- the score: the median of the judgments' scores (the lower middle one: a score a judgment gave), the reason of
  the judgment that gave it;
- ``details`` (written into the results.json entry): ``samples`` (K), ``passShare`` (passed / judgments with a
  verdict), ``flipped`` (some passed and some failed), ``scores`` (in sample order), ``verdicts`` (each
  judgment's ``pass`` / ``fail``, beside its score), ``reasons`` (each judgment's reason, cut at
  ``REASON_LIMIT`` characters: the report's item view lists every judgment, so a reader sees why they
  differ), ``passRule``, and ``sampleErrors`` when some judgments failed; a row whose every judgment failed is
  the first one's error.

A run whose evaluators are all code (no LLM judge) has nothing to sample: it warns and records no samples.

May import: ``evalkit.evaluators.base``, ``evalkit.documents.versions``, ``evalkit.errors``.
"""

from __future__ import annotations

import statistics
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalkit.documents.versions import EvalkitWarning
from evalkit.errors import EvalkitError
from evalkit.evaluators.base import RESULT_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

PASS_RULES = ("all", "majority")
#: Each judgment's reason is kept up to this many characters in ``details["reasons"]`` (the row's own reason,
#: the median judgment's, is kept whole in its reason column).
REASON_LIMIT = 500
DEFAULT_PASS_RULE = "all"
#: The most judgments per row: each is one judge call per row and evaluator, and a pass share from 100
#: judgments is already within +/-10 points (95%); more buys cost, not a better verdict (a typo such as
#: 100000000000 would otherwise plan a trillion judge calls).
MAX_SAMPLES = 100
SAMPLES_RANGE = f"a whole number from 1 to {MAX_SAMPLES} (each sample is one judge call per row and judge)"


def check_samples(samples: Any, pass_rule: Any) -> int:
    """``samples`` as an int from 1 to ``MAX_SAMPLES``; an ``EvalkitError`` naming the fix otherwise (and for an
    unknown rule)."""
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise EvalkitError(f"samples={samples!r}: give the number of judgments per row, {SAMPLES_RANGE}")
    if pass_rule not in PASS_RULES:
        raise EvalkitError(f"pass_rule={pass_rule!r}: give one of {', '.join(PASS_RULES)}")
    return samples


def combine(frames: list[pd.DataFrame], pass_rule: str = DEFAULT_PASS_RULE) -> pd.DataFrame:
    """One result frame (``RESULT_COLUMNS``, the first frame's index) from the K frames of one evaluator."""
    import pandas as pd

    first = frames[0]
    columns = {c: [f[c].tolist() if c in f else [None] * len(f) for f in frames] for c in RESULT_COLUMNS}
    out: dict[str, list] = {c: [] for c in RESULT_COLUMNS}
    for row in range(len(first)):
        picked = {c: columns[c][0][row] for c in RESULT_COLUMNS}
        results = [sample[row] for sample in columns["result"]]
        judged = [s for s, r in enumerate(results) if r in ("pass", "fail")]
        if judged:
            picked = _combined_row(columns, row, judged, results, pass_rule, len(frames))
        for c in RESULT_COLUMNS:
            out[c].append(picked[c])
    return pd.DataFrame(out, index=first.index)


def _combined_row(columns: dict, row: int, judged: list[int], results: list, rule: str, k: int) -> dict:
    scores = [columns["score"][s][row] for s in judged]
    median = statistics.median_low(scores)
    chosen = judged[scores.index(median)]
    passed = sum(results[s] == "pass" for s in judged)
    verdict = passed == len(judged) if rule == "all" else passed * 2 > len(judged)
    details: dict[str, Any] = dict(columns["details"][chosen][row] or {})
    details.update(
        {
            "samples": k,
            "passShare": round(passed / len(judged), 6),
            "flipped": 0 < passed < len(judged),
            "scores": [_plain(s) for s in scores],
            "verdicts": [results[s] for s in judged],
            "reasons": [_cut(columns["reason"][s][row]) for s in judged],
            "passRule": rule,
        }
    )
    if len(judged) < k:
        details["sampleErrors"] = k - len(judged)
    return {
        "score": median,
        "result": "pass" if verdict else "fail",
        "threshold": columns["threshold"][chosen][row],
        "reason": columns["reason"][chosen][row],
        "error": None,
        "code": None,
        "details": details,
    }


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _cut(reason: Any) -> str:
    text = reason if isinstance(reason, str) else ""
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "\u2026"


def judged_k_times(
    evaluator, k: int, rule: str, score: Callable[[], list[pd.DataFrame]]
) -> list[pd.DataFrame]:
    """An LLM judge's ``k`` judgments of each row, combined: ``score()`` (the engine scoring the evaluator's rows)
    runs with samples base*k .. base*k+k-1, so sample 0 is a plain run's judgment and shares its cache entry."""
    import pandas as pd

    base = evaluator.sample
    frames = []
    try:
        for number in range(k):
            evaluator.sample = base * k + number
            parts = score()
            frames.append(pd.concat(parts) if parts else None)
    finally:
        evaluator.sample = base
    if frames[0] is None:
        return []
    return [combine([f.loc[frames[0].index] for f in frames], rule)]


def nothing_sampled(samples: int) -> None:
    """Warn that ``samples`` judged nothing more than once: the run has no LLM judge (code evaluators give the
    same verdict every time, so the run records no samples and prints no ``Flaky:`` line)."""
    warnings.warn(
        f"{samples} samples asked for, but no LLM judge is in this run: every row was scored once (code "
        "evaluators give the same verdict every time)",
        EvalkitWarning,
        stacklevel=3,
    )


def flaky_rows(table: pd.DataFrame, keys: list[str]) -> int:
    """How many rows flipped in at least one of the evaluators ``keys`` (their ``<key>_details``)."""
    import pandas as pd

    flipped = pd.Series(False, index=table.index)
    for key in keys:
        column = table.get(f"{key}_details")
        if column is not None:
            flipped |= column.map(lambda d: bool(isinstance(d, dict) and d.get("flipped")))
    return int(flipped.sum())
