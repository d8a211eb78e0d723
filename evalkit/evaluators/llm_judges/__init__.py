"""The built-in LLM judges and what every LLM judge's rows go through: one model call per row, K of them.

``builtin`` holds ``LLMJudge`` (the base every LLM evaluator shares: inputs, the judge cache key, the call
through the run's judge pool, the answer read) and the built-ins over ``evalkit.judges`` (Relevance,
Coherence, Groundedness, Similarity, ToolCallAccuracy: azure-ai-evaluation's prompts, through promptflow).
``samples`` combines one judge's K judgments of each row (``--samples K``, ``--pass-rule``) into one result.
Custom ``.prompty`` judges build on ``LLMJudge`` in ``evalkit.evaluators.custom``; juries in
``evalkit.evaluators.jury``.

May import ``evalkit.evaluators.base``, ``evalkit.judges``, ``evalkit.documents`` and ``evalkit.errors``; not
the deterministic built-ins, custom evaluators or the registry.
"""
