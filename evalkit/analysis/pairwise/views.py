"""How a :class:`~evalkit.analysis.pairwise.result.Pairwise` reads: the CLI text, the template context of
``templates/pairwise.html.j2`` (the comparison page's pairwise section and the notebook view), the notebook HTML.

Only formatting: every text from the runs (prompts, responses, the judge's reasons) goes to the template as a
plain value, cut, and the template's autoescaping escapes it.

May import: ``evalkit.analysis`` (templating, formatting, comparison_views' CSS).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from evalkit.analysis.formatting import item_label, judge_usage, percent
from evalkit.analysis.templating import cut, render

TEXT_LIMIT = 600
WHO = {"A": "A better", "B": "B better", "tie": "tie", None: ""}


def format_text(p: Any) -> str:
    """``Pairwise B vs A: 6 wins, 3 ties (2 orders disagreed), 1 loss, 0 not judged``, the interval line and the
    judge's usage (:func:`evalkit.analysis.formatting.judge_usage`)."""
    c = p.counts
    low, high = p.interval
    lines = [
        f"Pairwise {p.label_b} (B) vs {p.label_a} (A): B wins {c['win']}, ties {c['tie']} "
        f"({c['inconsistent']} where the two orders disagreed), loses {c['loss']}, not judged {c['error']}",
        f"B's win share of decided rows: {_share(p.win_share)}, {p.confidence:.0%} interval "
        f"[{_share(low)}, {_share(high)}] (exact, Clopper-Pearson); {p.verdict}",
        f"Judge: {p.judge.get('prompt')} on {p.judge.get('model_name')}: {judge_usage(p.judge)}",
    ]
    for outcome, what in (("win", "B won"), ("loss", "B lost")):
        rows = p.rows[p.rows["outcome"] == outcome]
        if len(rows):
            lines.append(f"{what}: " + ", ".join(item_label(r.item, r.turn) for r in rows.itertuples()))
    return "\n".join(lines)


def pairwise_context(p: Any, max_rows: int = 200) -> dict[str, Any]:
    """What ``pairwise.html.j2`` shows of ``p``: plain values (escaped by the template)."""
    c = p.counts
    low, high = p.interval
    method = (
        "The judge saw every paired row twice, A's response first and then B's first; a row is a win or a loss "
        "only when both orders agree, and a tie when both said tie or the orders disagreed (position bias "
        "cancelled). The judge calls the response it is shown first 'Response A': in the second call that is "
        "B's. Both verdicts are given for the runs ('B better' means run B) and the reasons as the judge wrote "
        "them, so in the second call's reason 'Response A' is B and 'Response B' is A. The win share is B's share of the decided rows (ties left out: they prefer neither); its "
        f"interval is the exact (Clopper-Pearson) {p.confidence:.0%} interval, which excludes 50 % exactly when "
        "the two-sided sign test's p is below "
        f"{1 - p.confidence:g}."
    )
    rows = p.rows
    tie_disagree = rows[(rows["outcome"] == "tie") & ~rows["consistent"].astype(bool)]
    groups = [
        _group(
            rows[rows["outcome"] == "win"], "wins", "B won", "No row where both orders preferred B.", max_rows
        ),
        _group(
            rows[rows["outcome"] == "loss"],
            "losses",
            "B lost",
            "No row where both orders preferred A.",
            max_rows,
        ),
        _group(
            tie_disagree,
            "disagreed",
            "Ties where the two orders disagreed",
            "The orders never disagreed.",
            max_rows,
        ),
        _group(
            rows[rows["outcome"] == "error"], "errors", "Not judged", "Every paired row was judged.", max_rows
        ),
    ]
    return {
        "label_a": p.label_a,
        "label_b": p.label_b,
        "named_above": False,  # True where the page above already names A and B (the comparison page)
        "prompt": p.judge.get("prompt", ""),
        "model": p.judge.get("model_name") or "",
        "calls": judge_usage(p.judge),
        "counts": c,
        "win_share": _share(p.win_share),
        "interval": f"[{_share(low)}, {_share(high)}]",
        "p": f"{p.p_value:.3g}",
        "level": f"{p.confidence:.0%}",
        "verdict": p.verdict,
        "method": method,
        "groups": groups,
    }


def notebook_html(p: Any, max_rows: int = 20) -> str:
    from evalkit.analysis.comparison_views import CSS

    body = render("pairwise.html.j2", pairwise=pairwise_context(p, max_rows))
    return str(Markup("<div class='evalkit-compare'><style>{}</style>{}</div>").format(Markup(CSS), body))


def _group(frame, ident: str, title: str, none: str, max_rows: int) -> dict[str, Any]:
    shown = [
        {
            "label": item_label(r.item, r.turn),
            "prompt": cut(r.prompt, TEXT_LIMIT),
            "response_a": cut(r.response_a, TEXT_LIMIT),
            "response_b": cut(r.response_b, TEXT_LIMIT),
            "a_first": WHO.get(r.a_first, "") if r.error is None else "error",
            "b_first": WHO.get(r.b_first, "") if r.error is None else "",
            "reason_a_first": cut(r.reason_a_first if r.error is None else r.error, TEXT_LIMIT),
            "reason_b_first": cut(r.reason_b_first, TEXT_LIMIT),
        }
        for r in frame.head(max_rows).itertuples(index=False)
    ]
    more = len(frame) - len(shown)
    return {"id": ident, "title": title, "none": none, "total": len(frame), "rows": shown, "more": more}


def _share(value: float) -> str:
    """A share as every rate reads (one decimal, :func:`evalkit.analysis.formatting.percent`); – when none."""
    return percent(value, missing="\u2013")
