"""The column-wise run: ``evaluate`` scores a case table, every evaluator over the rows that ask for it.

Modules, bottom up: ``rows`` (the rows as evaluators see them, one evaluator scored over a set of them),
``forked_parts`` (large tables: built-in deterministic evaluators over parts of the rows in forked children),
``run`` (``evaluate`` itself: resolve evaluators, get responses, score, statuses, the run's metadata).

May import: evalkit.documents, evalkit.judges, evalkit.evaluators, evalkit.agents (and its own modules).
"""

from evalkit.engine.run import evaluate, progress_bar, sample_judgments, split_extra

__all__ = ["evaluate", "progress_bar", "sample_judgments", "split_extra"]
