"""results.json's plain items encoded column by column (issue 20): the bytes ``json.dumps(item,
ensure_ascii=False)`` writes for the item :func:`evalkit.documents.write_back.iter_items` would build, without
building it.

A row is *plain* when its item is fully determined by the case table's columns: not a thread's turn, no
retrieval executions, tool calls or extensions, and its ``source`` (the item as it was read, or None) holds no
field other than those the columns rewrite (``prompt``, ``expected_response``, ``context``, ``response``,
``citations``, ``scores``, ``status``, ``error``). Such an item's keys are the source's keys in their order,
then the keys ``iter_items`` adds, in the order it adds them; every value is one column's cell. So each column
is encoded once (:func:`evalkit.documents.encoding.json_scores.encode_column`), the item's key order is a ``%b``
template per shape (one for a whole chunk whose rows all have the same shape, the common case), and the scores
objects come from :func:`evalkit.documents.encoding.json_scores.encoded_collections`. A row this module does not cover
exactly (a value either encoder refuses, ...) is None: the caller builds that item as a dict and encodes it as
before, so its bytes, or its error, stay the same.

May import: ``evalkit.documents.encoding.json_scores``, pandas' ``NA``, the standard library.
"""

from __future__ import annotations

from operator import itemgetter

from pandas import NA

from evalkit.documents.encoding.json_scores import encode_column, encode_one, key_bytes

__all__ = ["encoded_rows", "plain_share"]

#: The item fields a plain row's value comes from the columns, in the order ``iter_items`` sets them.
FIELDS = ("prompt", "expected_response", "context", "response", "citations", "scores", "status", "error")
_ALLOWED = frozenset(FIELDS)
_KEYS = [key_bytes(name) for name in FIELDS]
_SCORED_KEYS = frozenset(("scores", "status", "error"))
_TEXTS = ((1, "expected_response"), (2, "context"))


def encoded_rows(rows: dict[str, list], collections: list | None) -> list[bytes | None]:
    """Per row of a chunk, its item's bytes, or None where the dict way must build it.

    ``rows``: the chunk's column lists by ``iter_items``' names (``turn``, ``prompt``, ..., ``source``,
    ``status``, ``error_code``, ``error_message``); ``collections``: the rows' scores bytes
    (:func:`evalkit.documents.encoding.json_scores.encoded_collections`), or None when the table has no scores (a
    scored row then gets ``{}``).
    """
    count = len(rows["prompt"])
    if collections is None:
        collections = [b"{}"] * count
    return _uniform(rows, collections, count) or _by_row(rows, collections)


def plain_share(rows: dict[str, list]) -> float:
    """The share of a chunk's rows that may be plain, by their structure alone (not a turn, no diagnostics or
    extensions, no source field the columns do not rewrite): a chunk with few is better built as dicts
    whole, without encoding its columns first. Checked column by column when every row passes."""
    turns = rows["turn"]
    calls = rows["tool_calls"]
    allowed = _ALLOWED.issuperset
    if (
        set(map(type, turns)) <= {type(None), type(NA)}
        and not any(rows["retrieval_executions"])
        and not any(rows["extensions"])
        and not any(issubclass(kind, dict) for kind in set(map(type, calls)))
        and all(map(allowed, set(map(tuple, _sources(rows)))))
    ):
        return 1.0
    passing = sum(
        (turn is None or turn is NA)
        and not executions
        and not ext
        and not isinstance(call, dict)
        and allowed(src)
        for turn, executions, ext, call, src in zip(
            turns, rows["retrieval_executions"], rows["extensions"], calls, _sources(rows)
        )
    )
    return passing / max(len(turns), 1)


def _sources(rows: dict[str, list]) -> list[dict]:
    return [src if isinstance(src, dict) else {} for src in rows["source"]]


def _uniform(rows: dict[str, list], collections: list, count: int) -> list[bytes] | None:
    """The chunk's items through one template when every row is plain and of one shape, checked column by
    column; else None."""
    kinds = {name: set(map(type, rows[name])) for name in ("turn", "tool_calls", "status", "error_code")}
    if any(rows["retrieval_executions"]) or any(rows["extensions"]) or None in collections:
        return None
    if not kinds["turn"] <= {type(None), type(NA)} or any(issubclass(k, dict) for k in kinds["tool_calls"]):
        return None
    shapes = set(map(tuple, _sources(rows)))
    if len(shapes) != 1:
        return None
    (keys,) = shapes
    if not _ALLOWED.issuperset(keys):
        return None
    columns: dict[int, list] = {0: encode_column(rows["prompt"])}
    for index, name in _TEXTS:
        values = rows[name]
        if set(map(type, values)) != {str}:
            return None
        if name in keys or all(values):
            columns[index] = encode_column(values)
        elif any(values):
            return None
    if set(map(type, rows["response"])) == {str}:
        columns[3] = encode_column(rows["response"])
    elif "response" in keys or any(isinstance(v, str) for v in rows["response"]):
        return None
    citations = rows["citations"]
    if any(citations) or not all(
        isinstance(cell, list) for cell in citations
    ):  # the shared empty is a list too
        return None
    if "citations" in keys:
        columns[4] = [b"[]"] * count
    if kinds["status"] == {str}:
        if not kinds["error_code"] <= {type(None), str} or any(rows["error_code"]):
            return None
        columns[5], columns[6] = collections, encode_column(rows["status"])
    elif not _SCORED_KEYS.isdisjoint(keys) or any(isinstance(v, str) for v in rows["status"]):
        return None
    present = sum(1 << index for index in columns)
    text, pick = _template((keys, present))
    values = [columns[index] for index in pick.indexes]
    if any(None in column for column in values):
        return None
    return [text % row for row in zip(*values)]


def _by_row(rows: dict[str, list], collections: list) -> list[bytes | None]:
    """The chunk's items one row at a time: each plain row's bytes, None for the others."""
    prompt_bytes = encode_column(rows["prompt"])
    text_bytes = {
        name: encode_column([v if v.__class__ is str else "" for v in rows[name]]) for _, name in _TEXTS
    }
    response_bytes = encode_column([v if isinstance(v, str) else "" for v in rows["response"]])
    status_bytes = encode_column([v if isinstance(v, str) else "" for v in rows["status"]])
    templates: dict = {}
    out: list = []
    columns = ("turn", "retrieval_executions", "tool_calls", "extensions", "status", "error_code")
    for row, (turn, executions, calls, ext, status, code), src in zip(
        range(len(prompt_bytes)), zip(*(rows[name] for name in columns)), _sources(rows)
    ):
        if not (turn is None or turn is NA) or executions or ext or isinstance(calls, dict):
            out.append(None)
            continue
        if not _ALLOWED.issuperset(src):
            out.append(None)
            continue
        values = [prompt_bytes[row], None, None, None, None, None, None, None]
        present = 1
        for index, name in _TEXTS:
            value = rows[name][row]
            if value.__class__ is str:
                if value or name in src:
                    values[index], present = text_bytes[name][row], present | 1 << index
            elif name in src:
                values[index], present = b'""', present | 1 << index
        if isinstance(rows["response"][row], str):
            values[3], present = response_bytes[row], present | 8
        elif "response" in src:  # the dict way keeps the source's response
            out.append(None)
            continue
        citations = rows["citations"][row]
        if isinstance(citations, list):
            if citations or "citations" in src:
                values[4], present = encode_one(list(citations)) if citations else b"[]", present | 16
        elif "citations" in src:
            values[4], present = b"[]", present | 16
        if isinstance(status, str):
            values[5], values[6], present = collections[row], status_bytes[row], present | 32 | 64
            if isinstance(code, str) and code:
                values[7], present = _error(code, rows["error_message"][row]), present | 128
        elif not _SCORED_KEYS.isdisjoint(src):  # the dict way keeps the source's scores
            out.append(None)
            continue
        shape = (tuple(src), present)
        if shape not in templates:
            templates[shape] = _template(shape)
        text, pick = templates[shape]
        picked = pick(values)
        out.append(None if None in picked else text % picked)
    return out


def _error(code: str, message) -> bytes | None:
    message_bytes, code_bytes = encode_one(message), encode_one(code)
    if message_bytes is None or code_bytes is None:
        return None
    return b'{"code": ' + code_bytes + b', "message": ' + message_bytes + b"}"


class _Pick:
    """The values of a template, by index, as a tuple (``itemgetter`` of one index gives no tuple)."""

    def __init__(self, indexes: list[int]) -> None:
        self.indexes = indexes
        self._get = itemgetter(*indexes)
        self._one = len(indexes) == 1

    def __call__(self, values: list) -> tuple:
        return (self._get(values),) if self._one else self._get(values)


def _template(shape: tuple) -> tuple[bytes, _Pick]:
    """A shape's item as a ``%b`` template and the picker of its values, in the key order ``iter_items``
    gives: the source's keys that stay, then the added ones in the order it adds them."""
    keys, present = shape
    kept = [FIELDS.index(key) for key in keys if present >> FIELDS.index(key) & 1]
    order = kept + [index for index in range(len(FIELDS)) if present >> index & 1 and index not in kept]
    return b"{" + b", ".join(_KEYS[index] + b"%b" for index in order) + b"}", _Pick(order)
