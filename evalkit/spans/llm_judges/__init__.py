"""LLM-as-judge span evaluators: AgentCore's built-ins (``Builtin.<Name>``) and custom ``<name>.json`` judges.

``builtin_judges`` holds the built-ins as data, ``judge_config`` checks a ``CreateEvaluator`` rating scale and
model configuration as the API defines them, ``llm_evaluator`` renders the prompt and reads the answer,
``custom_llm_judges`` loads ``<name>.json`` files, ``conversation`` turns a session's spans into turns and the
placeholder values, ``ground_truth`` reads the reference inputs (``evaluationReferenceInputs``) for the judges
that use them, ``trajectory_match`` holds the three programmatic ``Builtin.Trajectory*Match``, and
``judge_runner`` makes the calls (``SpanJudges``: model, pool, cache).

May import ``evalkit.spans.reading``, ``evalkit.spans.lambdas`` (levels, payload groups, result entries),
``evalkit.judges``, ``evalkit.documents`` and ``evalkit.errors``; not ``online``.
"""
