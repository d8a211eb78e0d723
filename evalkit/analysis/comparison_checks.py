"""Before the numbers of a comparison: are the two runs comparable at all, and can any test say anything?

:func:`notices` returns what a page shows as a banner above the deltas:

* the runs come from **different documents** (both recorded the document's sha256 and they differ), or one of
  them did not record it, so it cannot be checked;
* the runs **share few rows** (fewer than :data:`MIN_SHARED` of the larger run's rows are paired): the
  comparison speaks for the shared rows only;
* the runs made their **verdicts differently**: LLM judges judged each row a different number of times or
  decided by a different pass rule (``--samples K``, ``--pass-rule``);
* **too few pairs for any test** (fewer than :data:`~evalkit.analysis.statistics.MIN_PAIRS` paired rows):
  nothing is coloured as significant.
"""

from __future__ import annotations

from typing import Any

from evalkit.analysis.formatting import count
from evalkit.analysis.pairing import ONLY_A, ONLY_B
from evalkit.analysis.statistics import MIN_PAIRS

__all__ = ["MIN_SHARED", "notice_lines", "notices"]

#: Below this share of the larger run's rows being paired, a comparison gets a "few shared rows" warning.
MIN_SHARED = 0.5
WARNING, INFO = "warning", "info"


def _doc(identity: dict) -> str:
    name = identity.get("document") or identity.get("source") or "unnamed document"
    sha = identity.get("document_sha256")
    return f"{name} (sha256 {sha[:12]}\u2026)" if sha else f"{name} (sha256 not recorded)"


def _judging(identity: dict) -> str:
    samples = identity.get("samples") or {}
    if not samples:
        return "judged each row once"
    flaky = samples.get("flaky_rows")
    flipped = f", {count(flaky, 'row')} flipped" if isinstance(flaky, int) else ""
    return f"judged each row {samples['k']} times, pass rule {samples.get('pass_rule')}{flipped}"


def _judging_differs(c: Any) -> str | None:
    """The text of the warning when A and B made their LLM judges' verdicts differently (``--samples K``,
    ``--pass-rule``), else None: their pass rates then differ by the rule as well as by the runs."""
    a, b = c.identity_a.get("samples") or {}, c.identity_b.get("samples") or {}
    if (a.get("k"), a.get("pass_rule")) == (b.get("k"), b.get("pass_rule")):
        return None
    return (
        f"{c.label_a} {_judging(c.identity_a)}; {c.label_b} {_judging(c.identity_b)}. An LLM judge's pass rate "
        "depends on how many judgments decide an item and by which rule, so part of any delta is the "
        "rule, not the change: compare runs made with the same --samples and --pass-rule."
    )


def notices(c: Any) -> list[tuple[str, str, str]]:
    """``(level, heading, text)`` for each problem of the :class:`~evalkit.analysis.comparison.Comparison` ``c``
    (see the module docstring); plain text, unescaped. (Typed ``Any``: comparison imports this module.)"""
    out: list[tuple[str, str, str]] = []
    sha_a = c.identity_a.get("document_sha256")
    sha_b = c.identity_b.get("document_sha256")
    if sha_a and sha_b and sha_a != sha_b:
        out.append(
            (
                WARNING,
                "Different documents.",
                f"{c.label_a} ran {_doc(c.identity_a)}, {c.label_b} ran {_doc(c.identity_b)}. Rows are paired by "
                "position and prompt, so only the rows whose prompts match are compared, and their expected "
                "answers or evaluators may differ: read the deltas with care.",
            )
        )
    elif not (sha_a and sha_b) and (c.identity_a or c.identity_b):
        out.append(
            (
                INFO,
                "Documents not checked.",
                f"{c.label_a if not sha_a else c.label_b} did not record its document's sha256, so whether both "
                "runs come from the same document cannot be checked.",
            )
        )
    reasons = c.unpaired["reason"].tolist() if "reason" in c.unpaired.columns else []
    rows_a = c.paired + sum(1 for r in reasons if r != ONLY_B)
    rows_b = c.paired + sum(1 for r in reasons if r != ONLY_A)
    larger = max(rows_a, rows_b)
    if larger and c.paired < MIN_SHARED * larger:
        out.append(
            (
                WARNING,
                "Few shared rows.",
                f"Only {c.paired:,} of {count(larger, 'row')} {'is' if c.paired == 1 else 'are'} paired "
                f"({c.paired / larger:.0%}); {c.label_a} has {count(rows_a, 'row')}, {c.label_b} {rows_b:,}. Every "
                "number below is about the paired rows only.",
            )
        )
    judging = _judging_differs(c)
    if judging:
        out.append((WARNING, "Verdicts made differently.", judging))
    if c.paired < MIN_PAIRS:
        out.append(
            (
                WARNING,
                "Too few pairs for a test.",
                f"{count(c.paired, 'paired row')} (at least {MIN_PAIRS} are needed): no change is marked "
                "significant.",
            )
        )
    return out


def notice_lines(found: list[tuple[str, str, str]]) -> list[str]:
    """The terminal lines of :func:`notices`: ``Warning: <heading> <text>``, or ``Note:`` for what could not be
    checked (``evalkit compare`` and the CI options of ``evalkit run`` print them on stderr)."""
    return [
        f"{'Warning' if level == WARNING else 'Note'}: {heading} {text}" for level, heading, text in found
    ]
