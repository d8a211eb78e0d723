"""``evalkit run --evaluator NAME[=OPTIONS]``: evaluators added to every item, as ``evaluate(evaluators=)`` adds them.

Why: a document's evaluator maps say what each item asks for; trying one more evaluator on a whole run (a new
custom judge, a built-in the document does not name) should not mean editing the document. Each
``--evaluator`` names a built-in or a custom evaluator (from ``--custom-dir``, else ``./custom-evaluators``)
and may carry its evaluator-map entry as JSON: ``--evaluator 'PartialMatch={"threshold": 0.8}'``. The entry
replaces an item's own entry of that name, as a document's ``default_evaluators`` entry does under ``extend``.

May import: ``evalkit.errors``, ``evalkit.documents``.
"""

from __future__ import annotations

import argparse

from evalkit.documents.json_input import JsonInputError, parse_json_text

#: What ``--custom-dir`` means, shared by its help and the text around it.
CUSTOM_DIR_HELP = (
    "custom evaluators folder (default: ./custom-evaluators); it replaces that folder, it is not added to it: "
    "evaluators in ./custom-evaluators are not found when --custom-dir names another folder"
)


def add_evaluator_option(parser: argparse.ArgumentParser) -> None:
    """``--evaluator NAME[=JSON]``, repeatable."""
    parser.add_argument(
        "--evaluator",
        metavar="NAME[=JSON]",
        action="append",
        type=parse_evaluator,
        dest="extra_evaluators",
        help="run this evaluator on every item too (repeatable), a built-in or a custom one; "
        'NAME={"threshold": 0.8, "options": {...}} sets its evaluator-map entry; an LLM judge may take a '
        '"jury": ["model-a", "model-b"] (evalkit.evaluators.jury)',
    )


def parse_evaluator(text: str) -> tuple[str, dict]:
    """``NAME`` or ``NAME=JSON object`` as ``(name, entry)``."""
    name, sep, options = text.partition("=")
    name = name.strip()
    if not name:
        raise argparse.ArgumentTypeError(
            f"{text!r} names no evaluator: write --evaluator NAME or --evaluator 'NAME={{\"threshold\": 0.8}}'"
        )
    if not sep:
        return name, {}
    try:
        entry = parse_json_text(options)
    except JsonInputError as exc:
        why = (
            f"{exc.decode_error.msg} at character {exc.decode_error.pos + 1}"
            if exc.decode_error
            else str(exc)
        )
        raise argparse.ArgumentTypeError(
            f"the options of --evaluator {name} are not JSON ({why}): "
            f"write e.g. --evaluator '{name}={{\"threshold\": 0.8}}'"
        ) from None
    if not isinstance(entry, dict):
        raise argparse.ArgumentTypeError(
            f'the options of --evaluator {name} must be a JSON object such as {{"threshold": 0.8}}, '
            f"not {options!r}"
        )
    return name, entry


def extra_evaluators(args) -> dict[str, dict] | None:
    """The ``evaluators=`` mapping for ``evaluate`` (None when no ``--evaluator`` was given); a name given twice
    keeps its last entry."""
    given = getattr(args, "extra_evaluators", None)
    if not given:
        return None
    return dict(given)
