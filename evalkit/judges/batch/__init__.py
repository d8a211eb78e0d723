"""Batch judging: every judge call of a run through the OpenAI / Azure OpenAI Batch API, at the batch price.

``evalkit run --batch`` / ``evaluate(batch=True)``. The design, and why:

Every judge kind ends in openai's ``chat.completions.create``: evalkit's built-in judges through its own
client, custom ``.prompty`` judges through promptflow, ToolCallAccuracy through azure-ai-evaluation's own
prompty (``judges.metering`` hooks that method for every one of them). Each library builds its request and
parses its reply in its own way, and those ways are what the direct path is tested on. So a batch run does
not rebuild any library's request or reading; it runs the judges more than once with a stand-in behind the
hook (``stand_in``):

- a first pass where the hook records each request body and defers the call (nothing is sent);
- the batch round trip: the bodies as JSONL lines (``custom_id``: a hash of the evaluator, the body and its
  occurrence), uploaded, the batches created, polled with a progress bar of their state, their output and
  error files read (``api``, ``waiting``);
- a second pass where the hook answers each request from the batch results, keyed by that hash, so each
  library parses its own reply exactly as a live one; failed or expired lines go out once more in a new
  batch, then become error results naming the batch and the line (``rounds``).

The results of the last pass go to the judge cache (a re-run is free), its counters and tokens are the run's
(batch calls are metered like direct ones and priced at the batch price, ``judges.prices``), and the batch
ids are kept in the cache folder while the run waits (``journal``), so a run killed while waiting resumes
polling instead of paying again. What a pass costs without the model is small; ``benchmarks/bench_batch.py``
measures it per 1,000 judgments.

May import: ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

from evalkit.judges.batch.rounds import judge_in_batches

__all__ = ["judge_in_batches"]
