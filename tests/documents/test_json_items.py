"""results.json's items are encoded by orjson and spaced like ``json.dumps`` (issue 20): the bytes must equal
the standard encoder's for every value, in particular those orjson writes differently (floats, NaN, big
integers, non-text keys) and strings that look like separators or those values."""

from __future__ import annotations

import io
import json
from collections import OrderedDict

import pytest

from evalkit.documents.encoding import json_items
from evalkit.documents.results import write_document


class Text(str):
    pass


class Number(int):
    pass


FLOATS = [0.5, 1.0, -0.0, 0.0, 1e-05, -1e-05, 9.99e-05, 0.0001, 1e-07, 1.5e-300, 5e-324, 1e15, 1e16, 1.5e16]
FLOATS += [123456789012345678.0, 1.7976931348623157e308, 0.1 + 0.2, 10.00001, float("nan"), float("inf")]
FLOATS += [float("-inf")]
STRINGS = ["a, b: c", 'say "hi", then: go', "back\\slash", 'ends with \\"', "\\\\", "\\", '\\\\"', '"']
STRINGS += [
    "null",
    "1e5 and 1e-05",
    "0.00001",
    "x\u0000y\u001f\u007f\u2028\u2029",
    "\r\n\t\b\f",
    "😀 é ü",
    "{[,:]}",
]


def _items() -> list:
    items = [{"prompt": s, s: [s, {s: s}], "scores": {"k": {"score": 0.25, "reason": s}}} for s in STRINGS]
    items += [{"score": f, "details": {"values": [f, 1, f]}} for f in FLOATS]
    items += [
        {"big": 2**64, "small": -(2**63) - 1, "edge": 2**63 - 1, "neg": -(2**63)},
        {1: "int key", None: "none key", False: "bool key", 2.5: "float key"},
        {"nested": [[[]], {}, [{}], (1, 2)], "none": None, "flags": [True, False]},
        {"text": Text("sub, class: text"), "number": Number(7), "ordered": OrderedDict(b=1, a=2)},
        {"deep": _deep(300)},
        {},
    ]
    return items


def _deep(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _reference(document: dict) -> str:
    """results.json as the standard encoder writes it (the writer before orjson)."""
    encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
    out = ["{"]
    for number, (key, value) in enumerate(document.items()):
        out.append(("," if number else "") + f"\n  {json.dumps(key)}: ")
        if key == "items":
            out.append("[" + "".join((",\n    " if i else "\n    ") + encode(v) for i, v in enumerate(value)))
            out.append("\n  ]")
        else:
            out.append(encode(value))
    return "".join(out) + "\n}\n"


@pytest.mark.parametrize("chunk", [1, 3, 2_000])
def test_items_have_the_bytes_of_the_json_encoder(chunk, monkeypatch):
    monkeypatch.setattr(json_items, "CHUNK_ITEMS", chunk)
    document = {"schemaVersion": "1.11.0", "metadata": {"x": 1e-07}, "items": _items()}
    binary = io.BytesIO()
    write_document(document, binary)
    assert binary.getvalue().decode("utf-8") == _reference(document)
    text = io.StringIO()
    write_document(document, text)
    assert text.getvalue() == _reference(document)


def test_each_odd_value_alone_is_encoded_as_json_does():
    """One item per odd value, so a fallback cannot hide behind a neighbour that forced its chunk to json."""
    encode = json_items.json_encoder()
    for item in _items():
        (chunk,) = json_items.encode_items([item])
        assert chunk == [encode(item).encode("utf-8")], item


def test_plain_items_are_encoded_by_orjson(monkeypatch):
    """The fast path is taken: a plain item is not handed to the json encoder."""
    calls = []
    real = json_items.json_encoder

    def counting():
        encode = real()
        return lambda item: calls.append(item) or encode(item)

    monkeypatch.setattr(json_items, "json_encoder", counting)
    items = [{"prompt": "p, q: r", "score": 0.5, "ok": True}, {"score": 1e-05}, {"x": None}]
    (chunk,) = json_items.encode_items(items)
    assert chunk == [json.dumps(i, ensure_ascii=False).encode() for i in items]
    assert calls == items[1:]


def test_empty_documents():
    for document in ({}, {"items": []}, {"items": iter([])}):
        binary = io.BytesIO()
        write_document(dict(document), binary)
        assert binary.getvalue().decode() == _reference({k: list(v) for k, v in document.items()})


def test_a_lone_surrogate_fails_as_before():
    with pytest.raises(UnicodeEncodeError):
        write_document({"items": [{"prompt": "\ud800"}]}, io.BytesIO())


def test_values_json_refuses_are_refused():
    with pytest.raises(TypeError):
        write_document({"items": [{"when": object()}]}, io.BytesIO())
