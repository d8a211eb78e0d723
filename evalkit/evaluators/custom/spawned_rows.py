"""A code-only evaluator from its file, run in spawned workers where forking is unsafe (issue 29, item 7).

In a process that already runs threads (a Jupyter kernel, a run with LLM judges) forking is unsafe, and a
watched thread can neither stop an evaluator that holds the GIL (``7 ** (10**8)``) nor end what it starts. An
evaluator loaded from ``custom-evaluators/<name>/<name>.py`` needs neither: a fresh interpreter
(``usercode.Worker.spawn``) imports it from its file (``loading._first_class``, as the loader does) and builds
its instances with the same ``threshold`` and ``options`` the loader uses, one per configuration. The rows go
in as JSON (configuration and inputs of each row still to score), the results come back in batches as from a
forked worker (``worker_process.batches``); the time limit per row is kept from evalkit's side through a
progress word in a memory file the worker maps. ``SpawnedRows`` is the parent's side, ``load`` the worker's.

May import ``usercode`` and, in the worker, the rest of ``evaluators.custom``.
"""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.usercode.worker import Progress, Worker


class SpawnedRows:
    """The parent's side: how to start a worker for evaluator ``name`` (module ``path``) and what to send it.

    ``setups[g]`` is the ``(threshold, options)`` of configuration ``g``, ``group_of[k]`` the configuration of
    position ``k`` of ``order``, ``columns`` the input columns (``prompt``, ``response``,
    ``expected_response``, ``context``) indexed by case row."""

    def __init__(self, name: str, path: Path, setups, group_of, order, columns):
        self.name, self.path = name, path
        self.setups, self.group_of, self.order, self.columns = setups, group_of, order, columns

    def start(self, progress: Progress) -> Worker:
        target = "evalkit.evaluators.custom.spawned_rows:load"
        return Worker.spawn(self.name, target, self.name, str(self.path), str(progress.fd), progress=progress)

    def request(self, ranges: list[tuple[int, int]]) -> bytes:
        """The positions still to score, with each one's configuration and inputs."""
        rows = []
        for start, end in ranges:
            for k in range(start, end):
                i = self.order[k]
                rows.append([k, self.group_of[k], *(column[i] for column in self.columns)])
        data = {"count": len(self.order), "setups": self.setups, "ranges": ranges, "rows": rows}
        return json.dumps(data, separators=(",", ":")).encode("utf-8", "surrogatepass")


def load(name: str, path: str, progress_fd: str):
    """In the worker: import the evaluator's class from ``path``; the request handler that scores the rows
    it is sent (see ``SpawnedRows.request``), streaming batches (``worker_process.batches``)."""
    import numpy as np

    from evalkit.evaluators.custom.contract import describe_exception, signature_message
    from evalkit.evaluators.custom.loading import RowEvaluator, _first_class
    from evalkit.evaluators.custom.time_limit import IN_WORKER_PROCESS
    from evalkit.evaluators.custom.worker_process import batches

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
