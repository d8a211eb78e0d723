"""Secrets out of everything evalkit stores or prints: one redaction function, used everywhere.

Why: judge and agent endpoints put keys into their error messages (a gateway's 401 says ``Incorrect API key
provided: sk-...``), URLs carry credentials in their user part (``http://user:key@host/v1``), and those
messages travel into ``results.json``, ``results.csv``, the HTML pages, logs, stdout and stderr. Every
message evalkit stores or prints goes through :func:`redact`, and :func:`install_log_redaction` makes every
log record of the process (promptflow's and openai's loggers included, whatever handlers they have) pass
through it too.

What is replaced by ``***``:

* the configured secrets: values given to :func:`register_secret` (the judge's and the agent's API keys,
  also those read from ``.env`` files) and the values of environment variables whose name ends in a secret
  word (``OPENAI_API_KEY``, ``AGENT_API_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD`` ...), when at least
  ``MIN_SECRET_LENGTH`` characters long (a test key ``"k"`` must not blank out every letter k);
* anything shaped like a secret: ``sk-...`` keys, ``Bearer <token>``, the user part of a URL
  (``scheme://user:pass@host`` becomes ``scheme://***@host``) and key-like query parameters
  (``?api-key=...``, ``&sig=...``).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from functools import lru_cache
from typing import Any

MASK = "***"
#: Shorter configured values are not searched for (they would match ordinary text); patterns still apply.
MIN_SECRET_LENGTH = 8

# Words that make a field or variable name a secret. Matched against the words of the name ("api_key",
# "apiKey", "Ocp-Apim-Subscription-Key", "azure_ad_token_provider"), never as substrings: "max_tokens" is
# a model parameter, not a secret.
SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "password",
        "passwd",
        "secret",
        "secrets",
        "credential",
        "credentials",
        "authorization",
    }
)
#: An environment variable holds a secret when the last word of its name is one of these.
_SECRET_LAST_WORDS = frozenset({"key", "apikey", "token", "secret", "password", "passwd", "pat"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")

# Each shape comes with the lower-case text that any match contains, so that text without it (most text) is
# not scanned by the regular expression at all: a span document is redacted in about 5 us instead of 80.
_PATTERNS = (
    # scheme://user:password@host -> scheme://***@host (user part: no '/', '@', whitespace or quote)
    ("//", re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#'\"<>]+@"), r"\1" + MASK + "@"),
    # Authorization: Bearer <token>, Basic <base64 of user:password>; the token must look like one (a digit,
    # a symbol or a lower-to-upper case change), so "Bearer tokens" or "basic Authentication" stay as written
    (
        ("bearer", "basic"),
        re.compile(
            r"(?i)\b(bearer|basic)[ \t]+(?=[\w.~+/=\-]*?(?:[0-9.~+/=_\-]|(?-i:[a-z][A-Z])))[\w.~+/=\-]{6,}"
        ),
        r"\1 " + MASK,
    ),
    # OpenAI-style keys: sk-..., sk-proj-...
    ("sk-", re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), "sk-" + MASK),
    # key-like query parameters
    (
        "=",
        re.compile(
            r"(?i)([?&](?:api[-_]?key|key|access_token|token|sig|code|subscription-key)=)[^&\s#'\"<>]+"
        ),
        r"\1" + MASK,
    ),
)

_registered: set[str] = set()
_lock = threading.Lock()


def words(name: str) -> list[str]:
    """The lower-case words of a field or variable name (``apiKey`` -> ``api``, ``key``)."""
    return [w for w in _NON_WORD.split(_CAMEL.sub("_", name).lower()) if w]


def is_secret_name(name: str) -> bool:
    """Whether a field named ``name`` holds a secret: one of its words is key, token, password, secret ..."""
    parts = words(name)
    return "".join(parts) in SECRET_WORDS or any(word in SECRET_WORDS for word in parts)


def redact_secrets(obj: Any) -> Any:
    """A copy of ``obj`` without the dict fields whose names are secret (see :func:`is_secret_name`).

    Recurses through dicts, lists and tuples, so ``{"default_headers": {"api-key": ...}}`` loses the header.
    """
    if isinstance(obj, dict):
        return {
            k: redact_secrets(v) for k, v in obj.items() if not (isinstance(k, str) and is_secret_name(k))
        }
    if isinstance(obj, (list, tuple)):
        return [redact_secrets(v) for v in obj]
    return obj


def register_secret(value: Any) -> None:
    """Remember ``value`` (an API key, a password) so that :func:`redact` replaces it wherever it appears."""
    if isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value.strip())


def register_secrets_of(config: dict | None) -> None:
    """Register the secret-named fields of a configuration dict (``api_key`` ...), nested ones included."""
    if not isinstance(config, dict):
        return
    for name, value in config.items():
        if isinstance(value, dict):
            register_secrets_of(value)
        elif isinstance(name, str) and is_secret_name(name):
            register_secret(value)
        elif isinstance(value, str):
            register_url_credentials(value)


def register_url_credentials(url: Any) -> None:
    """Register the password in a URL's user part (``http://user:password@host``), if it has one."""
    if isinstance(url, str) and "@" in url and "://" in url:
        from urllib.parse import urlsplit

        try:
            register_secret(urlsplit(url.strip()).password)
        except ValueError:
            pass


@lru_cache(maxsize=4096)
def _secret_variable(name: str) -> bool:
    parts = words(name)
    return bool(parts) and parts[-1] in _SECRET_LAST_WORDS


def known_secrets() -> frozenset[str]:
    """The registered secrets and the values of secret-named environment variables."""
    found = set()
    for name, value in os.environ.items():
        if _secret_variable(name) and len(value.strip()) >= MIN_SECRET_LENGTH:
            found.add(value.strip())
    with _lock:
        found.update(_registered)
    return frozenset(found)


@lru_cache(maxsize=8)
def _ordered(secrets: frozenset[str]) -> tuple[str, ...]:
    # Longest first, so a key that contains another is replaced whole.
    return tuple(sorted(secrets, key=len, reverse=True))


def redact(text: Any) -> Any:
    """``text`` with every configured secret and every secret-shaped token replaced by ``***``.

    Anything that is not a string is returned as it is, so columns with None and NaN can be passed through.
    """
    if not isinstance(text, str) or not text:
        return text
    return _redact(text, _ordered(known_secrets()))


def redact_many(values: list) -> list:
    """:func:`redact` over a column's values (the secrets are looked up once)."""
    if not any(isinstance(v, str) and v for v in values):
        return list(values)
    secrets = _ordered(known_secrets())
    return [_redact(v, secrets) if isinstance(v, str) and v else v for v in values]


def redact_json_lines(texts: list[str]) -> list[str]:
    """:func:`redact` over JSON texts (which hold no raw newline), in one pass over the whole batch.

    No pattern matches across a newline (nor does a configured secret, which a JSON text cannot hold raw), so
    the number of lines is kept and the batch is joined by newlines, redacted once and split again:
    for span documents this costs a fraction of redacting each one (``evalkit spans serve`` stores batches
    of hundreds). Texts that do hold a newline are redacted one by one.
    """
    if not texts:
        return []
    joined = "\n".join(texts)
    parts = redact(joined).split("\n")
    return parts if len(parts) == len(texts) else redact_many(texts)


def _redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    lowered = None
    for hints, shape, replacement in _PATTERNS:
        if isinstance(hints, str):
            if hints not in text:
                continue
        else:
            lowered = text.lower() if lowered is None else lowered
            if not any(hint in lowered for hint in hints):
                continue
        text = shape.sub(replacement, text)
    return text


def redact_url(url: Any) -> Any:
    """A URL fit to show: credentials in its user part become ``***`` (``http://***@host/v1``)."""
    return redact(url)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message, arguments and traceback in place (never drops it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """Redact ``record`` in place: the formatted message, and the traceback text when there is one."""
    if getattr(record, "_evalkit_redacted", False):
        return record
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a broken format string is the logging module's to report
        message = None
    if message is not None:
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
    if record.exc_info and not record.exc_text:
        text = logging.Formatter().formatException(record.exc_info)
        record.exc_text = redact(text)
    elif record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    record._evalkit_redacted = True
    return record


_installed = False


def install_log_redaction() -> None:
    """Redact every log record this process makes, from any logger (idempotent).

    A filter on a logger sees only the records made on that very logger, and promptflow's loggers do not
    propagate: they write to their own stdout handlers. So the record factory is wrapped instead, and every
    record is redacted as it is made, whatever logger makes it and whatever handler writes it.
    """
    global _installed
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args, **kwargs):
            return redact_record(previous(*args, **kwargs))

        logging.setLogRecordFactory(factory)
        _installed = True
