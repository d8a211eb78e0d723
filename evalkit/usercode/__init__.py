"""The one runner for user code: Lambda handlers (``spans invoke``, ``spans eval``, ``spans serve``, the Spark
stream) and code-only custom evaluators (``evalkit run``) are called here, never in evalkit's own process.

* ``worker``: the parent's side. A worker is a child process in a process group of its own, started as a fresh
  interpreter (``Worker.spawn``: safe from a process with threads) or forked (``Worker.fork``: inherits the
  caller's callables, for ad-hoc evaluators); requests go in as bytes, answers come back as JSON read by
  ``documents.json_input.parse_json``; the time limit is enforced from the parent (SIGKILL to the group, so
  code that holds the GIL stops too); a worker that dies (``os._exit``, ``sys.exit``, a signal) raises
  ``errors.EvaluatorCrashed`` naming the evaluator and the exit code or signal;
* ``child``: the worker's side, a loop that answers requests with a handler function of the caller's;
* ``process_tree``: the worker's descendants (it is their subreaper), killed after every call;
* ``output_tail``: what the user code prints, kept apart from its answers and bounded (the tail is kept).

May import ``errors`` and ``documents`` only: it sits below ``spans`` and ``evaluators``, which use it.
"""
