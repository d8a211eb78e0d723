"""Code-based span evaluators as AWS Lambda runs them: the handler, its payload, the call and its result.

``handler_location`` finds a handler (``<name>.py`` or AWS's ``lambda_function.py``, ``lambda_handler`` or
``handler``, or the ``module.function`` configured), ``span_evaluator`` loads it and its level, ``payload``
builds the AgentCore event (``sessionSpans``, reference inputs, target, 6 MB limit), ``invocation`` calls a
handler with Lambda's context and deadline and checks the response contract, ``event_replay`` replays a
recorded event file (``spans invoke``), ``evaluator_workers`` runs each file-based evaluator in a worker
process, ``results`` shapes result entries, ``passing_rule`` says which results pass (an evaluator's
``PASSING_LABELS``, else the value rule), ``packaging`` builds the deployment zip and
``requirements_bundle`` installs its pinned third-party packages with pip for Lambda's Linux.

May import ``evalkit.spans.reading``, ``evalkit.documents`` and ``evalkit.errors``; not ``llm_judges`` or
``online`` (they sit above).
"""
