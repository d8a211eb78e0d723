"""The result of an alignment (``Alignment``): held-out agreement before and after, the verdict, the cost.

**Verdict.** The held-out rows are judged by the original judge and by the aligned one; for each of exact
agreement, kappa and Spearman the table gives both values with their bootstrap intervals
(:func:`evalkit.analysis.agreement.bootstrap_metrics`) and the paired difference after - before with its interval
(:func:`evalkit.analysis.agreement.paired_difference`: the same resampled rows for both judges). A metric is
``improved`` only when that interval lies above 0, ``worse`` when below, otherwise ``no clear change``. The
headline verdict is kappa's. When no variant beat the original on the optimisation set, nothing is written and
the verdict says so.

``table()`` is the plain text the CLI prints; ``_repr_html_`` the notebook view (every text escaped);
``to_dict()`` what ``alignment.json`` keeps beside the aligned judge.

May import: ``evalkit.analysis.formatting`` and the standard library.
"""

from __future__ import annotations

import difflib
import html
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SHOWN_METRICS", "Alignment", "verdict_of"]

#: The metrics the report shows, in order, with their labels.
SHOWN_METRICS = (("kappa", "kappa"), ("spearman", "Spearman"), ("exact", "exact agreement"))


def verdict_of(low: float, high: float) -> str:
    """``improved`` when the interval of the difference is above 0, ``worse`` below, else ``no clear change``."""
    if math.isnan(low) or math.isnan(high):
        return "not measurable"
    if low > 0:
        return "improved"
    if high < 0:
        return "worse"
    return "no clear change"


def _num(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


def _interval(low: float, high: float) -> str:
    return f"[{_num(low)}, {_num(high)}]"


@dataclass
class Alignment:
    """What ``evalkit.align`` did and measured (module docs).

    ``before`` / ``after``: ``{metric: (value, low, high)}`` on the held-out rows; ``difference``: ``{metric:
    (after - before, low, high)}``; ``variants``: one dict per prompt tried on the optimisation set (round,
    kind, description, kappa, exact, n); ``cost``: judge calls, optimiser calls and tokens; ``written``: the
    aligned judge's folder (None when nothing was written); ``original_prompt`` / ``aligned_prompt``: texts.
    """

    judge: str
    aligned_name: str | None
    on: str
    split: dict
    before: dict[str, tuple[float, float, float]]
    after: dict[str, tuple[float, float, float]]
    difference: dict[str, tuple[float, float, float]]
    variants: list[dict]
    cost: dict[str, Any]
    original_prompt: str
    aligned_prompt: str
    chosen: str
    stopped: str = ""
    written: Path | None = None
    confidence: float = 0.95
    held_out_n: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.aligned_prompt == self.original_prompt:
            return "no variant beat the original prompt on the optimisation set; nothing to claim"
        return verdict_of(*self.difference["kappa"][1:])

    def verdict_text(self) -> str:
        """The headline verdict (kappa's), with the other metrics whose verdict differs from it."""
        if self.aligned_prompt == self.original_prompt:
            return self.verdict
        others = [
            f"{label} {verdict_of(*self.difference[key][1:])}"
            for key, label in SHOWN_METRICS[1:]
            if verdict_of(*self.difference[key][1:]) != self.verdict
        ]
        head = f"kappa {self.verdict} (the interval of the paired difference {'excludes' if self.verdict in ('improved', 'worse') else 'includes'} 0)"
        return head + (f"; {', '.join(others)}" if others else "")

    @property
    def improved(self) -> bool:
        return self.verdict == "improved"

    def diff(self) -> str:
        """The unified diff from the original prompt to the aligned one."""
        return "".join(
            difflib.unified_diff(
                self.original_prompt.splitlines(keepends=True),
                self.aligned_prompt.splitlines(keepends=True),
                fromfile=f"{self.judge}.prompty",
                tofile=f"{self.aligned_name or self.judge}.prompty",
            )
        )

    def rows(self) -> list[list[str]]:
        """The before/after table: metric, before [interval], after [interval], difference [interval], verdict."""
        out = []
        for key, label in SHOWN_METRICS:
            b, a, d = self.before[key], self.after[key], self.difference[key]
            out.append(
                [
                    label,
                    f"{_num(b[0])} {_interval(b[1], b[2])}",
                    f"{_num(a[0])} {_interval(a[1], a[2])}",
                    f"{d[0]:+.2f} {_interval(d[1], d[2])}" if not math.isnan(d[0]) else "n/a",
                    verdict_of(d[1], d[2]) if self.aligned_prompt != self.original_prompt else "unchanged",
                ]
            )
        return out

    def table(self) -> str:
        """Plain text: the split, the variants tried, the held-out table, the verdict and the cost."""
        s = self.split
        head = ["metric", "before", "after", "after - before", "verdict"]
        body = self.rows()
        widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [
            f"Aligning {self.judge} on {s['labelled']} labelled rows ({self.on}s): {s['optimise_rows']} to optimise, "
            f"{s['held_out_rows']} held out (seed {s['seed']})",
        ]
        for v in self.variants:
            lines.append(
                f"  round {v['round']}: {v['kind']:<20} kappa {_num(v['kappa'])}  exact {_num(v['exact'])}"
                f"  ({v['description']})"
            )
        lines.append(f"Chosen: {self.chosen}" + (f" (stopped: {self.stopped})" if self.stopped else ""))
        lines.append(
            f"Held-out agreement ({self.held_out_n} rows, {self.confidence:.0%} bootstrap intervals):"
        )
        lines.append(fmt.format(*head).rstrip())
        lines += [fmt.format(*r).rstrip() for r in body]
        lines.append(f"Verdict: {self.verdict_text()}")
        lines += self.usage_lines()
        if self.written is not None:
            lines.append(f"Aligned judge: {self.written} (evaluator {self.aligned_name!r})")
        lines += [f"Note: {n}" for n in self.notes]
        return "\n".join(lines)

    def usage_lines(self) -> list[str]:
        """``Judge: ...`` and ``Optimiser: ...``: what each model spent, as every judging command prints it
        (:func:`evalkit.analysis.formatting.judge_usage`; alignment runs with the judge cache off)."""
        from evalkit.analysis.formatting import judge_usage

        c = self.cost
        spent = {
            "Judge": (
                c.get("judge_calls"),
                c.get("prompt_tokens"),
                c.get("completion_tokens"),
                c.get("judge_usd"),
            ),
            "Optimiser": (
                c.get("optimizer_calls"),
                c.get("optimizer_prompt_tokens"),
                c.get("optimizer_completion_tokens"),
                c.get("optimizer_usd"),
            ),
        }
        return [
            f"{who}: "
            + judge_usage(
                {
                    "calls": calls,
                    "cache_hits": 0,
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "cost": {"usd": usd},
                }
            )  # fmt: skip
            for who, (calls, prompt, completion, usd) in spent.items()
        ]

    def __repr__(self) -> str:
        return f"<Alignment {self.judge} -> {self.aligned_name or '(nothing written)'}: {self.verdict}>"

    def _repr_html_(self) -> str:
        e = html.escape
        head = "".join(f"<th>{e(h)}</th>" for h in ["metric", "before", "after", "after - before", "verdict"])
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in self.rows())
        tried = "".join(
            f"<li>round {v['round']}: {e(v['kind'])}, kappa {_num(v['kappa'])}, exact {_num(v['exact'])} "
            f"({e(v['description'])})</li>"
            for v in self.variants
        )
        written = f"<p>Aligned judge: <code>{e(str(self.written))}</code></p>" if self.written else ""
        return (
            f"<div class='evalkit-alignment'><h4>Alignment of {e(self.judge)}</h4>"
            f"<p>{e(self.table().splitlines()[0])}</p><ul>{tried}</ul>"
            f"<p>Held-out agreement ({self.held_out_n} rows):</p><table><tr>{head}</tr>{body}</table>"
            f"<p><b>Verdict:</b> {e(self.verdict_text())}</p>{written}"
            f"<details><summary>prompt diff</summary><pre>{e(self.diff())}</pre></details></div>"
        )

    def to_dict(self) -> dict[str, Any]:
        """What ``alignment.json`` records (numbers as floats or None)."""

        def clean(triple):
            return [None if isinstance(x, float) and math.isnan(x) else x for x in triple]

        return {
            "judge": self.judge,
            "aligned_name": self.aligned_name,
            "on": self.on,
            "split": self.split,
            "chosen": self.chosen,
            "stopped": self.stopped,
            "variants": [
                {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}
                for d in self.variants
            ],
            "held_out": {
                "n": self.held_out_n,
                "confidence": self.confidence,
                **{
                    k: {
                        "before": clean(self.before[k]),
                        "after": clean(self.after[k]),
                        "difference": clean(self.difference[k]),
                    }
                    for k, _ in SHOWN_METRICS
                },
            },
            "verdict": self.verdict,
            "cost": self.cost,
        }
