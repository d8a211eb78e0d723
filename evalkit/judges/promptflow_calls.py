"""One judge-pool attempt is one HTTP request, also for custom ``.prompty`` judges run through promptflow.

promptflow wraps every prompty call (``Prompty.__call__`` / ``AsyncPrompty.__call__``) in its own retry loop,
``handle_openai_error(tries=10)``: a 429, 422 or 5xx is retried up to ten times inside the call, sleeping as
long as ``Retry-After`` says, and each retry logs an ERROR and a WARNING line to stderr. Under a judge pool
that already retries (``evalkit.judges.pool``) this multiplies the requests (one pool attempt became up to
eleven), hides the 429s from the adaptive limit (it never sees them, so it never backs off), makes the
reported call count wrong, and floods the terminal.

promptflow has no setting for its retry count (microsoft/promptflow#1396 asked for one; the openai client it
builds already has ``max_retries=0``), so while evalkit's own calls are in flight ``promptflow_call()`` sets
the decorator's ``tries`` to 0: the loop then makes one request and raises promptflow's
``ExceedMaxRetryTimes`` wrapping the openai error, which the pool classifies (429 → back off) and retries
itself. The original count is put back when the last call ends, so promptflow used outside evalkit keeps
its own behaviour. If an upgraded promptflow no longer has the loop, nothing is changed and a warning says
so (``tests/judges/test_promptflow_retries.py`` then fails on the request count).

promptflow's log lines from the calling thread are taken off its stderr handlers and handed back to the
caller, which folds the ones that add something into its error message (``fold``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import threading
from collections.abc import Iterator

from evalkit.documents.redaction import redact
from evalkit.judges.offline import import_promptflow_quietly
from evalkit.judges.pool import JudgeFailure

log = logging.getLogger("evalkit.judges")

#: The decorated methods whose retry loop is turned off, as (module, class) of promptflow.
PROMPTY_CLASSES = (("promptflow.core._flow", "Prompty"), ("promptflow.core._flow", "AsyncPrompty"))
#: Lines of promptflow's retry bookkeeping, meaningless once evalkit does the retrying.
_RETRY_NOISE = ("reached max retry", "back off", "retry-after")
#: At most this many characters of promptflow's lines go into an error message.
_FOLD_LIMIT = 400

_lock = threading.Lock()
_active = 0
_saved: list[tuple[object, object]] = []  # (closure cell, original tries) while calls are in flight
_heard: dict[int, list[str]] = {}  # thread id → promptflow's lines logged by that thread's call
_warned = False


def retry_cells() -> list:
    """The closure cells holding ``tries`` of promptflow's retry decorator on the prompty classes.

    Empty when promptflow is not installed or no longer wraps its calls that way. Found by following
    ``__wrapped__`` (set by ``functools.wraps``) to the function defined in ``handle_openai_error*`` that
    reads ``tries`` from its closure.
    """
    if importlib.util.find_spec("promptflow") is None:
        return []
    import_promptflow_quietly()  # no telemetry, no trace service, no exporter folder
    cells = []
    for module_name, class_name in PROMPTY_CLASSES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        function = getattr(getattr(module, class_name, None), "__call__", None)  # noqa: B004
        seen = 0
        while function is not None and seen < 10:
            code = getattr(function, "__code__", None)
            # The code's own qualified name: functools.wraps gives the wrapper the method's __qualname__.
            defined_in = getattr(code, "co_qualname", "handle_openai_error")
            if (
                code is not None
                and defined_in.startswith("handle_openai_error")
                and "tries" in code.co_freevars
            ):
                cells.append(function.__closure__[code.co_freevars.index("tries")])
                break
            function, seen = getattr(function, "__wrapped__", None), seen + 1
    return cells


class _Capture(logging.Filter):
    """A logger filter that keeps records logged by threads inside ``promptflow_call`` for their caller."""

    def filter(self, record: logging.LogRecord) -> bool:
        lines = _heard.get(record.thread)
        if lines is None:
            return True
        if record.levelno >= logging.WARNING:
            lines.append(f"{record.levelname} {redact(record.getMessage())}")
        return False


_CAPTURE = _Capture()


def _promptflow_loggers() -> list[logging.Logger]:
    """promptflow's loggers: each has its own stderr handler and does not propagate."""
    names = list(logging.root.manager.loggerDict)  # one step: other threads may add loggers meanwhile
    names = [n for n in names if n == "promptflow" or n.startswith("promptflow.")]
    return [logging.getLogger(n) for n in names]


def _start() -> None:
    global _active, _warned
    with _lock:
        _active += 1
        if _active > 1:
            return
        cells = retry_cells()
        for cell in cells:
            _saved.append((cell, cell.cell_contents))
            cell.cell_contents = 0
        if not cells and importlib.util.find_spec("promptflow") is not None and not _warned:
            _warned = True
            log.warning(
                "evalkit could not turn off promptflow's own retries (this promptflow no longer has the "
                "retry loop evalkit knows): a custom judge's call may make more requests than evalkit counts."
            )
    for logger in _promptflow_loggers():
        if _CAPTURE not in logger.filters:
            logger.addFilter(_CAPTURE)


def _stop() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active:
            return
        while _saved:
            cell, tries = _saved.pop()
            cell.cell_contents = tries


@contextlib.contextmanager
def promptflow_call() -> Iterator[list[str]]:
    """Run a custom judge's call with promptflow's retries off; yields the list its log lines go to.

    The lines are ``"LEVEL message"`` (WARNING and above, redacted) logged by the current thread while the
    block runs; they are not printed.
    """
    _start()
    ident = threading.get_ident()
    lines: list[str] = []
    _heard[ident] = lines
    try:
        yield lines
    finally:
        _heard.pop(ident, None)
        _stop()
        for line in lines:
            log.debug("promptflow: %s", line)


def fold(failure: JudgeFailure, lines: list[str]) -> JudgeFailure:
    """``failure`` with promptflow's lines that add to it appended, so nothing it said is lost.

    Dropped: lines whose message the failure already states (promptflow's "Exception occurs: <the openai
    error>") and its retry bookkeeping; the rest, de-duplicated, are appended as ``(promptflow: ...)``.
    """
    message = str(failure)
    kept: list[str] = []
    for line in lines:
        text = line.split(" ", 1)[-1]
        lowered = text.lower()
        if any(noise in lowered for noise in _RETRY_NOISE) or line in kept:
            continue
        if any(part and part in text for part in (message, message.split(": ", 1)[-1])):
            continue
        kept.append(line)
    if not kept:
        return failure
    extra = "; ".join(kept)
    if len(extra) > _FOLD_LIMIT:
        extra = extra[: _FOLD_LIMIT - 1] + "…"
    folded = JudgeFailure(
        f"{message} (promptflow: {extra})",
        failure.code,
        retryable=failure.retryable,
        retry_after=failure.retry_after,
    )
    return folded
