"""The regression gate: did some evaluator's pass rate drop by more than noise against the baseline?

Reads a :class:`~evalkit.analysis.comparison.Comparison` (A = the baseline, B = this run) and decides, per
evaluator, with the comparison's own paired test: McNemar's exact test on the judged pairs that changed
(pass → fail against fail → pass), at the comparison's level (``1 - confidence``, 0.05 by default).

Several evaluators are several tests: with five evaluators each tested at 0.05, a re-run that changes only
noise would fail the gate about one time in five. The gate therefore adjusts the p-values with Holm's
step-down method over the evaluators it can test, which keeps the chance of a false alarm on a noise-only
re-run at most the level, whatever the number of evaluators. An evaluator with fewer than
:data:`~evalkit.analysis.statistics.MIN_PAIRS` judged pairs cannot be tested and is listed as such (never a
regression). The ``"(status)"`` row is left out: it is the evaluators' verdicts combined, not another test.

:func:`verdicts` gives every evaluator's verdict; :func:`regressions` only the significant drops, each with
the line the command prints; :func:`nothing_tested` why a gate tested no evaluator at all (no evaluator in both
runs, or none with enough judged pairs, as when the baseline ran another document): such a gate is "not
tested", never a pass.

May import: ``evalkit.analysis`` (comparison, statistics, summaries), ``evalkit.errors``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evalkit.analysis.formatting import count
from evalkit.analysis.statistics import MIN_PAIRS
from evalkit.analysis.summaries import STATUS_ROW

__all__ = ["TEST_NAME", "Verdict", "gate_line", "nothing_tested", "regressions", "verdicts"]

TEST_NAME = "McNemar exact test"
DROP, RISE, SAME, UNTESTED = "significant drop", "significant rise", "no significant change", "too few pairs"


@dataclass(frozen=True)
class Verdict:
    """One evaluator's verdict: ``kind`` is one of "significant drop", "significant rise", "no significant
    change", "too few pairs"; ``p_adjusted`` the Holm-adjusted p-value (NaN when untested)."""

    evaluator: str
    kind: str
    rate_a: float
    rate_b: float
    delta: float
    low: float
    high: float
    p_value: float
    p_adjusted: float
    pass_to_fail: int
    fail_to_pass: int
    judged: int
    tests: int
    alpha: float

    @property
    def regression(self) -> bool:
        return self.kind == DROP

    def test_text(self) -> str:
        """``McNemar exact test p = 0.0003 (Holm-adjusted over 3 evaluators: 0.0009) < 0.05 (95% level)``."""
        if self.kind == UNTESTED:
            return f"not tested: {self.judged} judged pairs (at least {MIN_PAIRS} are needed)"
        relation = "<" if self.p_adjusted < self.alpha else ">="
        adjusted = (
            f" (Holm-adjusted over {count(self.tests, 'evaluator')}: {_p(self.p_adjusted)})"
            if self.tests > 1
            else ""
        )
        return (
            f"{TEST_NAME} p = {_p(self.p_value)}{adjusted} {relation} {self.alpha:g} "
            f"({1 - self.alpha:.0%} level)"
        )


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}".rstrip("0").rstrip(".") if value < 1 else "1"


def _holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [math.nan] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def verdicts(comparison: Any) -> list[Verdict]:
    """Every evaluator's verdict (see the module docstring), in the comparison's order."""
    table = comparison.evaluators
    alpha = 1.0 - comparison.confidence
    names = [n for n in table.index if n != STATUS_ROW]
    testable = [n for n in names if int(table.loc[n, "judged"]) >= MIN_PAIRS]
    adjusted = dict(zip(testable, _holm([float(table.loc[n, "p_value"]) for n in testable])))
    out = []
    for name in names:
        row = table.loc[name]
        p_adj = adjusted.get(name, math.nan)
        if name not in adjusted:
            kind = UNTESTED
        elif p_adj < alpha:
            kind = DROP if row["pass_rate_delta"] < 0 else RISE
        else:
            kind = SAME
        out.append(
            Verdict(
                evaluator=str(name),
                kind=kind,
                rate_a=float(row["pass_rate_a"]),
                rate_b=float(row["pass_rate_b"]),
                delta=float(row["pass_rate_delta"]),
                low=float(row["pass_rate_low"]),
                high=float(row["pass_rate_high"]),
                p_value=float(row["p_value"]),
                p_adjusted=p_adj,
                pass_to_fail=int(row["pass_to_fail"]),
                fail_to_pass=int(row["fail_to_pass"]),
                judged=int(row["judged"]),
                tests=len(testable),
                alpha=alpha,
            )
        )
    return out


def regressions(comparison: Any) -> list[Verdict]:
    """The evaluators whose pass rate dropped significantly (after Holm's adjustment)."""
    return [v for v in verdicts(comparison) if v.regression]


def nothing_tested(found: list[Verdict]) -> str | None:
    """Why the gate over the verdicts ``found`` tested no evaluator, or None when it tested at least one."""
    if any(v.kind != UNTESTED for v in found):
        return None
    if not found:
        return "no evaluator is in both runs"
    pairs = ", ".join(f"{v.evaluator} {v.judged}" for v in found)
    return f"no evaluator has the {MIN_PAIRS} judged pairs a test needs (judged pairs: {pairs})"


def gate_line(verdict: Verdict, baseline: str) -> str:
    """The line ``--fail-on-regression`` prints for a regression: evaluator, rates, test and level."""
    return (
        f"Regression: {verdict.evaluator} pass rate {verdict.rate_a:.1%} -> {verdict.rate_b:.1%} "
        f"({verdict.delta * 100:+.1f} points, {1 - verdict.alpha:.0%} interval "
        f"{verdict.low * 100:+.1f} to {verdict.high * 100:+.1f}) against {baseline}: {verdict.test_text()}; "
        f"{verdict.pass_to_fail} pass -> fail, {verdict.fail_to_pass} fail -> pass of {verdict.judged} judged pairs"
    )
