"""A Ctrl-C that lands where Python swallows exceptions (an at-fork handler, a ``__del__``, a weakref callback)
still ends the command with ``Interrupted.`` and 130, and no "Exception ignored" traceback is printed
(``evalkit.__main__``). Seen for real: SIGINT during logging's at-fork lock release, when ``evalkit run`` forks
its document reader, let the run go on to exit 3."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import os, signal
    import evalkit.cli

    def swallowing_main(argv=None):
        class Swallows:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGINT)  # raised inside __del__: Python swallows it
                for _ in range(1000):
                    pass
        Swallows()
        print("the command went on")
        return 3

    evalkit.cli.main = swallowing_main
    from evalkit.__main__ import run
    run()
    """
)


def test_an_interrupt_python_swallowed_still_ends_the_command_with_130():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "Interrupted.\n"
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


CONVERTED = textwrap.dedent(
    """
    import os, signal
    import evalkit.cli

    def converting_main(argv=None):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
        except KeyboardInterrupt:
            raise ImportError("could not import module datetime") from None  # as numpy's C init does

    evalkit.cli.main = converting_main
    from evalkit.__main__ import run
    run()
    """
)


def test_an_interrupt_an_extension_turned_into_another_error_still_ends_with_130():
    done = subprocess.run([sys.executable, "-c", CONVERTED], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "Interrupted.\n"
