"""The ``evalkit`` command line: ``run``, ``validate``, ``new``, ``cache``, ``compare``, ``report``, ``spans``, ``align``.

User mistakes, argument mistakes included (``arguments.parser``), print one ``Error: ...`` line with no
traceback and exit with the code the mistake calls for: 2 invalid input or evaluator configuration, 3 missing
environment configuration. Everything the command prints to stderr (errors, warnings, log lines, even an unexpected
traceback) is redacted (``evalkit.documents.redaction``): no configured key or credential-shaped text reaches
the terminal; errors, warnings and log lines also have control and bidirectional characters escaped.

Importing this package imports neither pandas nor numpy (a test holds it): :func:`main` parses the command line
first, lets a command start reading its input in a forked child (``read_ahead``: ``evalkit run``'s document,
``evalkit.documents.load_ahead``), and only then imports pandas, so the two overlap on two cores.

One module per command here; inside, bottom up: ``process`` (what the command does to its own process: pandas
imported without pyarrow, freed heap given back), ``arguments`` (what several commands share), ``run_options``
(``evalkit run``'s option groups), the command modules, ``spans`` (the ``evalkit spans`` commands).
"""

from __future__ import annotations

import logging
import sys
import warnings

from evalkit import __version__
from evalkit.cli import align, cache, compare, new, report, run, runs, validate
from evalkit.cli.arguments.parser import Parser, missing_command, parse
from evalkit.cli.process.lean_imports import import_pandas_without_pyarrow
from evalkit.cli.spans import command as spans
from evalkit.documents.redaction import install_log_redaction, redact
from evalkit.errors import terminal_safe


def build_parser() -> Parser:
    parser = Parser(prog="evalkit", description="Evaluate LLM agents from eval documents.")
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (run, validate, new, cache, compare, report, runs, spans, align):
        module.register(subparsers)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(terminal_safe(redact(f"Warning: {message}")), file=sys.stderr)


def _redacted_excepthook(kind, value, tb) -> None:
    """An unexpected error still prints its traceback, without the keys its messages may quote."""
    import traceback

    sys.stderr.write(redact("".join(traceback.format_exception(kind, value, tb))))


class _SafeFormatter(logging.Formatter):
    """Log lines with control and bidirectional characters escaped (``evalkit.errors.terminal_safe``)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


def setup_logging(level: str = "warning") -> None:
    """Log to stderr; ``debug`` shows discovery decisions and per-evaluator timings."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_SafeFormatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("evalkit")
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))
    root.propagate = False


def main(argv: list[str] | None = None) -> int:
    from evalkit.errors import EvalkitError

    parser = build_parser()
    args = parse(parser, argv)
    if not getattr(args, "func", None):
        missing_command(parser)
    install_log_redaction()
    setup_logging(getattr(args, "log_level", "warning"))
    warnings.showwarning = _show_warning
    sys.excepthook = _redacted_excepthook
    read_ahead = getattr(args, "read_ahead", None)
    args.ahead = None
    try:
        if read_ahead is not None:  # the command's input, read in a forked child while pandas is imported
            args.ahead = read_ahead(args)
        import_pandas_without_pyarrow()  # before the command imports pandas (see lean_imports)
        code = args.func(args)
    except EvalkitError as exc:
        print(terminal_safe(redact(f"Error: {exc}")), file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        code = 130
    finally:
        if args.ahead is not None:  # taken, or no longer wanted (the command stopped first): reaped here
            args.ahead.close()
    if argv is None:  # the command itself, not a caller in the same process
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # done: the teardown runs whole (evalkit.__main__)
        exit_despite_stray_threads(code)
        exit_without_teardown(code)
    return code


def exit_without_teardown(code: int) -> None:
    """End the command's process now: atexit handlers run and the output is flushed as at a normal exit, but
    the interpreter does not free every object one by one first (about 0.3 s after a 100,000-row run, issue
    20). Returns, for the normal exit, only when flushing fails (a closed pipe: Python reports it as usual)."""
    import atexit
    import os

    atexit._run_exitfuncs()  # what a normal exit runs: logging.shutdown, temporary folders, coverage
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def exit_despite_stray_threads(code: int) -> None:
    """End the process now with ``code`` when a non-daemon thread that evalkit did not start (one started by
    a custom evaluator's constructor, say) is still running: Python would wait for it forever.

    Everything the command writes is written by now (results are swapped in before the command returns);
    stdout, stderr and the log are flushed, then ``os._exit`` ends the process. Atexit handlers do not run,
    which costs nothing: Python runs them only after every non-daemon thread has ended, so with this thread
    running they would never have run either.
    """
    import os
    import threading

    stray = [
        t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()
    ]
    if not stray:
        return
    names = ", ".join(repr(t.name) for t in stray)
    print(
        f"Warning: {'thread' if len(stray) == 1 else 'threads'} {names}, started by an evaluator, still "
        "running when the command ended; evalkit did not wait for it (start such threads with daemon=True).",
        file=sys.stderr,
    )
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
