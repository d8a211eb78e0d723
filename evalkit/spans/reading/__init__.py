"""Telemetry in: span files and OTLP messages -> canonical span documents and event records -> the span frame.

``loading`` reads span files (plain or gzip; one JSON document, an array, JSON lines, or objects one after
another: ``json_stream``) and ``shapes`` tells each JSON value's shape by content and dispatches it: OTLP JSON
(``otlp_json``, ``event_record``; Collector file exporter lines), flat CloudWatch documents
(``span_document``, ``event_record``), snake_case span dicts (``snake_spans``) and the OpenTelemetry SDK's
``to_json()`` (``sdk_json``). ``span_document`` holds the canonical flat span document every form becomes,
``otlp_protobuf`` converts OTLP protobuf, ``session_ids`` decides each document's session (the one rule the
frame, the receiver and the stream share), ``span_frame`` builds the frame and the per-session table, and
``message_forms`` reads prompts, answers and tool calls out of a span and its event records in every form
agents emit them (the span's own content first, then its records), with ``record_content`` (event records
joined to their span by trace + span id; AgentCore's split form, GenAI ``operation.details`` events and the
older per-message events as records) and ``message_text`` (message content and lists in every shape); ``tool_calls`` builds the upstream
``diagnostics.tool_calls`` object (tool identities, execution statuses) from tool spans.

The bottom of ``evalkit.spans``: may import ``evalkit.documents`` and ``evalkit.errors`` only, never the
other ``evalkit.spans`` subpackages (``lambdas``, ``llm_judges``, ``online``), which all read through it.
"""
