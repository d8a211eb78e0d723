"""A code-only evaluator from its file, run in spawned workers where forking is unsafe (issue 29, item 7).

In a process that already runs threads (a Jupyter kernel, a run with LLM judges) forking is unsafe, and a
watched thread can neither stop an evaluator that holds the GIL (``7 ** (10**8)``) nor end what it starts. An
evaluator loaded from ``custom-evaluators/<name>/<name>.py`` needs neither: a fresh interpreter
(``usercode.Worker.spawn``) imports it from its file (``loading._first_class``, as the loader does) and builds
its instances with the same ``threshold`` and ``options`` the loader uses, one per configuration. The rows go
in as JSON (configuration and inputs of each row still to score), the results come back in batches as from a
forked worker (``worker_process.batches``); the time limit per row is kept from evalkit's side through a
progress word in a memory file the worker maps. ``SpawnedRows`` is the parent's side (used by ``loading``),
``spawned_worker.load`` the worker's.

May import ``usercode`` only (``loading`` imports it).
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
        target = "evalkit.evaluators.custom.spawned_worker:load"
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
