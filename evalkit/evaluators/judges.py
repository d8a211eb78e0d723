"""LLM-judged built-ins (Relevance, Coherence, Groundedness, Similarity, ToolCallAccuracy).

The run checks before any work that a judge model is configured (exit code 3 otherwise). Scoring through
azure-ai-evaluation is the subject of the LLM-judges issue; until it lands, a configured run reports each
judged row as an error result that says so, and the deterministic evaluators of the run are unaffected.
"""

from __future__ import annotations

from .base import error_frame
from .registry import LLM_BUILTINS


class PendingJudge:
    """A built-in LLM judge whose scoring is not available in this version."""

    has_threshold = True
    requires: tuple[str, ...] = ()
    is_llm = True
    score_field = "score"

    def __init__(self, name: str):
        self.name = name
        self.key = LLM_BUILTINS[name]

    def score(self, rows, configs):
        return error_frame(
            rows.index,
            f"the built-in LLM judge {self.name} is not available in this version of evalkit; "
            "use deterministic or custom evaluators",
            code="evaluatorConfigurationError",
        )


def builtin_judge(name: str) -> PendingJudge:
    return PendingJudge(name)
