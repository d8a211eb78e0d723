"""The shared reader for user JSON: limits, refusals and how user values are quoted in messages."""

from __future__ import annotations

import pytest

from evalkit.documents.json_input import (
    DEFAULT_MAX_BYTES,
    MAX_DEPTH,
    JsonInputError,
    clip,
    format_path,
    max_document_bytes,
    parse_json,
    quote,
)
from evalkit.errors import EvalkitError


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("", DEFAULT_MAX_BYTES), ("1000", 1000), ("500MB", 500 * 10**6), ("2 GiB", 2 * 2**30), ("64kib", 65536)],
)
def test_size_limit_from_the_environment(monkeypatch, raw, expected):
    monkeypatch.setenv("EVALKIT_MAX_DOCUMENT_BYTES", raw)
    assert max_document_bytes() == expected


@pytest.mark.parametrize("raw", ["lots", "12 parsecs", "-5", "0", "1.5GB"])
def test_a_size_limit_that_is_not_a_size_is_a_configuration_error(monkeypatch, raw):
    monkeypatch.setenv("EVALKIT_MAX_DOCUMENT_BYTES", raw)
    with pytest.raises(EvalkitError, match="EVALKIT_MAX_DOCUMENT_BYTES=.* is not a size") as caught:
        max_document_bytes()
    assert caught.value.exit_code == 2


def test_depth_is_counted_in_levels_of_arrays_and_objects():
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(
        JsonInputError, match=f"nested more than {MAX_DEPTH} levels deep at \\[0\\]"
    ) as caught:
        parse_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert not caught.value.syntax  # JSON, refused: span loading must not retry it as JSON lines
    with pytest.raises(JsonInputError) as caught:
        parse_json("[" * 100_000)
    assert caught.value.syntax


def test_every_duplicate_is_found_wherever_it_is():
    assert parse_json('{"a": {"b": 1, "c": 2}}') == {"a": {"b": 1, "c": 2}}
    with pytest.raises(JsonInputError, match=r"duplicate key 'b' in a\[1\]:"):
        parse_json('{"a": [{"b": 1}, {"b": 1, "b": 2}]}')


def test_long_values_are_clipped_in_messages():
    assert quote("short") == "'short'"
    assert quote("9" * 50_000_000) == "'" + "9" * 59 + "'…(50,000,000 characters)"
    assert quote(list(range(100))).endswith("...") and len(quote(list(range(100)))) == 60
    assert clip("x" * 61) == "x" * 59 + "…(61 characters)"


def test_long_paths_keep_their_ends():
    path = ("items", 0, "extensions", *([0] * 50), "leaf")
    assert format_path(path) == "items[0].extensions[0][0][0]...[0][0][0].leaf"
    assert format_path(()) == "(document)"
    assert format_path(("items", 0, "k" * 500)) == "items[0]." + "k" * 59 + "…(500 characters)"
    assert format_path(("a", "k-" * 50)) == 'a["' + "k-" * 29 + 'k…(100 characters)"]'


def test_error_messages_never_carry_a_huge_line():
    error = EvalkitError("head " + "x" * 10_000, ["short", "y" * 5_000_000])
    lines = str(error).splitlines()
    assert lines[0] == "head " + "x" * 1994 + "…(10,005 characters)"
    assert lines[1] == "  - short"
    assert lines[2] == "  - " + "y" * 1999 + "…(5,000,000 characters)"


def test_an_unsupported_schema_version_is_quoted_cut_short():
    from evalkit.documents.versions import upgrade
    from evalkit.errors import DocumentError

    with pytest.raises(DocumentError) as caught:
        upgrade({"schemaVersion": "2.0." + "0" * 1_000_000, "items": []}, "doc.json")
    assert "schemaVersion '2.0.00000" in str(caught.value) and "…(1,000,004 characters)" in str(caught.value)
    assert len(str(caught.value)) < 300
