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

Imports nothing of evalkit at module level (importing ``evalkit.cli`` is the slow part it must cover).
"""

from __future__ import annotations

import signal
import sys
from typing import NoReturn

__all__ = ["interrupted", "run"]

INTERRUPTED_EXIT = 130


def run() -> NoReturn:
    """Run the command line (``evalkit.cli.main``) and exit with its code (module docs)."""
    try:
        from evalkit.cli import main

        code = main()
    except KeyboardInterrupt:
        try:
            interrupted()
        except KeyboardInterrupt:  # a second Ctrl-C before the first one's handling ignored SIGINT
            interrupted()
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
