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
* anything shaped like a secret (``_PATTERNS``): ``sk-`` keys, GitHub, Slack and Google tokens, AWS key ids,
  JWTs, ``Bearer <token>``, a URL's user part (``scheme://***@host``), key-like query parameters (``?sig=``).

Structured values (span documents, evaluator results, responses, result tables) go through
:func:`redact_value`, which walks the parsed value and returns a redacted copy; serialized text is never
redacted, so a configured secret made of digits can never rewrite a number (``startTimeUnixNano``) or break
the JSON around it. It redacts strings only (numbers, booleans and None are kept), and in addition:

* a field whose name is a secret (``api_key``, ``x-api-key``, ``authorization``, ``password``; see
  :func:`is_secret_name`; a field called just ``key`` is a name, not a secret) has every string in its value
  replaced by ``***``, also in OTLP's ``{"key": NAME, "value": {...}}`` form;
* an id (a field whose name ends in ``id``: ``traceId``, ``session.id``) is kept unless it holds a secret;
  then it becomes ``***`` and 16 hex digits of its SHA-256 (:func:`redact_id`): two ids stay two, and joins
  on them (the store's sessions, a span's trace) still hold.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

MASK = "***"
#: Shorter configured values are not searched for (they would match ordinary text); patterns still apply.
MIN_SECRET_LENGTH = 8

# Words that make a field or variable name a secret. Matched against the words of the name ("api_key",
# "apiKey", "Ocp-Apim-Subscription-Key", "azure_ad_token_provider"), never as substrings: "max_tokens" is
# a model parameter, not a secret.
SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "password", "passwd", "secret", "secrets", "credential", "credentials"}
    | {"authorization"}
)
#: An environment variable holds a secret when the last word of its name is one of these.
_SECRET_LAST_WORDS = frozenset({"key", "apikey", "token", "secret", "password", "passwd", "pat"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")

_GITHUB = ("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_")
_B64 = r"[A-Za-z0-9_\-]"  # base64url
# Each shape comes with texts that any match contains (``hints``; compared in lower case when ``folded``), so
# that text without them (most text) is not scanned by the regular expression at all: a span document is
# redacted in microseconds.
_PATTERNS = (
    # scheme://user:password@host -> scheme://***@host (user part: no '/', '@', whitespace or quote)
    (("//",), False, re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#'\"<>]+@"), r"\1" + MASK + "@"),
    # Authorization: Bearer <token>, Basic <base64 of user:password>; the token must look like one (a digit,
    # a symbol or a lower-to-upper case change), so "Bearer tokens" or "basic Authentication" stay as written
    (
        ("bearer", "basic"),
        True,
        re.compile(
            r"(?i)\b(bearer|basic)[ \t]+(?=[\w.~+/=\-]*?(?:[0-9.~+/=_\-]|(?-i:[a-z][A-Z])))[\w.~+/=\-]{6,}"
        ),
        r"\1 " + MASK,
    ),
    # OpenAI-style keys: sk-..., sk-proj-...
    (("sk-",), False, re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), "sk-" + MASK),
    # GitHub tokens: ghp_ (personal), gho_ (OAuth), ghs_ (app installation), ghu_, ghr_, fine-grained github_pat_
    (_GITHUB, False, re.compile(r"\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}"), r"\1" + MASK),
    # AWS access key ids (long-term AKIA, temporary ASIA)
    (("AKIA", "ASIA"), False, re.compile(r"\b(A[KS]IA)[A-Z0-9]{16}\b"), r"\1" + MASK),
    # Slack tokens: xoxb-, xoxp-, xoxa-, xoxr-, xoxs-
    (("xox",), False, re.compile(r"\b(xox[abprs]-)[A-Za-z0-9\-]{8,}"), r"\1" + MASK),
    # Google API keys
    (("AIza",), False, re.compile(r"\bAIza[A-Za-z0-9_\-]{35}"), "AIza" + MASK),
    # JWTs: base64url header (a JSON object, so "eyJ"), payload and signature
    (("eyJ",), False, re.compile(rf"\beyJ{_B64}{{4,}}\.{_B64}{{4,}}\.{_B64}*"), "eyJ" + MASK),
    # key-like query parameters
    (
        ("=",),
        False,
        re.compile(
            r"(?i)([?&](?:api[-_]?key|key|access_token|token|sig|code|subscription-key)=)[^&\s#'\"<>]+"
        ),
        r"\1" + MASK,
    ),
)
#: Deeper than this, :func:`redact_value` masks a value whole (the JSON parser refuses such depths long before).
MAX_DEPTH = 200

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


class _Scan:
    """What to look for in text: the secrets, longest first (so a key that contains another is replaced
    whole)."""

    __slots__ = ("secrets",)

    def __init__(self, secrets: frozenset[str]):
        self.secrets = tuple(sorted(secrets, key=len, reverse=True))


@lru_cache(maxsize=8)
def _scanner(secrets: frozenset[str]) -> _Scan:
    return _Scan(secrets)


def _scan() -> _Scan:
    return _scanner(known_secrets())


def redact(text: Any) -> Any:
    """``text`` with every configured secret and every secret-shaped token replaced by ``***``.

    Anything that is not a string is returned as it is, so columns with None and NaN can be passed through.
    """
    if not isinstance(text, str) or not text:
        return text
    return _redact(text, _scan())


def redact_many(values: list) -> list:
    """:func:`redact` over a column's values (the secrets are looked up once)."""
    if not any(isinstance(v, str) and v for v in values):
        return list(values)
    scan = _scan()
    return [_redact(v, scan) if isinstance(v, str) and v else v for v in values]


def _redact(text: str, scan: _Scan) -> str:
    for secret in scan.secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    lowered = None
    for hints, folded, shape, replacement in _PATTERNS:
        if folded:
            lowered = text.lower() if lowered is None else lowered
            if not any(hint in lowered for hint in hints):
                continue
        elif not any(hint in text for hint in hints):
            continue
        text = shape.sub(replacement, text)
    return text


def redact_id(value: Any) -> Any:
    """An id fit to store and show: as it is, unless it holds a secret (a key shape, a configured secret);
    then ``***`` and 16 hex digits of its SHA-256, the same for the same id, so joins on it still hold."""
    return _id(value, _scan())


def _id(value: Any, scan: _Scan) -> Any:
    if not isinstance(value, str) or not value or _redact(value, scan) == value:
        return value
    return _masked_id(value)


def _masked_id(value: str) -> str:
    return MASK + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def redact_ids(values: list) -> list:
    """:func:`redact_id` over a list of ids (the secrets are looked up once)."""
    scan = _scan()
    return [_id(value, scan) for value in values]


_TEXT, _SECRET, _ID, _KEY = 0, 1, 2, 3


@lru_cache(maxsize=4096)
def _field_kind(name: str) -> int:
    """``_SECRET`` for a secret-named field, ``_ID`` for an id, ``_TEXT`` for any other field."""
    parts = words(name)
    if parts != ["key"] and is_secret_name(name):
        return _SECRET
    if parts and parts[-1] == "id":
        return _ID
    return _TEXT


def _inner(kind: int, key: Any) -> int:
    """The kind of a field's value: a secret stays a secret; an id's parts are the id's."""
    if kind == _SECRET or type(key) is not str:
        return kind
    named = _field_kind(key)
    return named if kind == _TEXT else (named or kind)


def redact_value(obj: Any) -> Any:
    """A redacted copy of a parsed value (dicts, lists and tuples walked, any depth): strings redacted as
    :func:`redact` does, secret-named fields masked whole, ids kept unless they hold a secret
    (:func:`redact_id`); numbers, booleans and None are never changed.

    How, fast enough for span intake: one walk copies the value, masks the secret-named fields and notes
    every other string (and every key) in order; the strings are joined by newlines and redacted as one text
    (no shape and no configured secret spans a newline), which costs a few substring searches when there is
    nothing to mask; the strings that changed are put back (an id: masked whole). When that cannot be done
    exactly (a configured secret holding a newline, a key that holds a secret), each string is redacted on
    its own instead.
    """
    return _redact_value(obj, _scan())


def _redact_value(obj: Any, scan: _Scan) -> Any:
    slots: list = []
    copy = _copy(obj, scan, _TEXT, 0, slots)
    if not slots:
        return copy
    originals = [slot[3] for slot in slots]
    joined = "\n".join(originals)
    redacted = _redact(joined, scan)
    if redacted == joined:
        return copy
    parts = redacted.split("\n")
    if len(parts) != joined.count("\n") + 1:
        return _copy(obj, scan, _TEXT, 0, None)
    at = 0
    for container, key, kind, original in slots:
        lines = original.count("\n") + 1
        new = parts[at] if lines == 1 else "\n".join(parts[at : at + lines])
        at += lines
        if new != original:
            if kind == _KEY:
                return _copy(obj, scan, _TEXT, 0, None)
            container[key] = _masked_id(original) if kind == _ID else new
    return copy


def _copy(obj: Any, scan: _Scan, kind: int, depth: int, slots: list | None) -> Any:
    """``obj`` copied with secret-named fields masked; every other non-empty string (and key) is noted in
    ``slots`` as ``(container, key, kind, text)`` to be redacted afterwards, or, with ``slots`` None, redacted
    on the spot (so are those of tuples, which cannot be written to afterwards)."""
    if type(obj) is str:
        return _string(obj, scan, kind)
    if depth > MAX_DEPTH and isinstance(obj, (dict, list, tuple)):
        return MASK
    if isinstance(obj, dict):
        # OTLP's {"key": NAME, "value": {...}}: the value is NAME's
        pair = kind == _TEXT and len(obj) == 2 and "value" in obj and isinstance(obj.get("key"), str)
        out: dict = {}
        for key, value in obj.items():
            inner = (_field_kind(obj["key"]) if key == "value" else _TEXT) if pair else _inner(kind, key)
            if type(key) is str and key:
                if slots is None:
                    key = _redact(key, scan)
                else:
                    slots.append((None, None, _KEY, key))
            _put(out, key, value, inner, scan, depth, slots)
        return out
    if isinstance(obj, list):
        out_list: list = [None] * len(obj)
        for index, value in enumerate(obj):
            _put(out_list, index, value, kind, scan, depth, slots)
        return out_list
    if isinstance(obj, tuple):
        return tuple(_copy(list(obj), scan, kind, depth, None))
    return obj


def _put(out: Any, key: Any, value: Any, kind: int, scan: _Scan, depth: int, slots: list | None) -> None:
    if type(value) is str:
        if slots is None or kind == _SECRET or not value:
            out[key] = _string(value, scan, kind)
        else:
            out[key] = value
            slots.append((out, key, kind, value))
    elif isinstance(value, (dict, list, tuple)):
        out[key] = _copy(value, scan, kind, depth + 1, slots)
    else:
        out[key] = value


def _string(value: str, scan: _Scan, kind: int) -> str:
    if not value:
        return value
    if kind == _SECRET:
        return MASK
    return _id(value, scan) if kind == _ID else _redact(value, scan)


_CASED_HINTS = tuple(hint for hints, folded, _, _ in _PATTERNS if not folded for hint in hints)
_FOLDED_HINTS = tuple(hint for hints, folded, _, _ in _PATTERNS if folded for hint in hints)
#: Lower-case texts one of which any secret-named field's name contains (see ``SECRET_WORDS``).
_SECRET_NAME_HINTS = ("key", "token", "passw", "secret", "credential", "authorization")


def redacted_json(
    values: list, dumps: Callable[[Any], Any], text: Callable[[Any], str] | None = None
) -> list:
    """``(value, dumps(value))`` of each value redacted (:func:`redact_value`), for a caller that stores the
    values as JSON text (the online store, ``spans.jsonl``); ``text`` picks the JSON text out of what ``dumps``
    returns when that is more than the text (the store's records: their key and text).

    Most span documents hold nothing to mask, so the texts are looked at first (the batch's at once, then each
    one's): a value whose text holds no configured secret, no hint of a key shape and no secret-named field
    is kept as it is with its text (nothing :func:`redact_value` does could change it); the others are
    redacted and serialized again. The texts are only looked at, never rewritten.
    """
    scan = _scan()
    # each secret as a JSON text holds it (escaped; with or without non-ASCII letters escaped too)
    forms = {
        json.dumps(secret, ensure_ascii=ascii)[1:-1] for secret in scan.secrets for ascii in (False, True)
    }
    dumped = [dumps(value) for value in values]
    texts = dumped if text is None else [text(d) for d in dumped]
    if not _may_change("\n".join(texts), forms):
        return list(zip(values, dumped, strict=True))
    out = []
    for value, done, seen in zip(values, dumped, texts, strict=True):
        if _may_change(seen, forms):
            value = _redact_value(value, scan)
            done = dumps(value)
        out.append((value, done))
    return out


def _may_change(text: str, secrets: set[str]) -> bool:
    """Whether :func:`redact_value` could change the value whose JSON text is ``text``: a superset."""
    for secret in secrets:
        if secret in text:
            return True
    for hint in _CASED_HINTS:
        if hint in text:
            return True
    lowered = text.lower()
    for hint in _FOLDED_HINTS:
        if hint in lowered:
            return True
    if len(lowered) != len(text):  # lower case changed the length (a few letters do): no positions to share
        return True
    for word in _SECRET_NAME_HINTS:  # a field named like a secret: its name is a JSON string holding the word
        at = lowered.find(word)
        while at != -1:
            start, end = text.rfind('"', 0, at), text.find('"', at)
            name = text[start + 1 : end]
            if start == -1 or end == -1 or "\\" in name or len(name) > 200 or _field_kind(name) == _SECRET:
                return True  # (an escaped or a long string: looked at as a value, which is exact)
            at = lowered.find(word, end)
    return False


def redact_frame(frame: Any) -> Any:
    """A copy of a pandas DataFrame with :func:`redact_value` applied to every value of its object columns
    (texts, and the dicts and lists of details columns); numeric columns are kept as they are."""
    scan = _scan()
    frame = frame.copy()
    for position in range(frame.shape[1]):
        column = frame.iloc[:, position]
        if column.dtype == object or str(column.dtype).startswith(("string", "str")):
            values = _redact_value(column.tolist(), scan)
            # the column's own type kept (a list of booleans assigned as it is would become a bool column)
            frame.isetitem(position, type(column)(values, index=frame.index, dtype=column.dtype))
    return frame


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
