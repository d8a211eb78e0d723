"""Names of the case table's columns: the inputs, and where each evaluator's scores go.

Lives with the documents because the results writer and the run reader need the same naming rule as the
engine and the evaluators.
"""

from __future__ import annotations

#: Case-table columns that are inputs of the evaluators; an evaluator whose output key is one of them
#: (the Citations evaluator's ``citations``) keeps its score in ``<key>_score`` instead.
INPUT_COLUMNS = frozenset(
    ("item", "turn", "thread", "prompt", "expected_response", "context", "response", "citations",
     "retrieval_executions", "tool_calls", "spans", "evaluators", "extensions", "source", "thread_source")
)  # fmt: skip


def score_column(key: str) -> str:
    """The case-table column holding the scores of the evaluator with output key ``key``."""
    return f"{key}_score" if key in INPUT_COLUMNS else key
