"""The deterministic built-ins: evaluators that need no model, each over whole columns at once.

String evaluators: ``matching`` (ExactMatch, PartialMatch, with the numpy tokeniser in ``tokens``) and
``citations`` (Citations), over ``options`` (rows grouped by their options, each option read and checked) and
``columnwise`` (column reading and result assembly). ``retrieval`` (RetrievalQuery, RetrievalResult: what the
agent's retrieval did). ``toolcalls`` (ToolCallSelection, ToolCallExecution: which tools the agent called,
and how, read from ``diagnostics.tool_calls`` or the row's spans through ``evalkit.spans.reading.tool_calls``)
and ``tool_allowlist`` (the first captured call outside ``allowed_tools``, which the engine flags).

May import ``evalkit.evaluators.base``, ``evalkit.spans.reading`` (tool calls read from spans),
``evalkit.documents`` and ``evalkit.errors``; not the LLM judges, custom evaluators or the registry (above).
"""
