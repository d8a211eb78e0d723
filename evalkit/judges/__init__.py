"""Everything that calls a judge model: configuration, the adaptive pool, the cache, ``.prompty`` files.

- ``models``: the judge model from the environment / ``.env`` (Azure OpenAI or any OpenAI-compatible endpoint).
- ``pool``: bounded, adaptive concurrency (AIMD on 429s), retries with backoff and ``Retry-After``, deadlines.
- ``cache``: judgments in SQLite, keyed by evaluator identity, model, parameters and inputs.
- ``prompty``: reading ``.prompty`` files and rendering azure-ai-evaluation's own built-in prompts.
- ``offline``: switches that keep promptflow and azure-ai-evaluation from phoning home.
- ``promptflow_calls``: custom ``.prompty`` judges' calls with promptflow's own retries off (one request per
  pool attempt) and its log lines folded into the error message instead of stderr.
- ``promptflow_models``: custom ``.prompty`` judges run on evalkit's judge model, whatever ``connection`` or
  model configuration the file names (one notice per evaluator).
- ``judge_answers``: what a custom judge's wrapper returns (``{"score": 1-5, "reason"}``), the message when it
  returns something else, and ``read_judge_answer`` for the answer shapes promptflow / azure-ai-evaluation
  judges give.
- ``metering``: every chat-completions request a judge call sends, and its tokens, whichever library sends it
  (evalkit's client, promptflow, azure-ai-evaluation): the run's ``calls`` are the requests the model received.
- ``strict_answers``: one reading of judge answers for every judge kind: integer scores on the scale, no repeated
  keys, a size limit on the answer, a length limit on stored reasons.
- ``prices``: USD from the judge's tokens, at the prices of ``--price`` or the ``EVALKIT_PRICES`` file.
- ``run_summary``: ``JudgeRun``, the judge side of one run and its summary (model, calls, tokens, cost).
- ``failures``: ``JudgeFailure`` (re-exported by ``pool``).
- ``batch``: batch judging (``evaluate(batch=True)``, ``evalkit run --batch``): every judge request of a run
  through the OpenAI / Azure OpenAI Batch API, answered back through ``metering``'s hook.

The built-in LLM judges themselves are evaluators (``evalkit.evaluators.llm_judges.builtin``): they implement the
evaluator protocol and use this package to reach the model.

May import: ``evalkit.documents``, ``evalkit.errors``.
"""
