"""The online receiver's bearer token: where it comes from, and how a request's ``Authorization`` is checked.

Where from, first found wins: ``--token TOKEN`` (``token=``; visible to every user of the machine in ``ps``,
kept for scripts that use it), ``--token-file PATH`` (``token_file=``: the file's text, one trailing newline
dropped, so ``echo $TOKEN > file`` works; the file is read through evalkit's input checks, so a FIFO or
``/dev/zero`` is refused, never waited on), else the environment variable ``EVALKIT_RECEIVER_TOKEN``. A token
must be visible ASCII (what an HTTP header can carry whole); an empty one, from any source, is refused rather
than taken as "no token".

The check: ``Authorization: <scheme> <token>`` with the scheme ``Bearer`` in any case (RFC 9110 makes
authentication schemes case-insensitive: ``bearer`` and ``BEARER`` are the same), the token compared in
constant time (``hmac.compare_digest``), so the time of a refusal does not tell how much of a guess was right.
Imports only evalkit's errors, its input file checks and the standard library.
"""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Mapping

from evalkit.documents.files.input_files import open_input
from evalkit.errors import DocumentError, EvalkitError

#: The environment variable the receiver reads its token from when no option gives one.
TOKEN_ENV = "EVALKIT_RECEIVER_TOKEN"
#: Largest token file read (a token is a line; a larger file is not a token file).
MAX_TOKEN_FILE = 64 * 1024

_VISIBLE = re.compile(r"[\x21-\x7e]+")


def receiver_token(
    token: str | None = None,
    token_file: str | os.PathLike | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The token the receiver requires, from ``token``, else ``token_file``, else ``$EVALKIT_RECEIVER_TOKEN``;
    None when none is given. ``EvalkitError`` naming the source when it is given but unusable."""
    if token is not None and token_file is not None:
        raise EvalkitError("--token and --token-file both give the receiver's token: pass one of them")
    if token is not None:
        return _checked(token, "--token")
    if token_file is not None:
        return _checked(_read(token_file), f"--token-file {token_file}")
    environ = os.environ if environ is None else environ
    if TOKEN_ENV in environ:
        return _checked(environ[TOKEN_ENV], f"the environment variable {TOKEN_ENV}")
    return None


def authorized(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header value carries ``token`` under the Bearer scheme (any case)."""
    scheme, _, credentials = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    try:
        presented = credentials.strip().encode("ascii")
    except UnicodeEncodeError:  # compare_digest takes ASCII text only; a token is ASCII, so this is no match
        return False
    return hmac.compare_digest(presented, token.encode("ascii"))


def _read(path: str | os.PathLike) -> str:
    try:
        with open_input(path, "token file") as handle:
            data = handle.read(MAX_TOKEN_FILE + 1)
    except DocumentError as exc:  # no such file, a FIFO, a device: named with the option
        raise EvalkitError(f"--token-file {exc}") from None
    if len(data) > MAX_TOKEN_FILE:
        raise EvalkitError(
            f"--token-file {path}: larger than {MAX_TOKEN_FILE // 1024} KiB; a token file holds the token alone"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalkitError(
            f"--token-file {path}: not UTF-8 text; write the token alone in the file"
        ) from None
    return text.removesuffix("\n").removesuffix("\r")


def _checked(token: str, source: str) -> str:
    if token == "":
        raise EvalkitError(
            f"{source} is empty: give the token the exporters send (Authorization: Bearer TOKEN), or none "
            "at all to accept requests without one"
        )
    if not _VISIBLE.fullmatch(token):
        raise EvalkitError(
            f"{source}: the token holds spaces, line breaks or characters outside visible ASCII, which an "
            "Authorization header cannot carry whole; use letters, digits and punctuation only"
        )
    return token
