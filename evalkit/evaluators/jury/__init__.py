"""Juries: one LLM judge's rows judged by several jurors (models or prompts), their scores combined.

An evaluator-map entry (a document's, ``evaluate(evaluators=...)``'s or ``evalkit run --evaluator``'s) may carry
a ``jury``::

    "Relevance": {"threshold": 3,
                  "jury": {"jurors": ["judge-a", {"model": "judge-b"}, {"evaluator": "strict_relevance"}],
                           "combine": "median"}}

- ``spec``: reading the declaration (jurors, ``combine``), with errors that name the item and the fix;
- ``alpha``: Krippendorff's alpha (interval and nominal), evalkit's own implementation;
- ``combine``: the jurors' result frames as one result per row (``mean``, ``median``, ``majority``), the spread
  and the per-row ``details["jury"]``;
- ``run``: the jurors made (a copy of the judge on another model, or another LLM evaluator), run over the rows
  through the run's judge pool (each juror's judgment its own cache entry, its requests and tokens metered),
  and the run's ``juries`` metadata (agreement, per-juror calls, tokens and cost).

May import: ``evalkit.evaluators`` (its registry included: a juror may be another evaluator), ``evalkit.judges``,
``evalkit.documents``, ``evalkit.errors``.
"""
