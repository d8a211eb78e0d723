"""``evalkit validate DOC [DOC ...]``: check eval documents against the schema exactly as written on disk.

Unlike ``evalkit run`` and ``evalkit load``, which upgrade legacy forms (a bare JSON array of items, the
``prompts`` / ``expected_responses`` lists, a document without ``schemaVersion``) in memory, this command judges the file itself: it is what CI runs to
keep committed documents valid for every tool that reads them.

Output: ``OK <path>`` on stdout for each valid file; for an invalid or unreadable one, ``Error: ...`` with
every problem listed, on stderr. Exit code 0 when all files are valid, 2 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalkit.documents.json_input import read_json
from evalkit.documents.versions import LATEST_VERSION
from evalkit.errors import DocumentError, shown, terminal_safe

_UNREAD = object()


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``validate`` subcommand to the ``evalkit`` parser."""
    parser = subparsers.add_parser(
        "validate",
        help="check eval documents against the schema, as written",
        description=(
            "Check each eval document against the evalkit schema (v1) exactly as written, reporting every "
            "problem at once. Exit code 0 when all are valid, 2 otherwise."
        ),
    )
    parser.add_argument("documents", nargs="+", metavar="DOC", help="eval document (.json) to check")
    parser.set_defaults(func=main)
    return parser


def main(args: argparse.Namespace) -> int:
    """Validate every document named in ``args.documents``; return the exit code (0 or 2)."""
    from evalkit.documents.destinations import refuse_destinations
    from evalkit.documents.validation import (
        validate_document,  # jsonschema: not imported with the command line
    )

    status = 0
    for path in args.documents:
        doc: Any = _UNREAD
        try:
            doc = read_json(path)
            refuse_destinations(doc, path)
            validate_document(doc, path)
        except DocumentError as exc:
            status = max(status, exc.exit_code)
            print(terminal_safe(f"Error: {exc}"), file=sys.stderr)
            note = _legacy_note(doc)
            if note:
                print(terminal_safe(f"  note: {note}"), file=sys.stderr)
        else:
            print(f"OK {shown(path)}")
    return status


def _legacy_note(doc: Any) -> str | None:
    """Explain, for a legacy form that ``run``/``load`` accept, why it is still refused here and how to fix it."""
    if isinstance(doc, list):
        return (
            "this is the legacy bare-array form; `evalkit run` and `evalkit load` upgrade it in memory, "
            f'but the file itself needs {{"schemaVersion": "{LATEST_VERSION}", "items": [...]}}'
        )
    if isinstance(doc, dict) and "items" not in doc and isinstance(doc.get("prompts"), list):
        return (
            "this is the legacy 'prompts' / 'expected_responses' form; `evalkit run` and `evalkit load` "
            "upgrade it in memory, but the file itself needs "
            f'{{"schemaVersion": "{LATEST_VERSION}", "items": [{{"prompt": ..., "expected_response": ...}}]}}'
        )
    if isinstance(doc, dict) and "schemaVersion" not in doc:
        return (
            f"`evalkit run` and `evalkit load` read a document without schemaVersion as {LATEST_VERSION} "
            "(upgraded in memory); add it to make the file itself valid"
        )
    return None
