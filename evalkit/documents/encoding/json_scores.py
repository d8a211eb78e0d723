"""results.json's ``scores`` objects encoded column by column (issue 20), and the column encoders that
:mod:`evalkit.documents.encoding.json_rows` shares: the bytes ``json.dumps(value, ensure_ascii=False)`` writes for each
value, by the standard encoder's own functions (``encode_basestring`` for text, ``float.__repr__``, ...), whole
columns of text, finite floats, booleans or integers at C speed. (Not by orjson here: each of its results
holds a 4 KB buffer, 20 MB for a chunk of 5,000 cells.)

An evaluator's entries of a chunk of rows are put together from its columns (:func:`evalkit.documents.results.
score_chunks`) the way :func:`evalkit.documents.results.collection` builds them as dicts: the score field,
``result``, ``threshold``, ``reason``, then the details' fields; an errored entry ``result``, ``error`` and
``code``. An entry this module does not cover exactly (details that would rewrite the entry's own fields or are
no dict of text keys, a value an encoder refuses) is None, and so is its row's scores object: the caller builds
it as a dict, as before, so its bytes (or its error) stay the same.

May import: ``evalkit.documents.encoding.json_items`` and ``results`` (its error constants), the standard library.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring

from evalkit.documents.encoding.json_items import encode_items, json_encoder
from evalkit.documents.results import ERROR_PREFIX, UPSTREAM_CODES

__all__ = ["encode_column", "encode_one", "encoded_collections"]

_BOOLS = {True: b"true", False: b"false"}
_JSON = json_encoder()
_REFUSED = (TypeError, ValueError, OverflowError, RecursionError)  # UnicodeEncodeError is a ValueError


def encode_one(value) -> bytes | None:
    """``value`` as the standard encoder writes it, or None where that raises (the dict way raises it)."""
    try:
        if value.__class__ is str:
            return encode_basestring(value).encode("utf-8")
        return _JSON(value).encode("utf-8")
    except _REFUSED:
        return None


def encode_column(values: list) -> list[bytes | None]:
    """Each value's JSON bytes (None where it cannot be encoded). A column of few distinct texts or numbers
    encodes each distinct value once; dicts that all have the same text keys are encoded key by key and lists
    element by element, a column at a time; other containers in chunks by orjson
    (:func:`evalkit.documents.encoding.json_items.encode_items`, which raises what the standard encoder raises)."""
    kinds = set(map(type, values))
    if kinds == {dict}:
        return _dicts(values)
    if kinds == {list}:
        return _lists(values)
    if kinds <= {dict, list}:
        return _containers(values)
    if len(kinds) == 1 and (kind := next(iter(kinds))) in (str, int, float) and len(values) > 8:
        distinct = set(values)  # texts and integers are equal only when they are the same; floats: see below
        if len(distinct) * 4 <= len(values) and (kind is not float or 0.0 not in distinct):  # -0.0 == 0.0
            encoded = dict(zip(distinct, _scalars(list(distinct), kinds)))
            return list(map(encoded.__getitem__, values))
    if len(kinds) > 1 and kinds <= _SCALARS:  # e.g. scores with NaN where a row has none: kind by kind
        return _by_kind(values)
    return _scalars(values, kinds)


_SCALARS = frozenset({str, float, bool, int, type(None)})
_NON_FINITE = {b"nan": b"NaN", b"inf": b"Infinity", b"-inf": b"-Infinity"}


def _by_kind(values: list) -> list[bytes | None]:
    positions: dict[type, list[int]] = {}
    for index, value in enumerate(values):
        positions.setdefault(value.__class__, []).append(index)
    out: list = [None] * len(values)
    for kind, indexes in positions.items():
        encoded = (
            [b"null"] * len(indexes) if kind is type(None) else encode_column([values[i] for i in indexes])
        )
        for index, data in zip(indexes, encoded):
            out[index] = data
    return out


def _scalars(values: list, kinds: set) -> list[bytes | None]:
    try:
        if kinds == {str}:  # the encoder escapes line breaks: one join and split encodes them all
            return "\n".join(map(encode_basestring, values)).encode("utf-8").split(b"\n")
        if kinds == {float}:  # repr, as the encoder writes floats, but NaN and infinities as it spells them
            encoded = ",".join(map(float.__repr__, values)).encode().split(b",")
            return encoded if all(map(math.isfinite, values)) else [_NON_FINITE.get(b, b) for b in encoded]
        if kinds == {bool}:
            return list(map(_BOOLS.__getitem__, values))
        if kinds == {int}:
            return ",".join(map(int.__repr__, values)).encode().split(b",")
    except _REFUSED:  # a lone surrogate, an integer too long for text: value by value
        pass
    return [encode_one(value) for value in values]


def _containers(values: list) -> list[bytes | None]:
    return [data for chunk in encode_items(values) for data in chunk]


def _dicts(values: list[dict], start: bytes = b"{", end: bytes = b"}") -> list[bytes | None]:
    """Dicts as JSON objects; ``start`` and ``end`` replace the braces (``b", "`` and ``b""``: the fields
    alone, to follow other fields)."""
    shapes = set(map(tuple, values))
    if len(shapes) == 1:
        (keys,) = shapes
        if not keys:
            return [b"{}" if start == b"{" else b""] * len(values)
        if set(map(type, keys)) == {str}:
            columns = [encode_column([value[key] for value in values]) for key in keys]
            if not any(None in column for column in columns):
                template = start + b", ".join(key_bytes(key) + b"%b" for key in keys) + end
                return [template % row for row in zip(*columns)]
    return [start + data[1:-1] + end for data in _containers(values)]


def _lists(values: list[list]) -> list[bytes | None]:
    """Lists as JSON arrays: all their elements encoded as one column, then each row's joined."""
    if not any(values):
        return [b"[]"] * len(values)
    elements = encode_column([element for value in values for element in value])
    if None in elements:
        return _containers(values)
    out = []
    at = 0
    for size in map(len, values):
        out.append(b"[" + b", ".join(elements[at : at + size]) + b"]")
        at += size
    return out


def key_bytes(key) -> bytes:
    """A text key and its separator as the encoder writes them, ``%`` doubled for a ``%b`` template."""
    return json.dumps(key, ensure_ascii=False).encode("utf-8").replace(b"%", b"%%") + b": "


def encoded_collections(columns: list, count: int, with_codes: bool) -> list[bytes | None]:
    """Per row of a chunk (:func:`evalkit.documents.results.score_chunks`), its ``scores`` object's bytes, or
    None where the dict way must build it."""
    if not columns:
        return [b"{}"] * count
    keys = [key_bytes(key) for key, *_ in columns]
    entries = [_entries(field, limits, lists, with_codes) for _, field, limits, lists in columns]
    if not any(b"" in values or None in values for values in entries):  # every row has every entry
        template = b"{" + b", ".join(key + b"%b" for key in keys) + b"}"
        return [template % row for row in zip(*entries)]
    keys = [key.replace(b"%%", b"%") for key in keys]
    out = []
    for row in zip(*entries):
        if None in row:
            out.append(None)
            continue
        out.append(b"{" + b", ".join([key + entry for key, entry in zip(keys, row) if entry]) + b"}")
    return out


def _entries(field: str, thresholds, lists: list, with_codes: bool) -> list[bytes | None]:
    """One evaluator's entries of a chunk: bytes, ``b""`` where the row has none, None where the dict way
    must build it."""
    results, scores, limits, reasons, errors, codes, details = lists
    score_bytes = encode_column(_counts(scores, results) if field == "count" else scores)
    all_results = set(map(type, results)) == {str}
    result_bytes = encode_column(
        results if all_results else [r if r.__class__ is str else "" for r in results]
    )
    all_reasons = set(map(type, reasons)) == {str}
    reason_bytes = encode_column(
        reasons if all_reasons else [r if r.__class__ is str else "" for r in reasons]
    )
    threshold_bytes = None if thresholds is None else _thresholds(thresholds, limits)
    detail_bytes = _details(details, {field, "result", "threshold", "reason"})
    plain = all_results and "error" not in results and all_reasons
    template = b"{" + key_bytes(field) + b'%b, "result": %b'
    template += b"" if thresholds is None else b', "threshold": %b'
    template += b', "reason": %b%b}' if plain else b"%b%b}"
    columns = [score_bytes, result_bytes, *([] if thresholds is None else [threshold_bytes])]
    if plain and not any(None in column for column in (*columns, reason_bytes, detail_bytes)):
        return [template % row for row in zip(*columns, reason_bytes, detail_bytes)]
    out: list = [b""] * len(results)  # b"": no entry (the row has no result)
    written = []
    for row, result in enumerate(results):
        if result.__class__ is str:
            if result == "error":
                out[row] = _error_entry(errors[row], codes[row], with_codes)
            else:
                written.append(row)
    if plain:
        parts = [reason_bytes]
    else:  # the reason only where it is text; the template has a %b for it
        parts = [[_reason(data, text) for data, text in zip(reason_bytes, reasons)]]
    picked = [[column[row] for row in written] for column in (*columns, *parts, detail_bytes)]
    for row, values in zip(written, zip(*picked)):
        out[row] = None if None in values else template % values
    return out


def _reason(data: bytes | None, text) -> bytes | None:
    if text.__class__ is not str:
        return b""
    return None if data is None else b', "reason": ' + data


def _counts(scores: list, results: list) -> list:
    """A ``count`` field's scores as the dict way writes them, ``int(score)``, where the row has an entry that
    is not an error (other rows' scores, NaN, are never written); a score ``int`` refuses is left to the
    dict way, which raises it."""
    try:
        return [int(score) for score in scores]
    except _REFUSED:
        pass
    out = []
    for score, result in zip(scores, results):
        try:
            out.append(int(score) if result.__class__ is str and result != "error" else 0)
        except _REFUSED:
            out.append(_UNWRITABLE)
    return out


_UNWRITABLE = object()  # encode_one gives None for it: the row goes the dict way


def _thresholds(thresholds: dict, limits: list) -> list[bytes | None]:
    """Each row's threshold as the dict way writes it (``thresholds.get(limit)``), each distinct one encoded
    once."""
    values = list(map(thresholds.get, limits))
    if len(set(map(type, values))) == 1 and type(values[0]) in (float, int):
        return encode_column(values)
    pairs = list(zip(map(type, values), values))
    encoded = {pair: encode_one(pair[1]) for pair in set(pairs)}
    return [encoded[pair] for pair in pairs]


def _error_entry(error, code, with_codes: bool) -> bytes | None:
    try:
        message = ERROR_PREFIX + (error or "unknown error")
    except TypeError:
        return None
    parts = [b'{"result": "error", "error": ', encode_one(message)]
    if with_codes and code:
        parts += (b', "code": ', encode_one(UPSTREAM_CODES.get(code, code)))
    parts.append(b"}")
    return None if None in parts else b"".join(parts)


def _details(details: list, own: set) -> list[bytes | None]:
    """Each row's details as the fields they add to the entry (``b""`` for none, else ``, "k": v, ...``): a
    dict of text keys other than the entry's ``own`` fields (``entry.update`` would rewrite those in place),
    else None."""
    if set(map(type, details)) == {dict} and len(shapes := set(map(tuple, details))) == 1:
        (keys,) = shapes
        if own.isdisjoint(keys) and set(map(type, keys)) <= {str}:
            return _dicts(details, b", ", b"")
    out: list = [b""] * len(details)
    picked = []
    for row, value in enumerate(details):
        if not value:
            continue
        if value.__class__ is not dict or not own.isdisjoint(value) or set(map(type, value)) != {str}:
            out[row] = None
            continue
        picked.append(row)
    for row, data in zip(picked, _dicts([details[row] for row in picked], b", ", b"")):
        out[row] = data
    return out
