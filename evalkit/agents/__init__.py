"""Agents under test: a Python callable, a module path, or an OpenAI-compatible HTTP endpoint.

Items run concurrently, the turns of a thread in order with the conversation as history; failures carry the
upstream error codes; the OpenTelemetry spans an agent emits are captured per item.

May import: ``evalkit.judges`` (retry and deadline machinery), ``evalkit.evaluators``, ``evalkit.spans``,
``evalkit.documents``, ``evalkit.errors``.
"""
