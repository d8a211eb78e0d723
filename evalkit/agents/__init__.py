"""Agents under test: a Python callable, a module path, or an OpenAI-compatible HTTP endpoint.

Items run concurrently, the turns of a thread in order with the conversation as history; failures carry the
upstream error codes; the OpenTelemetry spans an agent emits are captured per item.

    from evalkit.agents.run import run_agent
    from evalkit.agents.span_capture import write_spans_jsonl

Modules, as the data flows: ``targets`` (resolve ``file.py:function``, ``package.module:function`` or an
``http(s)://`` endpoint into an agent and call it), ``calls`` (one row's call: retries, deadline, answer
or upstream error code), ``run`` (``run_agent``: items concurrently, thread turns in order with history),
``span_capture`` (OpenTelemetry spans routed per item, ``session.id``, ``write_spans_jsonl``). Nothing here
imports pandas, openai or OpenTelemetry until it is used.

May import: ``evalkit.judges`` (retry and deadline machinery), ``evalkit.evaluators``, ``evalkit.spans``,
``evalkit.documents``, ``evalkit.errors``.
"""
