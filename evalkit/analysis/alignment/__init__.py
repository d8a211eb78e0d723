"""Aligning an LLM judge to human labels: ``evalkit.align`` (``loop.align``) and its parts, one module each.

- ``split``: the seeded split of labelled items into an optimisation set and a held-out set.
- ``prompts``: a variant's prompt text (guidelines, few-shot examples, rewritten criteria in the system message).
- ``proposals``: the optimiser request built from the optimisation set's disagreements, and the variants of a round.
- ``judging``: the judge being aligned (custom, or a built-in as a custom copy) and scoring a variant through
  ``evalkit.engine.evaluate``.
- ``budget``: the call and token plan (``--dry-run``, ``max_calls``).
- ``report``: ``Alignment``, the held-out before/after table with bootstrap intervals and the verdict.
- ``writing``: the aligned judge written as ``custom-evaluators/<name>_aligned[N]/`` with ``alignment.json``.
- ``loop``: ``align`` itself.

May import: ``evalkit.engine`` and everything below it, and the rest of ``evalkit.analysis``; never
``reporting``, ``notebook`` or ``cli``.
"""
