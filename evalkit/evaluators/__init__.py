"""Evaluators: the protocol and result contract, the built-ins, custom evaluators and the registry.

Modules and subpackages, bottom up (each subpackage's ``__init__`` says what it holds and what it may import):

- ``base``: the one internal protocol ("score these rows, column-wise") and result frames; ``names``: the rules
  of evaluator names and where custom evaluators live by default.
- ``deterministic``: the built-ins that need no model: ``matching`` (ExactMatch, PartialMatch, ``tokens``),
  ``citations``, over ``options`` and ``columnwise``; ``retrieval`` (RetrievalQuery, RetrievalResult);
  ``toolcalls`` (ToolCallSelection, ToolCallExecution) and ``tool_allowlist`` (the allowlist check of an agent
  run).
- ``llm_judges``: ``builtin`` (``LLMJudge``; Relevance, Coherence, Groundedness, Similarity, ToolCallAccuracy
  over ``evalkit.judges``) and ``samples`` (one judge's K judgments of a row combined).
- ``custom``: ``custom-evaluators/<name>/`` discovered and loaded (``loading``: code-only, ``.prompty`` judges,
  span evaluators named in documents via ``span_docs``; ad-hoc callables), the result ``contract``,
  ``prompty_checks``, and the isolation of user code: ``time_limit``, ``worker_process``, ``import_limit``.
- ``registry``: a name to an evaluator object; it imports the evaluators, none of them imports it.
- ``scaffold``: the templates of ``evalkit new``.
- ``jury``: juries (several jurors, models or other LLM judges, combined; Krippendorff's alpha; per-row spread),
  above the registry (a juror may be another evaluator); the engine plans and runs them.

Layers inside, bottom up: ``base`` / ``names`` < ``deterministic`` / ``llm_judges`` < ``custom`` <
``registry`` / ``scaffold`` < ``jury`` (``tests/test_layout.py`` holds them).

May import: ``evalkit.spans``, ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""
