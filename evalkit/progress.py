"""Progress bars that stay out of the way: tqdm (the notebook variant in Jupyter), shown only when a run
takes more than a moment."""

from __future__ import annotations

import contextlib


class _Silent:
    def update(self, n: int = 1) -> None:
        pass


@contextlib.contextmanager
def progress_bar(total: int, enabled: bool | None = None, desc: str = "evaluating"):
    """A tqdm bar over ``total`` row evaluations; ``enabled=None`` shows it after 1 s of work."""
    if enabled is False or total == 0:
        yield _Silent()
        return
    from tqdm.auto import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: it would outlive the bar and make forking unsafe
    bar = tqdm(total=total, desc=desc, unit="row", delay=0 if enabled else 1.0, leave=False)
    try:
        yield bar
    finally:
        bar.close()
