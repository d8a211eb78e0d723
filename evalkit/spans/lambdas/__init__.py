"""Code-based span evaluators as AWS Lambda runs them: the handler, its payload, the call and its result.

``span_evaluator`` loads a handler and its level, ``payload`` builds the AgentCore event (``sessionSpans``,
reference inputs, target, 6 MB limit), ``invocation`` calls a handler with Lambda's context and deadline and
checks the response contract, ``evaluator_workers`` runs each file-based evaluator in a worker process,
``results`` shapes result entries, ``passing_rule`` says which results pass (an evaluator's ``PASSING_LABELS``,
else the value rule), ``packaging`` builds the deployment zip.

May import ``evalkit.spans.reading``, ``evalkit.documents`` and ``evalkit.errors``; not ``llm_judges`` or
``online`` (they sit above).
"""
