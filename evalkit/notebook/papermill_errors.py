"""A misspelled papermill parameter, reported by the ``papermill`` command as one line instead of ~50.

Why: evalkit's notebooks stop on a parameter they do not declare (``check_parameters`` raises
:class:`~evalkit.errors.ParameterError`), and the ``papermill`` command then ends with its own uncaught
``PapermillExecutionError``: a Python traceback through click and papermill (about 25 lines), then the cell's
traceback, then the message. The cell's part is one line already (``ParameterError._render_traceback_``); this
module shortens the rest. papermill imports the engines that packages register under the ``papermill.engine``
entry point when it starts, so evalkit registers :class:`EvalkitEngine` (papermill's own nbclient engine, under
the name ``evalkit``), and importing this module in the ``papermill`` command installs an excepthook that prints
an uncaught error whose cell raised ``ParameterError`` as ``ParameterError: <message>`` (exit code 1, as before).
Every other error, and every program that imports papermill as a library, is left as it was.

May import: ``papermill`` (only when papermill imports it).
"""

from __future__ import annotations

import sys
from pathlib import Path

_ENGINE: list = []


def __getattr__(name: str):
    """``EvalkitEngine``: papermill's nbclient engine, registered as ``evalkit`` so that papermill imports this
    module. Made on first use, because papermill asks for it while ``papermill.engines`` is still being
    imported (a module-level import of papermill here would be circular)."""
    if name != "EvalkitEngine":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _ENGINE:
        from papermill.engines import NBClientEngine

        _ENGINE.append(type("EvalkitEngine", (NBClientEngine,), {"__doc__": "papermill's nbclient engine."}))
    return _ENGINE[0]


def short_parameter_errors(previous):
    """An excepthook printing an uncaught papermill error from a ``ParameterError`` cell as its one line."""

    def hook(kind, value, tb):
        if getattr(value, "ename", None) == "ParameterError":
            print(f"ParameterError: {value.evalue}", file=sys.stderr)
            return
        previous(kind, value, tb)

    return hook


def _is_papermill_command(argv: list[str]) -> bool:
    """``papermill ...`` or ``python -m papermill ...``."""
    if not argv:
        return False
    program = Path(argv[0])
    return program.name == "papermill" or (
        program.name == "__main__.py" and program.parent.name == "papermill"
    )


if _is_papermill_command(sys.argv):
    sys.excepthook = short_parameter_errors(sys.excepthook)
