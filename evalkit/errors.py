"""Exceptions for user mistakes: the CLI prints them as ``Error: ...`` with no traceback.

Each carries the exit code of the CLI contract, so the command line and the Python API agree on what kind of
mistake was made: 2 for invalid input or evaluator configuration, 3 for missing environment configuration.
"""

from __future__ import annotations

#: The longest line of an error message; longer ones are cut (a user's 50 MB value must never reach stderr
#: whole). Messages quote values cut much shorter already; this is the net under them.
MAX_LINE = 2000


def _cap(line: str) -> str:
    return line if len(line) <= MAX_LINE else f"{line[: MAX_LINE - 1]}…({len(line):,} characters)"


class EvalkitError(Exception):
    """A mistake the user can fix; the message names the file, the item and the fix."""

    exit_code = 2

    def __init__(self, message: str, problems: list[str] | None = None):
        self.problems = list(problems or [])
        super().__init__(message)

    def __str__(self) -> str:
        head = "\n".join(_cap(line) for line in super().__str__().split("\n"))
        if not self.problems:
            return head
        return head + "\n" + "\n".join(f"  - {_cap(str(p))}" for p in self.problems)


class DocumentError(EvalkitError):
    """The eval document cannot be read or does not follow the schema."""


class EvaluatorConfigError(EvalkitError):
    """An evaluator named by the document cannot be resolved, loaded or configured."""


class EnvironmentConfigError(EvalkitError):
    """Something the run needs from the environment (a judge model, credentials) is missing."""

    exit_code = 3


class ParameterError(EvalkitError):
    """A notebook was given a parameter it does not declare (papermill itself only warns).

    In a notebook it shows as its one line, ``ParameterError: <message>``, not as a traceback through
    ``check_parameters``: IPython shows what ``_render_traceback_`` returns, and papermill repeats it.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"ParameterError: {self}"]
