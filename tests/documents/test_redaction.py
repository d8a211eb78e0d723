"""One redaction function for everything evalkit stores or prints, and the log records of every library."""

from __future__ import annotations

import io
import json
import logging
import os
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.documents import redaction
from evalkit.documents.redaction import (
    install_log_redaction,
    redact,
    redact_many,
    redact_url,
    register_secret,
    register_secrets_of,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Incorrect API key provided: sk-proj-Ab12_cd34-EF.", "Incorrect API key provided: sk-***."),
        ("Authorization: Bearer eyJhbGciOi.J9x-y_z", "Authorization: Bearer ***"),
        ("header Basic dXNlcjpwYXNz", "header Basic ***"),
        ("http://user:pw@host:8/v1/chat", "http://***@host:8/v1/chat"),
        ("see https://tok@example.org/a and ftp://a:b@c/", "see https://***@example.org/a and ftp://***@c/"),
        ("GET /x?api-version=1&api-key=abc123&sig=zz", "GET /x?api-version=1&api-key=***&sig=***"),
        # text that only looks a little like a secret is left alone
        ("Bearer tokens and basic Authentication", "Bearer tokens and basic Authentication"),
        ("a task-scheduler risk-assessment, user@example.org", "a task-scheduler risk-assessment, user@example.org"),
    ],
)  # fmt: skip
def test_secret_shapes_are_redacted(text, expected):
    assert redact(text) == expected


def test_configured_secrets_are_redacted_wherever_they_appear(monkeypatch):
    monkeypatch.setattr(redaction, "_registered", set())
    register_secrets_of({"base_url": "http://u:url-password-1@h/v1", "api_key": "plain-looking-value-42"})
    register_secret("short")  # too short to search for: it would match ordinary words
    text = "failed: plain-looking-value-42 / url-password-1 / short"
    assert redact(text) == "failed: *** / *** / short"
    assert redact_many([None, text, float("nan")])[1] == "failed: *** / *** / short"


def test_secret_named_environment_variables_are_redacted(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-from-the-environment")
    monkeypatch.setenv("MY_SERVICE_URL", "https://service.example.org")
    assert (
        redact("tok-from-the-environment at https://service.example.org")
        == "*** at https://service.example.org"
    )


def test_urls_show_no_credentials():
    assert redact_url("http://user:key@host/v1") == "http://***@host/v1"
    assert redact_url("https://host/v1") == "https://host/v1"


def test_log_records_of_any_logger_are_redacted_whatever_their_handler(monkeypatch):
    """promptflow's loggers do not propagate and write through handlers of their own."""
    monkeypatch.setattr(redaction, "_registered", set())
    register_secret("configured-key-123456")
    install_log_redaction()
    stream = io.StringIO()
    logger = logging.getLogger("promptflow.core._fake_for_tests")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.error("Exception occurs: %s", "Incorrect API key provided: configured-key-123456.")
        try:
            raise RuntimeError("401 for configured-key-123456")
        except RuntimeError:
            logger.exception("call failed with Bearer abc123xyz")
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert "configured-key-123456" not in written
    assert "Exception occurs: Incorrect API key provided: ***." in written
    assert "RuntimeError: 401 for ***" in written  # the traceback too
    assert "call failed with Bearer ***" in written


def test_records_without_secrets_keep_their_arguments():
    install_log_redaction()
    record = logging.getLogger("evalkit.test").makeRecord("n", logging.INFO, "f", 1, "%d rows", (3,), None)
    assert (record.msg, record.args) == ("%d rows", (3,))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gh: ghp_0123456789abcdefghijABCDEFGHIJklmnop", "gh: ghp_***"),
        ("gho_0123456789abcdefghij ghs_0123456789abcdefghij", "gho_*** ghs_***"),
        ("fine-grained github_pat_11ABCDEFG0_0123456789abcdefghij", "fine-grained github_pat_***"),
        ("aws AKIAIOSFODNN7EXAMPLE / ASIAIOSFODNN7EXAMPLE.", "aws AKIA*** / ASIA***."),
        ("slack xoxb-1234567890-abcdefABCDEF", "slack xoxb-***"),
        ("google AIzaSyA0123456789abcdefghijklmnopqrstuv", "google AIza***"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl end", "jwt eyJ*** end"),
        # words that merely start the same way stay
        ("ghost_town AKIAB xoxo- AIzaShort eyJust.a.word", "ghost_town AKIAB xoxo- AIzaShort eyJust.a.word"),
    ],
)  # fmt: skip
def test_key_shapes_are_redacted(text, expected):
    assert redact(text) == expected


def test_values_are_redacted_as_parsed_values_never_as_text(monkeypatch):
    """A secret made of digits masks the strings that hold it; no number is ever rewritten (issue 29 item 2)."""
    monkeypatch.setenv("BUILD_TOKEN", "1700000000")
    value = {"startTimeUnixNano": 1700000000123456789, "note": "pin 1700000000", "ok": True, "none": None}
    assert redaction.redact_value(value) == {
        "startTimeUnixNano": 1700000000123456789,
        "note": "pin ***",
        "ok": True,
        "none": None,
    }
    assert value["note"] == "pin 1700000000"  # a copy: the value given is left as it is


def test_secret_named_fields_are_masked_whatever_they_hold():
    value = {
        "api_key": "plain-looking",
        "attributes": {"http.request.header.x-api-key": "abc", "Authorization": "Basic dXNlcjpwYXNz"},
        "headers": {"password": ["hunter2", 7]},
        "key": "a name, not a secret",
        "gen_ai.usage.input_tokens": 12,
        "otlp": [
            {"key": "x-api-key", "value": {"stringValue": "abc"}},
            {"key": "http.method", "value": {"stringValue": "GET"}},
        ],
    }
    assert redaction.redact_value(value) == {
        "api_key": "***",
        "attributes": {"http.request.header.x-api-key": "***", "Authorization": "***"},
        "headers": {"password": ["***", 7]},
        "key": "a name, not a secret",
        "gen_ai.usage.input_tokens": 12,
        "otlp": [
            {"key": "x-api-key", "value": {"stringValue": "***"}},
            {"key": "http.method", "value": {"stringValue": "GET"}},
        ],
    }


def test_ids_shaped_like_keys_are_masked_and_stay_distinct():
    ghp = "ghp_0123456789abcdefghijABCDEFGHIJklmnop"
    one = redaction.redact_value({"session.id": ghp, "traceId": "sk-0123456789abcdef", "spanId": "00f067aa"})
    assert one["session.id"].startswith("***") and len(one["session.id"]) == 19
    assert one["traceId"].startswith("***") and one["traceId"] != one["session.id"]
    assert one["spanId"] == "00f067aa"  # an ordinary id is kept as it is
    assert redaction.redact_id(ghp) == one["session.id"]  # the same id, the same mask: joins hold
    assert redaction.redact_id(ghp[:-1] + "q") != one["session.id"]
    assert redaction.redact_id(one["session.id"]) == one["session.id"]
    assert ghp not in str(one)


def test_values_deeper_than_any_parsed_document_do_not_raise():
    deep: list = ["sk-0123456789abcdef"]
    for _ in range(5000):
        deep = [deep]
    redaction.redact_value(deep)  # no RecursionError


def test_a_frame_keeps_its_numbers_types_and_attributes(monkeypatch):
    import pandas as pd

    monkeypatch.setenv("BUILD_TOKEN", "1700000000")
    frame = pd.DataFrame(
        {
            "response": ["key sk-0123456789abcdef", "fine"],
            "exactMatch": pd.Series([True, False], dtype=object),
            "score": [1700000000.0, 2.0],
            "details": [{"api_key": "v"}, None],
        }
    )
    frame.attrs["evalkit"] = {"document": "d.json"}
    redacted = redaction.redact_frame(frame)
    assert redacted["response"].tolist() == ["key sk-***", "fine"]
    assert redacted["details"].tolist() == [{"api_key": "***"}, None]
    assert redacted["score"].tolist() == [1700000000.0, 2.0]
    assert list(redacted.dtypes) == list(frame.dtypes)
    assert redacted.attrs == frame.attrs
    assert frame["response"][0] == "key sk-0123456789abcdef"


# --- properties: the shortcut for stored JSON and the numbers ----------------------------------------------
_NAMES = st.sampled_from(
    ["api_key", "x-api-key", "key", "traceId", "session.id", "note", "Authorization", "input_tokens", "value"]
) | st.text(max_size=8)
_TEXTS = st.sampled_from(
    [
        "sk-0123456789ab",
        "ghp_0123456789abcdefghij",
        "http://u:p@h/",
        "Bearer abc123def",
        "BEARER xY.z-123456",
        "plain",
        "a=b",
        "?api-key=zz",
        "configured-secret-77",
        'quote"d-secret\\77',
        "line\nbreak",
        "1700000000",
    ]
) | st.text(max_size=20)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXTS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_NAMES, inner, max_size=4)
        | st.fixed_dictionaries({"key": _NAMES, "value": inner})
    ),
    max_leaves=24,
)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_SECRETS = {
    "PROPERTY_TOKEN": "configured-secret-77",
    "OTHER_API_KEY": 'quote"d-secret\\77',
    "PIN_TOKEN": "1700000000",
}


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value if not isinstance(value, str) else str]


def _strings(value):
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


@settings(max_examples=400, deadline=None)
@given(st.lists(_VALUES, max_size=4))
def test_the_shortcut_for_stored_json_never_skips_a_change_and_numbers_stay(values):
    with mock.patch.dict(os.environ, _SECRETS):
        texts = [text for _, text in redaction.redacted_json(values, _COMPACT)]
        for value, text in zip(values, texts, strict=True):
            redacted = redaction.redact_value(value)
            assert text == _COMPACT(redacted)
            # the strings redacted together (joined by newlines) as each on its own would be
            assert redacted == redaction._copy(value, redaction._scan(), redaction._TEXT, 0, None)
            assert _leaves(redacted) == _leaves(value)  # numbers, booleans and None where they were
            strings = _strings(redacted)
            assert not any(secret in string for secret in _SECRETS.values() for string in strings)


def test_keys_and_secrets_across_lines_are_redacted_string_by_string(monkeypatch):
    monkeypatch.setattr(redaction, "_registered", set())
    redaction.register_secret("two\nline-secret")
    value = {"sk-0123456789ab": "a", "note": "x two\nline-secret y", "ascii": "é two\nline-secret"}
    assert redaction.redact_value(value) == {"sk-***": "a", "note": "x *** y", "ascii": "é ***"}
    ascii_dumps = json.JSONEncoder(separators=(",", ":")).encode  # non-ASCII letters escaped as well
    ((_, text),) = redaction.redacted_json([{"é": "é two\nline-secret"}], ascii_dumps)
    assert json.loads(text) == {"é": "é ***"}
