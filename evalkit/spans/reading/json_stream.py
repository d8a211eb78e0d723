"""JSON values one after another in one text, neither JSON lines nor an array: what the OpenTelemetry Python
SDK's ``ConsoleSpanExporter`` and ``ConsoleLogExporter`` print (pretty-printed ``to_json()`` objects, each
followed by a newline).

``split_stream`` finds each value's extent and parses it with the shared JSON reader
(``evalkit.documents.json_input.parse_json``: duplicate keys, excessive nesting and lone surrogates refused
per value). A value that is not valid JSON is reported with its line, and reading resumes at the next line
that opens an object in column 1 (where the exporter starts each one), so one torn object costs only itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from evalkit.documents.json_input import JsonInputError, parse_json

_decoder = json.JSONDecoder()
_SPACE = re.compile(r"\s*")
_NEXT_OBJECT = re.compile(r"^[{\[]", re.M)


def looks_like_stream(text: str) -> bool:
    """Whether a text that is not one JSON document is a stream of values rather than JSON lines: its first
    line is not a JSON value of its own (a pretty-printed object opens with ``{`` alone on a line)."""
    first = text.lstrip().split("\n", 1)[0]
    try:
        parse_json(first)
    except JsonInputError as exc:
        if (
            exc.decode_error is None
        ):  # one value on the line that evalkit refuses: JSON lines, refused per line
            return False
        return first.strip().startswith(("{", "["))
    return False


def split_stream(text: str) -> Iterator[tuple[int, Any | JsonInputError]]:
    """``(line, value)`` for each value (or ``(line, JsonInputError)`` for one that cannot be read)."""
    position = _SPACE.match(text, 0).end()
    while position < len(text):
        line = text.count("\n", 0, position) + 1
        try:
            _, end = _decoder.raw_decode(text, position)
        except (ValueError, RecursionError) as exc:
            yield line, _error(exc)
            resume = _NEXT_OBJECT.search(text, text.find("\n", position) + 1 or len(text))
            if resume is None:
                return
            position = resume.start()
            continue
        try:
            yield line, parse_json(text[position:end])
        except JsonInputError as exc:
            yield line, exc
        position = _SPACE.match(text, end).end()


def _error(exc: ValueError) -> JsonInputError:
    if isinstance(exc, RecursionError):
        error = JsonInputError("nested more than 100 levels deep; evalkit reads at most 100 levels")
        error.syntax = False
        return error
    error = JsonInputError(f"not valid JSON ({getattr(exc, 'msg', exc)})")
    error.syntax = True
    return error
