"""One redaction function for everything evalkit stores or prints, and the log records of every library."""

from __future__ import annotations

import io
import logging

import pytest

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


def test_json_lines_are_redacted_as_a_batch_and_one_by_one_when_they_hold_newlines():
    lines = ['{"u":"http://a:b@h/"}', '{"k":"sk-0123456789ab"}', '{"n":1}']
    assert redaction.redact_json_lines(lines) == ['{"u":"http://***@h/"}', '{"k":"sk-***"}', '{"n":1}']
    assert redaction.redact_json_lines(["Bearer\nabc123def", "x"]) == ["Bearer\nabc123def", "x"]
    assert redaction.redact_json_lines([]) == []
