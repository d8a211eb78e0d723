"""Online evaluation (``evalkit spans serve``): receive live OTLP telemetry, wait for sessions to end, score them.

``server`` (``serve``, ``OnlineEvaluation``) wires the parts: ``intake`` decodes OTLP/HTTP requests,
``receiver`` is the aiohttp server, ``store`` the durable SQLite store (``store_lock``: one receiver per
store), ``session_tracking`` decides when a session is complete and whether it is sampled, filtered in,
``session_evaluation`` scores one session, ``exports`` writes results.jsonl / metrics.jsonl and alarms,
``views`` reads a store back.

The top of ``evalkit.spans``: may import every other part of it (``reading``, ``lambdas``, ``llm_judges``,
``evaluation``, ``evaluator_specs``), ``evalkit.judges``, ``evalkit.documents`` and ``evalkit.errors``.
"""
