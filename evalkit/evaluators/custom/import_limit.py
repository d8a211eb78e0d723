"""A custom evaluator's module imported under the evaluator time limit (``--evaluator-timeout``).

A module that hangs while it is imported (a download, a network call, ``input()``) must not hang the run: it
is imported in a daemon thread while the calling thread waits at most the limit. A module that does not
finish in time is abandoned (stopped at its next Python bytecode where possible, else left blocked in a
daemon thread that never keeps the process alive), and its evaluator becomes an ``UnloadedEvaluator``: every
row it was asked for is an ``evaluatorLoadError`` result that says so, and the other evaluators run as usual.

Threads the module starts while it is imported are daemon threads too (a thread inherits the flag from the
thread that starts it), so they never keep the process alive either. While an abandoned import still runs,
the process has another thread, so the code-only evaluators that follow run in watched threads rather than
worker processes (forking with a thread running is unsafe).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from evalkit.evaluators.base import error_frame
from evalkit.evaluators.custom.time_limit import abandon

LOAD_ERROR = "evaluatorLoadError"


def import_within(
    run_import: Callable[[], None], limit: float | None, name: str
) -> tuple[bool, BaseException | None]:
    """Run ``run_import`` with at most ``limit`` seconds (``None``: here, without a limit).

    Returns ``(finished, failure)``: whether it finished in time, and what it raised (an exception of the
    module's own, to report as a configuration error). A Ctrl-C while waiting is raised here.
    """
    if limit is None:
        try:
            run_import()
        except KeyboardInterrupt:  # in the main thread this may be the user's Ctrl-C: it stops the run
            raise
        except BaseException as exc:  # noqa: BLE001 - user code: reported as a load error
            return True, exc
        return True, None
    failure: list[BaseException] = []

    def work() -> None:
        try:
            run_import()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            failure.append(exc)

    worker = threading.Thread(target=work, name=f"evalkit-import-{name}", daemon=True)
    worker.start()
    try:
        worker.join(limit)
    except BaseException:  # Ctrl-C while waiting: the import is abandoned too
        abandon(worker, [False])
        raise
    if worker.is_alive():
        abandon(worker, [False])
        return False, None
    return True, (failure[0] if failure else None)


def import_timeout_message(name: str, path: Path, limit: float) -> str:
    return (
        f"evaluator '{name}': its module {path} did not finish importing within {limit:g} s and was abandoned. "
        "Move slow work done at import time (downloads, network calls, input()) into the class, or raise the "
        "limit with --evaluator-timeout SECONDS (evaluate(..., evaluator_timeout=))"
    )


class UnloadedEvaluator:
    """Stands in for a custom evaluator whose module could not be imported in time: each of its rows is an
    ``evaluatorLoadError`` result carrying ``message``."""

    has_threshold = True
    requires: tuple[str, ...] = ()
    is_llm = False

    def __init__(self, name: str, message: str):
        self.name = self.key = self.score_field = name
        self.message = message

    def score(self, rows, configs: list[dict]):
        return error_frame(rows.index, self.message, LOAD_ERROR)
