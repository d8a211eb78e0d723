"""Reading JSON that users hand to evalkit: eval documents, span files, OTLP request bodies.

Python's ``json`` module accepts inputs that break evalkit further on, so this reader refuses them up front,
each with a message naming the place (a JSON path such as ``items[1].turns[0]``) and the fix:

* **too large**: a file is read up to a size limit (``EVALKIT_MAX_DOCUMENT_BYTES``, default 256 MiB) and never
  further, so a multi-GB file fails at once instead of exhausting memory; only regular files are read (a
  named pipe, ``/dev/zero`` or a socket is refused, never waited on: ``input_files``);
* **nested too deeply** (more than ``MAX_DEPTH`` levels of arrays and objects): deeper JSON overflows the
  parser's recursion (a ``RecursionError`` traceback) or, just under that, the copying and encoding later on;
* **duplicate keys** in one object: ``json`` silently keeps the last value, so the earlier one is lost data;
* **lone surrogate escapes** (``"\\ud800"``): a string Python holds but cannot write as UTF-8, so the
  document validates and the run then crashes writing its results;
* ``NaN`` / ``Infinity``: not JSON, and other tools cannot read them back; nor can they read a number so large
  that it becomes one (``1e999``), which is refused with its path;
* **integers of more than 4,300 digits**: Python refuses to convert them (its int-string limit), which would
  surface as a ``ValueError`` traceback (and, in the receiver, a 503 that exporters retry forever); refused
  with their path and the fix (write the value as a string).

``parse_json`` raises ``JsonInputError`` (a ``ValueError``) with a message that does not name the source, so
span loading can turn it into a per-line problem and the OTLP receiver into a 400; ``read_json`` reads a file
and raises ``DocumentError`` naming it. The checks cost one walk over the parsed containers.

This module is evalkit's one parser for JSON it did not write itself (issue 29): documents and span files, and
also JSON *text inside* them (attribute values such as ``gen_ai.output.messages`` or ``metadata``, event
bodies), judge answers, batch output lines and journals, labels, baselines, the online store's rows and HTTP
bodies. ``parse_json_text`` is the entry point for such strings: the same checks, plus a size limit and the
place named in the message; ``json_or_text`` reads a value that may or may not hold JSON (an attribute) and
keeps the text when it does not or is refused. ``RecursionError``, ``OverflowError`` and Python's int-digit
``ValueError`` never escape any of them: each becomes a ``JsonInputError``. ``tests/test_one_parser.py`` fails
on a ``json.load``/``json.loads`` anywhere else in the package outside its short, commented allowlist.

The parser is the standard library's, not orjson (a runtime dependency, faster on its own): orjson keeps the
last of repeated keys and turns integers beyond 64 bits into floats without a word, so a fast path would need a
second pass over the text and the parsed value to find both, which costs more than the parse saves (issue 20),
and its traced peak on a 27 MB document was 390 MB against 87 MB here. Memory: the file is read into a buffer
of its own size and its bytes are dropped once decoded, so the parse holds one copy of the text.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from evalkit.documents.files.input_files import open_input
from evalkit.errors import DocumentError, EvalkitError, shown

#: Deepest nesting of arrays and objects accepted. Eval documents and OTLP requests need about ten levels;
#: the limit leaves room for free-form ``extensions`` and attribute values while keeping every later
#: recursive step (copying, schema checks, encoding) far from Python's recursion limit.
MAX_DEPTH = 100

#: Environment variable holding the largest file evalkit reads as a document or span file.
MAX_BYTES_ENV = "EVALKIT_MAX_DOCUMENT_BYTES"
DEFAULT_MAX_BYTES = 256 * 1024 * 1024

#: How much of a user's value an error message quotes.
QUOTE_LIMIT = 60

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_SIZE = re.compile(r"\s*(\d+)\s*([a-z]*)\s*", re.IGNORECASE)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: A ``\uD800``-``\uDFFF`` escape anywhere in the text (a cheap test: most documents have none).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class JsonInputError(ValueError):
    """JSON the reader refuses; the message says where and why, but not which file (the caller adds it).

    ``syntax`` is True when the text is not JSON at all, as opposed to JSON evalkit refuses to keep.
    """

    syntax = False
    #: The ``json.JSONDecodeError`` behind a malformed-JSON error (its ``msg``, ``lineno``, ``colno``).
    decode_error: json.JSONDecodeError | None = None
    #: The repeated key behind a duplicate-key error (judge answers name it in their own words).
    duplicate_key: str | None = None


#: Python's limit on the digits of an integer converted from text (``sys.get_int_max_str_digits``).
_INT_DIGITS = 4300


class _Number:
    """A number token evalkit refuses (too many digits, or a float beyond the finite range), kept in place so
    that the locating walk can name its path."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def problem(self, where: str) -> str:
        if "." in self.text or "e" in self.text or "E" in self.text:
            return (
                f"the number {quote(self.text)} at {where} is too large for a finite value (it would become "
                "Infinity, which is not JSON); write a smaller number, or the value as a string"
            )
        return (
            f"the integer at {where} has {len(self.text.lstrip('-')):,} digits, more than the {_INT_DIGITS:,} "
            "evalkit reads; write it as a string"
        )


def _float_hook(found: list):
    """``parse_float`` keeping a float that overflows to infinity (``1e999``) as a ``_Number`` noted in
    ``found``. Floats are the rarer numbers in evalkit's inputs (times and counts are integers), so a Python call
    per float costs little; integers keep json's C fast path and are checked only when one is refused."""

    def parse_float(text: str) -> Any:
        value = float(text)
        if value in (_INF, -_INF):
            marked = _Number(text)
            found.append(marked)
            return marked
        return value

    return parse_float


_INF = float("inf")


def _int_hook(found: list):
    """``parse_int`` keeping an integer over the digit limit as a ``_Number`` noted in ``found`` (used only to
    locate the integer Python refused)."""

    def parse_int(text: str) -> Any:
        if len(text) - text.startswith("-") > _INT_DIGITS:
            marked = _Number(text)
            found.append(marked)
            return marked
        return int(text)

    return parse_int


class _Object(dict):
    """An object that had a key more than once: ``duplicates`` lists the keys, in order of appearance."""

    __slots__ = ("duplicates",)


def _hook(found: list) -> Any:
    """An ``object_pairs_hook`` building plain dicts; an object with a repeated key becomes an ``_Object``
    naming the keys, and ``found`` gets an entry so the (otherwise skipped) locating walk runs."""

    def object_pairs(pairs: list[tuple[str, Any]]) -> dict:
        result = dict(pairs)
        if len(result) == len(pairs):
            return result
        marked = _Object(result)
        seen: set[str] = set()
        marked.duplicates = [key for key, _ in pairs if key in seen or seen.add(key)]
        found.append(marked)
        return marked

    return object_pairs


def _refuse_constant(name: str) -> Any:
    """Reject ``NaN``, ``Infinity`` and ``-Infinity``: they are not JSON and other tools cannot read them."""
    raise _error(f"malformed JSON: {name} is not valid JSON (use a number or null)", syntax=True)


# --------------------------------------------------------------------------------------------------- parsing


def parse_json(text: str | bytes) -> Any:
    """Parse JSON text, refusing what ``json`` would accept but evalkit cannot keep (see the module doc).

    Raises ``JsonInputError``; its ``syntax`` is True when the text is not JSON at all (malformed, or nested
    beyond what the parser can follow), which span loading takes as a cue to try the text as JSON lines.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _error(
                f"is not UTF-8 text (invalid byte at offset {exc.start}); save it as UTF-8"
            ) from None
    # A lone surrogate needs an escape: the plain test first (most texts have none), the pattern only then.
    surrogates = "\\u" in text and bool(_SURROGATE_ESCAPE.search(text))
    # A short text with no more brackets than MAX_DEPTH cannot nest deeper (attribute values, answers, lines):
    # two counts in C instead of the walk, which is most of the cost of parsing such a text.
    shallow = len(text) <= _SHORT and text.count("[") + text.count("{") <= MAX_DEPTH
    found: list = []
    hooks = {
        "object_pairs_hook": _hook(found),
        "parse_constant": _refuse_constant,
        "parse_float": _float_hook(found),
    }
    try:
        try:
            value = json.loads(text, **hooks)
        except ValueError as exc:
            if isinstance(exc, json.JSONDecodeError) or "digits" not in str(exc):
                raise
            found.clear()  # Python's int-string limit: parse again, keeping the integer to name its path
            value = json.loads(text, **hooks, parse_int=_int_hook(found))
    except json.JSONDecodeError as exc:
        error = _error(f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", syntax=True)
        error.decode_error = exc
        raise error from None
    except RecursionError:
        raise _error(_too_deep(()), syntax=True) from None
    del text  # the parsed value is all that is needed now (the text is as large as the file)
    if found or surrogates or (not shallow and _depth_exceeded(value)):
        _locate(value, surrogates)
    return value


#: The most characters ``parse_json_text`` reads by default: JSON text inside a value (an attribute, a line, a
#: row, an answer) is far smaller than a document; a longer one is refused before it is parsed.
TEXT_LIMIT = 8 * 1024 * 1024


def parse_json_text(text: str | bytes, *, where: str = "", limit: int | None = TEXT_LIMIT) -> Any:
    """``parse_json`` for JSON held in a string evalkit was given (an attribute value, an event body, a batch
    output line, a journal, a database row, a judge's or an HTTP server's answer).

    Text longer than ``limit`` characters (bytes for ``bytes``) is refused before it is parsed (``None``: no
    limit); ``where`` (``"attribute 'metadata'"``, ``"line 3"``) starts the message of the ``JsonInputError``,
    whose ``syntax`` and ``duplicate_key`` are kept.
    """
    try:
        if limit is not None and len(text) > limit:
            raise _error(
                f"is {len(text):,} characters long, more than the {limit:,} evalkit reads as JSON text"
            )
        return parse_json(text)
    except JsonInputError as exc:
        if not where:
            raise
        error = _error(f"{where}: {exc}", syntax=exc.syntax)
        error.decode_error, error.duplicate_key = exc.decode_error, exc.duplicate_key
        raise error from None


def json_or_text(value: Any) -> Any:
    """``value`` parsed when it is a string holding a JSON object or array that ``parse_json_text`` accepts;
    anything else as it is (a plain string, a number, or JSON text refused: too deep, too long, NaN, repeated
    keys, so a hostile attribute is read as the text it is, never as a traceback)."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("[", "{"):
            try:
                return parse_json_text(text)
            except JsonInputError:
                return value
    return value


def _error(message: str, *, syntax: bool = False) -> JsonInputError:
    error = JsonInputError(message)
    error.syntax = syntax
    return error


def _object_name(path: tuple) -> str:
    return format_path(path) if path else "the top-level object"


def _too_deep(path: tuple) -> str:
    where = f" at {format_path(path)}" if path else ""
    return (
        f"nested more than {MAX_DEPTH} levels deep{where}; evalkit reads at most {MAX_DEPTH} levels of "
        "arrays and objects (flatten the data or store it as a string)"
    )


#: Texts up to this many characters have their brackets counted before the depth walk (``parse_json``).
_SHORT = 64 * 1024
_CONTAINERS = (dict, list, _Object)
_CONTAINER_SET = frozenset(_CONTAINERS)


def _depth_exceeded(value: Any) -> bool:
    """True when ``value`` nests more than ``MAX_DEPTH`` levels (iterative: the depth is the point).

    One level at a time: each level's children are gathered and their types read in C (``map``), so a level of
    only strings and numbers (the values of a document's items) costs no Python step per value.
    """
    if type(value) not in _CONTAINERS:
        return False
    level, depth = [value], 1
    while level:
        if depth > MAX_DEPTH:
            return True
        lists = [node for node in level if type(node) is list]
        dicts = [node for node in level if type(node) is not list] if len(lists) < len(level) else []
        children = list(chain(chain.from_iterable(lists), chain.from_iterable(map(dict.values, dicts))))
        if _CONTAINER_SET.isdisjoint(map(type, children)):
            return False
        level = [child for child in children if type(child) in _CONTAINER_SET]
        depth += 1
    return False


def _locate(value: Any, surrogates: bool) -> None:
    """Walk with paths and raise for the first problem found: too deep, a repeated key, a lone surrogate.

    Only runs when there is one to find (or escapes that may be surrogates), so keeping paths costs nothing
    on ordinary documents.
    """
    if type(value) not in _CONTAINERS:
        if surrogates and isinstance(value, str):
            _check_string(value, ())
        if type(value) is _Number:
            raise _error(value.problem("the top level"))
        return
    stack: list[tuple[Any, tuple]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            raise _error(_too_deep(path))
        if type(node) is _Object:
            key = node.duplicates[0]
            error = _error(
                f"duplicate key {quote(key)} in {_object_name(path)}: JSON keeps only the last value, so the "
                "other would be lost; keep one (or rename the other)"
            )
            error.duplicate_key = key
            raise error
        children = list(node.items() if isinstance(node, dict) else enumerate(node))
        for step, child in children:
            if type(child) is _Number:
                raise _error(child.problem(format_path((*path, step))))
        if surrogates:
            for step, child in children:
                if type(step) is str:
                    _check_string(step, path, key=True)
                if type(child) is str:
                    _check_string(child, (*path, step))
        for step, child in reversed(children):  # popped in document order
            if type(child) in _CONTAINERS:
                stack.append((child, (*path, step)))


def _check_string(text: str, path: tuple, *, key: bool = False) -> None:
    match = _LONE_SURROGATE.search(text)  # surrogates left in a decoded str are always unpaired
    if match is None:
        return
    what = f"the key {quote(text)} of {_object_name(path)}" if key else format_path(path)
    escape = f"\\u{ord(match.group()):04x}"
    raise _error(
        f"{what} holds a lone surrogate escape ({escape}): it is not a character and cannot be written as "
        "UTF-8; remove it, or write the character itself (or a complete \\ud83d\\ude00-style pair)"
    )


# --------------------------------------------------------------------------------------------------- reading


def max_document_bytes() -> int:
    """The size limit for documents and span files, from ``EVALKIT_MAX_DOCUMENT_BYTES`` (default 256 MiB).

    The value is bytes, optionally with a unit: ``500MB``, ``2GB`` (powers of 1000) or ``512MiB``, ``1GiB``
    (powers of 1024).
    """
    raw = os.environ.get(MAX_BYTES_ENV, "")
    if not raw.strip():
        return DEFAULT_MAX_BYTES
    match = _SIZE.fullmatch(raw)
    unit = match.group(2).lower() if match else None
    if unit not in _UNITS or int(match.group(1)) == 0:
        raise EvalkitError(
            f"{MAX_BYTES_ENV}={quote(raw)} is not a size; write a number of bytes, optionally with a unit "
            "(e.g. 500MB, 2GB, 512MiB)"
        )
    return int(match.group(1)) * _UNITS[unit]


def read_limited(path: str | Path, limit: int | None = None, *, what: str = "file") -> bytes:
    """The bytes of ``path``, refusing (``DocumentError``) anything larger than ``limit`` without reading it all.

    Only a regular file is read (:func:`evalkit.documents.files.input_files.open_input`): a named pipe, a device or a
    socket is refused, never waited on. ``what`` names the kind of file in messages (``span file``,
    ``document``).
    """
    limit = max_document_bytes() if limit is None else limit
    source = shown(path)
    with open_input(path, what) as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            data = _read_up_to(handle, size, limit) if size <= limit else b""
        except OSError as exc:
            raise DocumentError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    if size > limit or len(data) > limit:
        raise DocumentError(too_large(source, limit, size if size > limit else None))
    return data


def _read_up_to(handle, size: int, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``handle``, whose size was ``size``: ``read(n)`` allocates ``n`` bytes up
    front, so asking for the limit (256 MiB) would cost that much for any file; a file that grew since
    ``fstat`` is read on (up to the limit, which then refuses it)."""
    data = handle.read(size + 1)
    if len(data) > size and len(data) <= limit:
        data += handle.read(limit + 1 - len(data))
    return data


def too_large(source: str, limit: int, size: int | None = None) -> str:
    """The message for a file over the size limit (``size`` when known), saying how to raise the limit."""
    actual = f" ({_size(size)})" if size else ""
    wanted = max(size or 0, limit * 4)
    suggestion = f"{-(-wanted // 10**9)}GB" if wanted >= 10**9 else f"{-(-wanted // 10**6)}MB"
    return (
        f"{source}: is larger than the limit of {_size(limit)}{actual}; split it, or raise the limit with "
        f"{MAX_BYTES_ENV} (e.g. {MAX_BYTES_ENV}={suggestion})"
    )


def _size(count: int) -> str:
    """``268435456`` -> ``256 MiB``, ``2000000`` -> ``2 MB``; other sizes in bytes."""
    units = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3))
    for unit, factor in units:
        if count >= factor and count % factor == 0:
            return f"{count // factor} {unit}"
    return f"{count:,} bytes"


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, turning every way it can fail into a ``DocumentError`` that names the file.

    A UTF-8 byte-order mark is tolerated (editors on Windows add one); anything else that is not UTF-8, files
    over the size limit and everything ``parse_json`` refuses are errors.
    """
    try:
        return parse_json(read_limited(path))  # no name holds the bytes: parse_json drops them once decoded
    except JsonInputError as exc:
        raise DocumentError(f"{shown(path)}: {exc}") from None


def read_json_and_digest(path: str | Path) -> tuple[Any, str]:
    """``read_json`` that also gives the sha256 of the bytes it parsed: a run's provenance names the file as it
    was read and scored, not as it is when the results are written (it may have changed meanwhile)."""
    import hashlib

    held = [read_limited(path)]
    digest = hashlib.sha256(held[0]).hexdigest()
    try:
        return parse_json(held.pop()), digest  # the list's name is dropped: parse_json holds the only bytes
    except JsonInputError as exc:
        raise DocumentError(f"{shown(path)}: {exc}") from None


# ------------------------------------------------------------------------------------------------- wording


def format_path(path: Sequence) -> str:
    """``("items", 1, "turns", 0)`` -> ``items[1].turns[0]``; the root is ``(document)``.

    Long paths keep their first and last steps (a path 100 levels deep would fill the screen).
    """
    steps = list(path)
    if len(steps) > 12:
        return _join(steps[:6]) + "..." + _join(steps[-4:], tail=True)
    return _join(steps) or "(document)"


def _join(steps: Sequence, tail: bool = False) -> str:
    text = ""
    for step in steps:
        if isinstance(step, int):
            text += f"[{step}]"
        elif _IDENTIFIER.match(step):
            text += f".{clip(step)}" if text or tail else clip(step)
        else:
            text += f"[{json.dumps(clip(step), ensure_ascii=False)}]"
    return text


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was (a 50 MB value must not reach stderr)."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}…({len(text):,} characters)"


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """A user's value as it is shown in messages: strings quoted, others as JSON, both cut to ``limit``."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return repr(value[: limit - 1]) + f"…({len(value):,} characters)"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
