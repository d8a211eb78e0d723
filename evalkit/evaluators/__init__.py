"""Evaluators: the protocol and result contract, the built-ins, custom evaluators and the registry.

- ``base``: the one internal protocol ("score these rows, column-wise") and result frames;
  ``contract``: the seed's result contract of custom evaluators (``{"score", "reason"}``).
- Deterministic built-ins: ``text`` (ExactMatch, PartialMatch, Citations), ``retrieval``
  (RetrievalQuery, RetrievalResult), ``toolcalls`` (ToolCallSelection, ToolCallExecution).
- ``llm_judges``: Relevance, Coherence, Groundedness, Similarity, ToolCallAccuracy over ``evalkit.judges``.
- ``custom``: discovery and loading of ``custom-evaluators/<name>/`` (code-only, ``.prompty`` judges, span
  evaluators named in documents, via ``span_docs``); ``registry``: a name to an evaluator object.
- ``scaffold``: the templates of ``evalkit new``.

May import: ``evalkit.spans``, ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""
