"""Custom evaluators: the user's own code from ``custom-evaluators/<name>/``, found, loaded and run safely.

``loading`` finds and loads an evaluator folder (``load_custom``: a code-only ``<name>.py``, an LLM judge with
``<name>.prompty``, a span evaluator) and runs ad-hoc Python callables (``CallableEvaluator``); ``contract``
reads the result contract (``{"score", "reason"}``) and says what broke it; ``prompty_checks`` warns about a
``.prompty``'s template mistakes at load time; ``span_docs`` runs an AgentCore-style span evaluator named in
a document on each row's captured spans; ``tool_inputs`` gives an LLM judge the row's ``tool_calls`` and
``tool_definitions``. Isolation: ``time_limit`` (the per-row limit, a watched thread where
forking is unsafe), ``worker_process`` (a forked worker per evaluator: a hang is killed, a crash costs one
row), ``import_limit`` (the module imported under the same limit).

May import ``evalkit.evaluators.base``, ``evalkit.evaluators.names``, ``evalkit.evaluators.llm_judges`` (a
``.prompty`` judge is an ``LLMJudge``), ``evalkit.spans``, ``evalkit.judges``, ``evalkit.documents`` and
``evalkit.errors``; not the registry or juries (above).
"""
