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


class EvaluatorCrashed(EvalkitError):
    """User code ended its own worker process during a call (``os._exit``, ``sys.exit``, a signal, the OOM
    killer), or the worker could not load it. Raised by the runner (``evalkit.usercode``); ``spans invoke``
    exits 1 with it, runs turn it into an error result. ``how`` says how the process ended (``exited with code
    0``, ``was killed by SIGSEGV``; None when it did not start), ``progress`` the item it was on, if known."""

    exit_code = 1

    def __init__(self, message: str, *, how: str | None = None, progress: int | None = None):
        super().__init__(message)
        self.how = how
        self.progress = progress


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


def shown(path: object) -> str:
    """A file name as messages show it: as it is when every character prints, else quoted with escapes.

    A name holding a newline, a control character or a bidirectional override (U+202E) would otherwise reach
    the terminal raw, where it can forge a line or reorder the text around it: ``'bad\\nname.json'`` and
    ``'\\u202etxt.json'`` are shown instead. Ordinary names (spaces and accents included) stay unquoted.
    """
    text = str(path)
    return text if text.isprintable() or not text else repr(text)


def terminal_safe(text: str) -> str:
    """``text`` with every control character except newline and tab, and every bidirectional control, escaped.

    The net under :func:`shown` for what the CLI prints to stderr: a value that reaches a message without
    going through ``shown`` still cannot move the cursor, erase a line or reverse the text after it.
    """
    if text.isprintable():
        return text
    return "".join(ch if ch in "\n\t" or ch.isprintable() or ch == " " else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    return ch if ch not in _UNSAFE and not (ord(ch) < 32 or 127 <= ord(ch) < 160) else repr(ch)[1:-1]


# Bidirectional embeddings, overrides, isolates and marks (Unicode's Bidi_Control) and line/paragraph separators.
_UNSAFE = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")
