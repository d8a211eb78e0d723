"""``evalkit run --samples K --pass-rule all|majority``: judge each row K times and decide by a rule.

Every LLM judge judges every row K times (each judgment its own judge-cache entry); an item passes by
``--pass-rule`` (``all``, the default: every judgment passed; ``majority``: more than half), which is what
``--fail-under`` counts. The summary says how many items flipped (``Flaky: ...``); each results.json entry
carries ``samples``, ``passShare``, ``flipped`` and ``scores`` (``evalkit.evaluators.llm_judges.samples``).
"""

from __future__ import annotations

import argparse

from evalkit.evaluators.llm_judges.samples import DEFAULT_PASS_RULE, MAX_SAMPLES, PASS_RULES, SAMPLES_RANGE


def add_sample_options(parser) -> None:
    parser.add_argument(
        "--samples",
        metavar="K",
        type=sample_count,
        default=1,
        help="judge every row K times with every LLM judge and combine them by --pass-rule (default 1)",
    )
    parser.add_argument(
        "--pass-rule",
        choices=PASS_RULES,
        default=DEFAULT_PASS_RULE,
        help="with --samples: an item passes when all its judgments pass (default) or a majority of them do",
    )


def sample_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_SAMPLES:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a number of samples: write {SAMPLES_RANGE}, e.g. 5"
        )
    return value


def flaky_line(scored) -> str | None:
    """``Flaky: 2 of 12 rows flipped between pass and fail over 5 samples (pass rule: all): Relevance 2,
    tone 1`` (rows flipped per LLM judge), with --samples."""
    from evalkit.analysis.formatting import count

    samples = (scored.attrs.get("evalkit") or {}).get("samples")
    if not samples:
        return None
    line = (
        f"Flaky: {samples['flaky_rows']} of {count(len(scored), 'row')} flipped between pass and fail over "
        f"{samples['k']} samples (pass rule: {samples['pass_rule']})"
    )
    per_judge = _flipped_per_judge(scored)
    return f"{line}: {', '.join(f'{name} {n}' for name, n in per_judge)}" if samples["flaky_rows"] else line


def _flipped_per_judge(scored) -> list[tuple[str, int]]:
    """``(evaluator name, rows whose judgments flipped)`` for each LLM judge of the run."""
    from evalkit.evaluators.llm_judges.samples import flaky_rows

    specs = (scored.attrs.get("evalkit") or {}).get("scored") or []
    return [(s["name"], flaky_rows(scored, [s["key"]])) for s in specs if s.get("is_llm")]
