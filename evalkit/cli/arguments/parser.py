"""The command line's argument parser: argument mistakes print the same ``Error:`` line as every other mistake.

argparse's own ``error`` prints the whole usage block and then ``evalkit run: error: ...``. evalkit's parser
prints ``Error: <what is wrong>`` and one hint line naming the help to read (as git does), then exits 2.
Sub-commands' parsers are made by ``add_subparsers``, which builds them with the class of the parser it
belongs to, so every level (``evalkit``, ``evalkit run``, ``evalkit spans eval``) uses this one.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

from evalkit.documents.redaction import redact
from evalkit.errors import terminal_safe

# argparse says "argument --fail-under: ..." / "argument -p/--parameter: ..."; the option alone is enough.
_ARGUMENT = re.compile(r"^argument (\S+): ")


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are ``Error: ...`` plus a ``see `PROG --help``` hint."""

    def error(self, message: str) -> NoReturn:
        text = _ARGUMENT.sub(r"\1: ", message)
        line = terminal_safe(redact(f"Error: {text}"))
        sys.stderr.write(f"{line}\nsee `{self.prog} --help`\n")
        sys.exit(2)


def missing_command(parser: argparse.ArgumentParser) -> NoReturn:
    """The error for ``evalkit`` or ``evalkit spans`` given no command: which commands there are."""
    names = [
        name
        for action in parser._actions  # noqa: SLF001 - argparse keeps its sub-parsers action only here
        if isinstance(action, argparse._SubParsersAction)  # noqa: SLF001
        for name in action.choices
    ]
    parser.error(f"no command given: choose one of {', '.join(names)}")


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, with unknown arguments reported by the sub-command they were given to, so
    the hint names that command's help (``see `evalkit run --help```), not the top level's."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        command = command_parser(parser, args)
        extras = _late_optional_positionals(command, args, extras)
        if extras:
            command.error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def _late_optional_positionals(
    parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]
) -> list[str]:
    """Give the leading non-option ``extras`` to ``parser``'s optional positionals still unset, in order;
    the extras left. argparse fills ``NAME [DOCUMENT]`` from the first run of positionals only, so
    ``evalkit align NAME --labels FILE DOCUMENT`` (the order the usage line reads) would leave DOCUMENT over."""
    for action in parser._actions:  # noqa: SLF001
        if not extras or extras[0].startswith("-"):
            break
        if action.option_strings or action.nargs != "?" or getattr(args, action.dest) != action.default:
            continue
        value = extras.pop(0)
        setattr(args, action.dest, parser._get_values(action, [value]))  # noqa: SLF001 (type and choices)
    return extras


def command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the deepest sub-command ``args`` names (``evalkit spans eval``'s for that command)."""
    while True:
        action = next(
            (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),  # noqa: SLF001
            None,
        )
        chosen = getattr(args, action.dest, None) if action else None
        if chosen not in (action.choices if action else {}):
            return parser
        parser = action.choices[chosen]
