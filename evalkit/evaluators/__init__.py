"""Evaluators: the protocol and result contract, the built-ins, custom evaluators and the registry.

- ``base``: the one internal protocol ("score these rows, column-wise") and result frames;
  ``contract``: the seed's result contract of custom evaluators (``{"score", "reason"}``).
- Deterministic built-ins. String evaluators: ``matching`` (ExactMatch, PartialMatch, with the numpy
  tokeniser in ``tokens``) and ``citations`` (Citations), over ``options`` (rows grouped by their options)
  and ``columnwise`` (column reading and result assembly). ``retrieval`` (RetrievalQuery, RetrievalResult).
  ``toolcalls`` (ToolCallSelection, ToolCallExecution) over ``tool_spans`` (tool calls read from spans; the reading itself is
  ``evalkit.spans.reading.tool_calls``);
  ``tool_allowlist``: the allowlist check of an agent run.
- ``llm_judges``: Relevance, Coherence, Groundedness, Similarity, ToolCallAccuracy over ``evalkit.judges``.
- ``custom``: discovery and loading of ``custom-evaluators/<name>/`` (code-only, ``.prompty`` judges, span
  evaluators named in documents, via ``span_docs``); ``time_limit`` and ``worker_process``: the per-row time
  limit of code-only evaluators (a forked worker process, or a watched thread where forking is unsafe);
  ``import_limit``: a custom evaluator's module imported under that limit; ``prompty_checks``: the load-time
  warnings about a ``.prompty``'s template (undeclared inputs, the reserved ``prompt``).
- ``names``: the rules of evaluator names; ``registry``, the top of the package: a name to an evaluator
  object.
- ``scaffold``: the templates of ``evalkit new``.
- ``jury``: juries (several jurors, models or other LLM judges, combined; Krippendorff's alpha; per-row spread),
  above the registry (a juror may be another evaluator); the engine plans and runs them.

May import: ``evalkit.spans``, ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""
