"""results.json's items encoded by orjson, in the bytes ``json.dumps(item, ensure_ascii=False)`` writes
(issue 20): the same file at about a third of the json encoder's time.

orjson (a runtime dependency; about ten times faster than the standard encoder) writes compact separators
(``,`` and ``:``), and a few values differently: floats below 1e-4 or from 1e16 on (``1e-5`` or ``0.00001``
for 1e-05, ``1e16`` for 1e+16), NaN and infinities as ``null``, and it refuses integers past 64 bits, keys
that are not text, lone surrogates and subclasses (``OPT_PASSTHROUGH_SUBCLASS``). So a chunk of items is
encoded item by item and joined, and numpy then finds, in one pass over the bytes, which characters lie
outside strings (a ``"`` not escaped by a backslash opens or closes one): a space goes after each ``,`` and
``:`` there, and an item is encoded again by ``json`` when, outside its strings, it has ``null`` (None or a
non-finite float), a digit before ``e`` (an exponent), ``0.0000`` after a non-digit, or when orjson refused
it. Every other token (strings with their escapes, integers, other floats, true/false) is the same in both
(shortest round-trip digits), so the result equals ``json``'s bytes; tests compare both on hostile values.

May import: nothing from evalkit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

import numpy as np

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a runtime dependency; json alone still writes the file
    orjson = None

__all__ = ["encode_items", "json_encoder"]

#: Items encoded and checked together: about 1.5 MB of text at a time.
CHUNK_ITEMS = 2_000

_OPTIONS = 0 if orjson is None else orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
#: Joins the items of a chunk while its separators are spaced (a control byte: never in orjson's output).
_ITEM_END = b"\3"
_QUOTE, _BACKSLASH, _COMMA, _COLON, _E, _ZERO = b'"\\,:e0'


def json_encoder():
    """The standard encoder of results.json's items (``ensure_ascii=False``, no cycle check: a document is a
    tree), returning text."""
    return json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def encode_items(items: Iterable) -> Iterator[list[bytes]]:
    """Each chunk of ``items`` as a list of UTF-8 encodings, one per item, equal to ``json_encoder()``'s.

    An item that is ``bytes`` is taken as already encoded (:mod:`evalkit.documents.encoding.json_rows`) and kept."""
    encode = json_encoder()
    chunk: list = []
    for item in items:
        chunk.append(item)
        if len(chunk) == CHUNK_ITEMS:
            yield _encoded(chunk, encode)
            chunk = []
    if chunk:
        yield _encoded(chunk, encode)


def _encoded(items: list, encode) -> list[bytes]:
    todo = [index for index, item in enumerate(items) if item.__class__ is not bytes]
    if len(todo) < len(items):  # some items came encoded: encode the others only
        if todo:
            for index, data in zip(todo, _encoded([items[index] for index in todo], encode)):
                items[index] = data
        return items
    if orjson is None:
        return [encode(item).encode("utf-8") for item in items]
    parts, refused = [], []
    for index, item in enumerate(items):
        try:
            parts.append(orjson.dumps(item, option=_OPTIONS))
        except TypeError:  # orjson.JSONEncodeError: json decides (it writes the item or raises as before)
            parts.append(b"{}")
            refused.append(index)
    spaced, odd = _spaced(_ITEM_END.join(parts))
    out = spaced.split(_ITEM_END)
    if len(odd):
        ends = np.cumsum(np.fromiter(map(len, parts), dtype=np.intp, count=len(parts)) + 1)
        refused.extend(np.unique(np.searchsorted(ends, odd, side="right")).tolist())
    for index in set(refused):
        out[index] = encode(items[index]).encode("utf-8")
    return out


def _spaced(data: bytes) -> tuple[bytes, np.ndarray]:
    """``data`` (compact encodings joined by ``_ITEM_END``) with a space after each ``,`` and ``:`` outside
    strings, and the positions in ``data`` of tokens orjson may write differently (:func:`_odd_tokens`)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    plain = np.frombuffer(
        data.replace(b"\\\\", b"\0\0"), dtype=np.uint8
    )  # escaped backslashes out of the way
    quotes = np.flatnonzero(plain == _QUOTE)
    quotes = quotes[plain[quotes - 1] != _BACKSLASH]  # \" is a character of a string, not its end
    # (every item starts with "{", so quotes - 1 never wraps round to the last byte)
    odd = _odd_tokens(data, raw)
    odd = odd[np.searchsorted(quotes, odd) % 2 == 0]  # an even number of quotes before: outside strings
    separators = np.flatnonzero((raw == _COMMA) | (raw == _COLON))
    inside = separators[np.searchsorted(quotes, separators) % 2 == 1]
    if len(inside):  # park the separators inside strings on bytes orjson never writes (it escapes controls)
        marked = raw.copy()
        marked[inside] = np.where(raw[inside] == _COMMA, 1, 2)
        data = marked.tobytes()
    data = data.replace(b",", b", ").replace(b":", b": ")
    if len(inside):
        data = data.replace(b"\1", b",").replace(b"\2", b":")
    return data, odd


def _odd_tokens(data: bytes, raw: np.ndarray) -> np.ndarray:
    """Positions where orjson's token may differ from json's, if outside a string: ``null`` (None or NaN), an
    ``e`` after a digit (an exponent), ``0.0000`` (a float below 1e-4 without an exponent). ``null`` and
    ``0.0000`` are rare in text, so ``bytes.find`` looks for them; ``e`` is common, so numpy does."""
    found = []
    for token in (b"null", b"0.0000"):
        at = data.find(token)
        while at >= 0:
            found.append(at)
            at = data.find(token, at + 1)
    letters = np.flatnonzero(raw == _E)
    letters = letters[(raw[letters - 1] - _ZERO) < 10]  # uint8: bytes below "0" wrap round to large values
    return np.concatenate((np.array(found, dtype=np.intp), letters))
