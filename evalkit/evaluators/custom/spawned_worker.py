"""The worker's side of ``spawned_rows``: a fresh interpreter that imports a code-only evaluator from its file
and scores the rows it is sent, as ``loading.RowEvaluator`` does in a forked worker.

``load`` (the target of ``usercode.Worker.spawn``) imports the module (``loading._first_class``), maps the
parent's progress word, and returns the request handler: each request (JSON written by
``spawned_rows.SpawnedRows.request``) holds the configurations and the rows still to score; instances are
made once per configuration, with the loader's ``threshold`` and ``options``.

May import the rest of ``evaluators.custom`` and ``usercode``; nothing in evalkit imports it (the worker is
started by its name).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evalkit.evaluators.custom.contract import describe_exception, signature_message
from evalkit.evaluators.custom.loading import RowEvaluator, _first_class
from evalkit.evaluators.custom.time_limit import IN_WORKER_PROCESS
from evalkit.evaluators.custom.worker_process import batches
from evalkit.usercode.worker import Progress


def load(name: str, path: str, progress_fd: str):
    """In the worker: import the evaluator's class from ``path``; the request handler that scores the rows
    it is sent (see ``SpawnedRows.request``), streaming batches (``worker_process.batches``)."""
    IN_WORKER_PROCESS[0] = True
    cls = _first_class(name, Path(path), None)
    word = Progress.attach(int(progress_fd)).word
    instances: dict[str, object] = {}

    def instance(threshold, options):
        """One instance per configuration, as ``RowEvaluator.score`` makes them (a failure: its message)."""
        key = json.dumps([threshold, options], sort_keys=True)
        if key not in instances:
            try:
                instances[key] = cls(threshold=threshold, options=options)
            except TypeError as exc:
                instances[key] = f"constructor failed: {signature_message(exc)}"
            except BaseException as exc:  # noqa: BLE001 - user code: an error result, as in the parent
                instances[key] = f"constructor failed: {describe_exception(exc)}"
        return instances[key]

    def handle(request: bytes):
        data = json.loads(request.decode("utf-8", "surrogatepass"))
        count = data["count"]
        order = list(range(count))
        columns = tuple([None] * count for _ in range(4))
        fns: list = [None] * count
        failed: dict[int, str] = {}
        for k, group, *inputs in data["rows"]:
            threshold, options = data["setups"][group]
            made = instance(threshold, options)
            if isinstance(made, str):
                failed[k] = made
            fns[k] = made
            for column, value in zip(columns, inputs):
                column[k] = value
        outputs = (np.full(count, np.nan), [None] * count, [None] * count, [None] * count)

        def loop(start, end, buffers, progress, stop):
            RowEvaluator._rows(fns, order, columns, start, end, buffers, progress, stop)
            for k in range(start, end):  # a constructor that failed here only: the loader's load error
                if k in failed:
                    buffers[0][k], buffers[1][k] = np.nan, None
                    buffers[2][k], buffers[3][k] = failed[k], "evaluatorLoadError"

        return batches(loop, order, outputs, word, data["ranges"])

    return handle
