"""Telemetry in: span files and OTLP messages -> canonical span documents and event records -> the span frame.

``loading`` reads span files (every shape it recognises, told apart by content), ``span_document`` holds the
canonical flat span document every form becomes, ``otlp_json`` / ``otlp_protobuf`` convert OTLP messages,
``span_frame`` builds the frame and the per-session table, and ``message_forms`` reads prompts, answers and
tool calls out of a span in every form agents emit them.

The bottom of ``evalkit.spans``: may import ``evalkit.documents`` and ``evalkit.errors`` only, never the
other ``evalkit.spans`` subpackages (``lambdas``, ``llm_judges``, ``online``), which all read through it.
"""
