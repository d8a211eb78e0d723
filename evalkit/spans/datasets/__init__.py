"""Traces to datasets: spans (a span file, a frame, or the online store) -> eval documents to re-run.

``to_document`` (``evalkit.spans.to_document``, ``evalkit spans to-document``) makes one item per trace, or
one multi-turn thread per session, from the conversation ``llm_judges.conversation`` reads out of the spans
(every span shape and event-record form ``reading`` knows). ``selection`` picks the sessions and traces
(session ids, a start time, span attribute filters, sessions an online evaluator failed, a seeded sample),
``store_sessions`` reads them from the online store, ``retrieval`` reads retrieval hits, ``items`` builds
the document's items.

The top of ``evalkit.spans``: may import every other part of it (``reading``, ``lambdas``, ``llm_judges``,
``online``), ``evalkit.documents`` and ``evalkit.errors``.
"""
