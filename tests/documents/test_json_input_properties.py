"""Property tests of the one parser for untrusted JSON (issue 29): generated hostile values (deep nesting, huge
integers, NaN / Infinity tokens, lone surrogates, repeated keys, random text and bytes) give either a clean
``JsonInputError`` or a faithful value: the one ``json`` reads, writable as strict JSON
(``json.dumps(..., allow_nan=False)``) and as UTF-8, at most ``MAX_DEPTH`` levels deep. Never another
exception (``RecursionError``, ``OverflowError``, int-digit ``ValueError``)."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.documents.json_input import (
    MAX_DEPTH,
    JsonInputError,
    json_or_text,
    parse_json,
    parse_json_text,
)

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Leaves a hostile producer writes: huge integers, overflowing floats, non-JSON constants, lone surrogates.
LEAVES = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.integers(min_value=1, max_value=6000).map(lambda n: "9" * n),
    st.integers(min_value=1, max_value=6000).map(lambda n: "-" + "1" * n),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e308", "0.1", "1E400", "2.5e-400"]),
    st.sampled_from(['"\\ud800"', '"\\udfff x"', '"\\ud83d\\ude00"', '"ok"', '"\\u0000"', "true", "null"]),
    st.text(max_size=20).map(json.dumps),
)


@st.composite
def hostile_json(draw) -> str:
    """JSON-like text: a leaf wrapped in arrays / objects up to 3,000 deep, maybe with a repeated key."""
    text = draw(LEAVES)
    depth = draw(st.one_of(st.integers(0, 5), st.integers(95, 105), st.integers(900, 3000)))
    varied = min(depth, 30)  # the innermost levels vary; the rest are arrays (cheap to draw and build)
    kinds = draw(st.lists(st.sampled_from(["[", "{", "{dup"]), min_size=varied, max_size=varied))
    for kind in reversed(kinds):
        if kind == "[":
            text = f"[{text}]"
        elif kind == "{":
            text = f'{{"k": {text}}}'
        else:
            text = f'{{"k": 1, "k": {text}}}'
    rest = depth - varied
    return "[" * rest + text + "]" * rest


def depth_of(value) -> int:
    deepest, level = 0, [value]
    while level:
        containers = [v for v in level if isinstance(v, (dict, list))]
        if not containers:
            break
        deepest += 1
        level = [c for v in containers for c in (v.values() if isinstance(v, dict) else v)]
    return deepest


def assert_faithful(text, value) -> None:
    strict = json.dumps(value, allow_nan=False, ensure_ascii=False)  # finite numbers only
    strict.encode("utf-8")  # no lone surrogates
    assert json.loads(strict) == value
    assert depth_of(value) <= MAX_DEPTH
    try:
        reference = json.loads(text)
    except (ValueError, RecursionError):
        return
    assert reference == value or _same_nan(reference, value)


def _same_nan(a, b) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def parse_cleanly(text):
    try:
        value = parse_json(text)
    except JsonInputError as exc:
        assert str(exc)  # a message saying where and why
        return
    assert_faithful(text if isinstance(text, str) else text.decode("utf-8-sig"), value)


@FAST
@given(hostile_json())
def test_hostile_json_is_refused_cleanly_or_read_faithfully(text):
    parse_cleanly(text)


@FAST
@given(st.text(alphabet=st.sampled_from('[]{}:,"\\u0123456789dDeE.-+ NaInfity trulsx\n'), max_size=200))
def test_json_shaped_noise_is_refused_cleanly_or_read_faithfully(text):
    parse_cleanly(text)


@FAST
@given(st.binary(max_size=200))
def test_random_bytes_are_refused_cleanly_or_read_faithfully(data):
    parse_cleanly(data)


@FAST
@given(hostile_json(), st.sampled_from(["", "attribute 'metadata'"]), st.sampled_from([None, 10, 10_000]))
def test_text_entry_points_never_raise_anything_else(text, where, limit):
    try:
        value = parse_json_text(text, where=where, limit=limit)
    except JsonInputError as exc:
        assert str(exc).startswith(where)
    else:
        assert_faithful(text, value)
    kept = json_or_text(text)
    assert kept == text or isinstance(kept, (dict, list))


def test_the_generator_reaches_every_kind_of_refusal():
    refusals = {
        "[" * 3000 + "]" * 3000: "nested more than 100 levels deep",
        "9" * 5000: "digits, more than the 4,300 evalkit reads",
        "[1e999]": "too large for a finite value",
        "[NaN]": "NaN is not valid JSON",
        '["\\ud800"]': "lone surrogate",
        '{"k": 1, "k": 2}': "duplicate key 'k'",
    }
    for text, message in refusals.items():
        try:
            parse_json(text)
        except JsonInputError as exc:
            assert message in str(exc), (text[:20], str(exc))
        else:
            raise AssertionError(f"{text[:20]!r} was accepted")
