"""``evalkit.pairwise(run_a, run_b)``: which run answers the shared prompts better, by a pairwise judge.

**Pairing.** Rows are paired as :func:`evalkit.compare` pairs them (:func:`~evalkit.analysis.pairing.pair_rows`:
same (item, turn) and the same prompt); the rest is in :attr:`Pairwise.unpaired`. A paired row without a
response in one of the runs is not judged (outcome ``error``, with the reason).

**Both orders.** The judge sees each paired row twice: A's response shown first, then B's shown first. Each
verdict is mapped back to the runs. The row's outcome, from B's side (B is the candidate, as in ``compare``):
``win`` when both orders prefer B, ``loss`` when both prefer A, ``tie`` otherwise: both orders said tie, or the
orders disagree (the judge followed the position, not the content: counted as ``inconsistent`` within the
ties). A position bias that always favours the first response therefore yields ties, never a winner. A row
where either order failed (an error, an unreadable answer) is ``error`` and left out of the counts.

**The interval.** Ties say neither response is better, so the question is the split of the decided rows
(wins + losses): B's win share ``wins / (wins + losses)``, with its exact (Clopper-Pearson) interval, and the
two-sided sign test (the exact binomial test of that split against 1/2, the same test as ``compare``'s McNemar
test: :func:`~evalkit.analysis.statistics.mcnemar_p`). Exact rather than Wilson or Wald because pairwise
comparisons are usually tens of rows, where the normal approximation is off, and because the exact interval
excludes 1/2 exactly when the sign test's p is below 1 - confidence, so the interval and the test never
disagree. ``net`` = (wins - losses) / judged rows carries the ties: its interval is the same exact interval
scaled to the judged rows (:func:`~evalkit.analysis.statistics.mcnemar_interval`).

May import: ``evalkit.analysis`` (pairing, statistics), ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis.pairing import as_run, column_texts, pair_rows, run_label
from evalkit.analysis.pairwise.judge import Order, PairwiseJudge
from evalkit.analysis.statistics import DEFAULT_CONFIDENCE, binomial_interval, mcnemar_interval, mcnemar_p
from evalkit.errors import EnvironmentConfigError

__all__ = ["OUTCOMES", "ROW_COLUMNS", "Pairwise", "pairwise"]

OUTCOMES = ("win", "tie", "loss", "error")
ROW_COLUMNS = (
    "item", "turn", "prompt", "response_a", "response_b", "a_first", "b_first",
    "reason_a_first", "reason_b_first", "outcome", "consistent", "error",
)  # fmt: skip


@dataclass
class Pairwise:
    """The pairwise judgment of run B against run A (see the module docstring for every number)."""

    label_a: str
    label_b: str
    rows: pd.DataFrame
    unpaired: pd.DataFrame
    confidence: float
    judge: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        outcome = self.rows["outcome"]
        counts = {name: int((outcome == name).sum()) for name in OUTCOMES}
        counts["inconsistent"] = int(((outcome == "tie") & ~self.rows["consistent"].astype(bool)).sum())
        return counts

    @property
    def win_share(self) -> float:
        c = self.counts
        return c["win"] / (c["win"] + c["loss"]) if c["win"] + c["loss"] else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        """The exact interval of B's win share among decided rows (nan, nan without any)."""
        c = self.counts
        decided = c["win"] + c["loss"]
        return binomial_interval(c["win"], decided, self.confidence) if decided else (float("nan"),) * 2

    @property
    def p_value(self) -> float:
        """Two-sided sign test of wins against losses (1.0 without decided rows)."""
        c = self.counts
        return mcnemar_p(c["loss"], c["win"])

    @property
    def net(self) -> tuple[float, float, float]:
        """(wins - losses) / judged rows and its interval."""
        c = self.counts
        judged = c["win"] + c["tie"] + c["loss"]
        if not judged:
            return float("nan"), float("nan"), float("nan")
        low, high = mcnemar_interval(c["loss"], c["win"], judged, self.confidence)
        return (c["win"] - c["loss"]) / judged, low, high

    @property
    def verdict(self) -> str:
        """One line: who is better, or that the judge cannot tell them apart at this confidence."""
        c = self.counts
        if c["win"] + c["loss"] == 0:
            return "no row was decided: the judge cannot tell A and B apart"
        if self.p_value >= 1 - self.confidence:
            return f"no significant difference (sign test p = {self.p_value:.3g})"
        better = "B" if c["win"] > c["loss"] else "A"
        return f"{better} is better (sign test p = {self.p_value:.3g})"

    @property
    def deciding(self) -> pd.DataFrame:
        """The rows that decided it: the wins and the losses."""
        return self.rows[self.rows["outcome"].isin(["win", "loss"])]

    def summary(self) -> dict[str, Any]:
        """Plain JSON data: counts, win share, interval, p, net, the judge's calls and cost."""
        low, high = self.interval
        net, net_low, net_high = self.net
        return {
            "a": self.label_a,
            "b": self.label_b,
            **self.counts,
            "win_share": _finite(self.win_share),
            "interval": [_finite(low), _finite(high)],
            "confidence": self.confidence,
            "p_value": self.p_value,
            "net": [_finite(net), _finite(net_low), _finite(net_high)],
            "verdict": self.verdict,
            "judge": self.judge,
        }

    def table(self) -> str:
        from evalkit.analysis.pairwise.views import format_text

        return format_text(self)

    def __repr__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        from evalkit.analysis.pairwise.views import notebook_html

        return notebook_html(self)


def pairwise(
    run_a: Any,
    run_b: Any,
    judge: str | os.PathLike | None = None,
    *,
    model_config: dict | None = None,
    concurrency: int = 8,
    cache: Any = True,
    judge_timeout: float = 120.0,
    judge_attempts: int = 5,
    confidence: float = DEFAULT_CONFIDENCE,
    price: Any = None,
) -> Pairwise:
    """Judge run B against run A, row by row, in both orders (see the module docstring).

    Args:
        run_a, run_b: scored case tables, run folders or results.json files (A the baseline, B the candidate).
        judge: ``None`` (evalkit's pairwise prompt), a custom pairwise ``.prompty`` file, or a model name
            (evalkit's prompt on that model of the configured judge endpoint).
        model_config: the judge model (default: from the environment and .env files, as ``evaluate``).
        cache: the judge cache, as ``evaluate``'s (True: the user's cache; False: none).
        price: ``(input, output)`` USD per 1M tokens (default: the ``EVALKIT_PRICES`` entry of the model).
    """
    from evalkit.judges.models import MISSING_JUDGE_MESSAGE, describe, judge_config
    from evalkit.judges.pool import JudgePool
    from evalkit.judges.prices import judge_cost, price_for

    a, b = as_run(run_a, "A"), as_run(run_b, "B")
    config = dict(model_config or judge_config() or {})
    if not config:
        raise EnvironmentConfigError(MISSING_JUDGE_MESSAGE.format(what="Pairwise judging"))
    prompty = None
    if judge is not None and (str(judge).endswith(".prompty") or Path(judge).is_file()):
        prompty = judge
    elif judge is not None:
        config["azure_deployment" if "azure_endpoint" in config else "model"] = str(judge)
    judge_ = PairwiseJudge(config, prompty)
    price = price_for(judge_.model_name, price)
    pos_a, pos_b, unpaired = pair_rows(a, b)
    rows = _paired_rows(a, b, pos_a, pos_b)
    ready = rows.index[rows["error"].isna()].tolist()
    orders = []
    for i in ready:
        r = rows.loc[i]
        orders += [
            Order(r.prompt, r.response_a, r.response_b, r.reference),
            Order(r.prompt, r.response_b, r.response_a, r.reference),
        ]
    pool = JudgePool(concurrency, attempts=judge_attempts, timeout=judge_timeout, cache=_open_cache(cache))
    outcomes = pool.run(judge_.calls(orders, judge_timeout))
    for n, i in enumerate(ready):
        _settle(rows, i, outcomes[2 * n], outcomes[2 * n + 1])
    spent = pool.usage.of(judge_.identity)
    tokens = {"prompt_tokens": spent.prompt, "completion_tokens": spent.completion}
    info = {
        "prompt": "evalkit pairwise prompt" if prompty is None else Path(prompty).name,
        "identity": judge_.identity,
        "model": describe(config),
        "model_name": judge_.model_name,
        "calls": pool.usage.requests,
        "cache_hits": pool.cache_hits,
        **tokens,
        "cost": judge_cost({**tokens, "model_name": judge_.model_name}, price),
    }
    return Pairwise(
        run_label(run_a, a), run_label(run_b, b), rows.drop(columns="reference"), unpaired, confidence, info
    )


def _paired_rows(a: pd.DataFrame, b: pd.DataFrame, pos_a, pos_b) -> pd.DataFrame:
    item = a["item"].to_numpy()[pos_a] if "item" in a else pos_a
    turns = (
        pd.array(a["turn"], dtype="Int64")[pos_a]
        if "turn" in a
        else pd.array([None] * len(pos_a), dtype="Int64")
    )
    response_a = column_texts(a, "response")[pos_a]
    response_b = column_texts(b, "response")[pos_b]
    rows = pd.DataFrame(
        {
            "item": item,
            "turn": turns,
            "prompt": column_texts(a, "prompt", "")[pos_a],
            "response_a": response_a,
            "response_b": response_b,
            "reference": column_texts(a, "expected_response", "")[pos_a],
            "a_first": None, "b_first": None, "reason_a_first": None, "reason_b_first": None,
            "outcome": "error", "consistent": False, "error": None,
        }
    )  # fmt: skip
    for side, values in (("A", response_a), ("B", response_b)):
        empty = np.array([not isinstance(v, str) or not v.strip() for v in values], dtype=bool)
        rows.loc[empty & rows["error"].isna(), "error"] = f"run {side} has no response for this row"
    return rows


def _settle(rows: pd.DataFrame, i: int, first, second) -> None:
    """Row ``i``'s two verdicts (A shown first, B shown first) mapped to the runs, and its outcome."""
    failed = [o for o in (first, second) if o.error is not None]
    if failed:
        rows.at[i, "error"] = failed[0].error
        return
    a_first = first.value["winner"]
    b_first = {"A": "B", "B": "A"}.get(second.value["winner"], "tie")
    rows.at[i, "a_first"], rows.at[i, "b_first"] = a_first, b_first
    rows.at[i, "reason_a_first"] = first.value["reason"]
    rows.at[i, "reason_b_first"] = second.value["reason"]
    rows.at[i, "consistent"] = a_first == b_first
    rows.at[i, "outcome"] = {"B": "win", "A": "loss"}.get(a_first, "tie") if a_first == b_first else "tie"


def _open_cache(cache):
    if cache is True:
        from evalkit.judges.cache import JudgeCache

        return JudgeCache()
    return None if cache in (False, None) else cache


def _finite(value: float) -> float | None:
    return None if value != value else float(value)
