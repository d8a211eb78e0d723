"""The CLI summary's ``Jury`` lines: per jury, its jurors, how they were combined, their agreement and spread.

    Jury Relevance: 3 jurors (median), alpha 0.29 on scores, 8 of 11 rows split, mean spread 2.18;
      jurors: judge (11 calls, $0.0177), judge~+1 (11 calls, price not set), ...

May import: ``evalkit.judges``, ``evalkit.analysis.formatting``.
"""

from __future__ import annotations


def jury_lines(table) -> list[str]:
    """One line per jury of the run (``attrs["evalkit"]["judge"]["juries"]``, see ``evaluators.jury``)."""
    from evalkit.analysis.formatting import count
    from evalkit.judges.prices import cost_text

    judge = (table.attrs.get("evalkit") or {}).get("judge") or {}
    lines = []
    for name, juries in (judge.get("juries") or {}).items():
        for jury in juries:
            alpha = jury.get("alpha")
            agreement = "alpha undefined" if alpha is None else f"alpha {alpha:.2f} on scores"
            jurors = ", ".join(
                f"{j['label']} ({count(j['calls'], 'call')}, {cost_text(j.get('cost'))})"
                for j in jury["jurors"]
            )
            lines.append(
                f"Jury {name}: {count(len(jury['jurors']), 'juror')} ({jury['combine']}), {agreement}, "
                f"{jury.get('split_rows', 0):,} of {count(jury['rows'], 'row')} split, mean spread "
                f"{jury.get('mean_spread') or 0:.2f};\n  jurors: {jurors}"
            )
    return lines
