"""The ``evalkit`` command's process entry (``python -m evalkit``, and the console script, which calls
:func:`run`): Ctrl-C at any instant ends the command with ``Interrupted.`` and exit code 130, never a traceback.

:func:`evalkit.cli.main` turns a Ctrl-C while a command runs into ``Interrupted.`` and 130. Around it there are
instants it cannot cover: importing the command line (a tenth of a second before ``main`` starts), parsing,
its own ``finally``, and the end, when exit handlers run after the files are written. :func:`run` imports and
calls ``main`` inside its own ``try``, so an interrupt anywhere before ``main`` returns ends the same way; and
``main`` ignores SIGINT once the command is done, so the teardown (exit handlers, flushing) is never cut
short into an "Exception ignored in atexit callback" traceback: a Ctrl-C then changes nothing, the command's
own exit code stands. Only an interrupt before Python runs any code (interpreter start-up) is beyond reach:
the process then ends by the signal, silently.

An interrupt can also land where Python swallows exceptions: in an at-fork handler (logging's lock release
after ``os.fork``, when the document is read ahead), a ``__del__`` or a weakref callback. Python then prints
"Exception ignored in ..." and the command goes on as if nothing happened. :func:`run` therefore installs its
own SIGINT handler, which notes the interrupt before raising ``KeyboardInterrupt``, and an unraisable hook that
keeps quiet about a swallowed ``KeyboardInterrupt``: a command that returns after an interrupt it never saw
still ends with ``Interrupted.`` and 130, and so does one that an extension turned into another error (numpy's
C init reports an interrupt during its import of ``datetime`` as an ``ImportError``).

Imports nothing of evalkit at module level (importing ``evalkit.cli`` is the slow part it must cover).
"""

from __future__ import annotations

import signal
import sys
from typing import NoReturn

__all__ = ["interrupted", "run"]

INTERRUPTED_EXIT = 130


_seen = []


def _on_sigint(signum, frame) -> None:
    """SIGINT as Python's default handler, noted first (an interrupt raised where Python swallows it)."""
    _seen.append(signum)
    raise KeyboardInterrupt


def _quiet_about_interrupts(hook):
    def unraisable(info) -> None:
        if not isinstance(info.exc_value, KeyboardInterrupt):  # noted by _on_sigint; acted on by run
            hook(info)

    return unraisable


def run() -> NoReturn:
    """Run the command line (``evalkit.cli.main``) and exit with its code (module docs)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_about_interrupts(sys.unraisablehook)
    try:
        from evalkit.cli import main

        code = main()
        if _seen and code != INTERRUPTED_EXIT and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            interrupted()  # an interrupt swallowed before the command was done (module docs)
    except KeyboardInterrupt:
        try:
            interrupted()
        except KeyboardInterrupt:  # a second Ctrl-C before the first one's handling ignored SIGINT
            interrupted()
    except BaseException:
        # An interrupt that an extension turned into another error: numpy's C init imports ``datetime`` and
        # reports a KeyboardInterrupt there as "ImportError: ... could not import module datetime".
        if _seen:
            interrupted()
        raise
    raise SystemExit(code)


def interrupted() -> NoReturn:
    """Print ``Interrupted.`` and end the process with 130; later Ctrl-Cs are ignored while it ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import atexit
    import os

    try:
        print("Interrupted.", file=sys.stderr)
        atexit._run_exitfuncs()  # temporary folders and logging, as a normal exit would
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(INTERRUPTED_EXIT)


if __name__ == "__main__":
    run()
