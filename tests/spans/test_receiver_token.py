"""The receiver's bearer token (issue 29, item 6): from ``--token``, ``--token-file`` or
``EVALKIT_RECEIVER_TOKEN``; the scheme in any case; compared in constant time."""

from __future__ import annotations

import hmac
import http.client
import json
import os
import subprocess
import sys

import pytest

from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.spans.online import receiver_token as module
from evalkit.spans.online.receiver_token import TOKEN_ENV, authorized, receiver_token
from evalkit.spans.online.server import serve

SPAN = {
    "traceId": "0" * 31 + "1",
    "spanId": "0" * 15 + "1",
    "name": "invoke_agent",
    "startTimeUnixNano": "1",
    "endTimeUnixNano": "2",
    "attributes": [{"key": "session.id", "value": {"stringValue": "s"}}],
}
BODY = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [SPAN]}]}]}).encode()


def _post(port: int, authorization: str | None) -> int:
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/v1/traces", body=BODY, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_scheme_is_case_insensitive(scheme):
    assert authorized(f"{scheme} s3cret", "s3cret")
    assert authorized(f"  {scheme}   s3cret  ", "s3cret")


@pytest.mark.parametrize(
    "header", [None, "", "s3cret", "Basic s3cret", "Bearer", "Bearer s3cre", "Bearer s3cret2", "Bearers3cret",
               "Bearer s3crét", "Bearer s3cret s3cret"],
)  # fmt: skip
def test_anything_else_is_refused(header):
    assert not authorized(header, "s3cret")


def test_the_token_is_compared_with_hmac_compare_digest(monkeypatch):
    calls, compare = [], hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(module.hmac, "compare_digest", spy)
    assert authorized("bearer s3cret", "s3cret") and not authorized("Bearer guess", "s3cret")
    assert calls == [(b"s3cret", b"s3cret"), (b"guess", b"s3cret")]


def test_where_the_token_comes_from(tmp_path):
    path = tmp_path / "token"
    path.write_text("from-file\n")
    environ = {TOKEN_ENV: "from-env"}
    assert receiver_token("from-flag", None, environ) == "from-flag"
    assert receiver_token(None, path, environ) == "from-file"  # one trailing newline dropped
    assert receiver_token(None, None, environ) == "from-env"
    assert receiver_token(None, None, {}) is None
    with pytest.raises(EvalkitError, match="--token and --token-file both give the receiver's token"):
        receiver_token("a", path, {})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "--token-file {path} is empty: give the token the exporters send"),
        ("\n", "--token-file {path} is empty"),
        (
            "two words\n",
            "--token-file {path}: the token holds spaces, line breaks or characters outside visible",
        ),
        ("a\nb\n", "--token-file {path}: the token holds spaces, line breaks"),
    ],
)
def test_an_unusable_token_file_is_named(tmp_path, content, message):
    path = tmp_path / "token"
    path.write_text(content)
    with pytest.raises(EvalkitError) as caught:
        receiver_token(None, path, {})
    assert str(caught.value).startswith(message.format(path=path))


def test_a_missing_file_a_fifo_and_an_empty_variable_are_refused_without_waiting(tmp_path):
    with pytest.raises(EvalkitError, match=f"--token-file {tmp_path / 'missing'}: no such file"):
        receiver_token(None, tmp_path / "missing", {})
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(EvalkitError, match=f"--token-file {fifo}: "):
        receiver_token(None, fifo, {})  # refused, not a read that waits for a writer
    with pytest.raises(EvalkitError, match=f"the environment variable {TOKEN_ENV} is empty"):
        receiver_token(None, None, {TOKEN_ENV: ""})


def test_a_receiver_with_a_token_file_accepts_any_case_of_the_scheme(tmp_path):
    path = tmp_path / "token"
    path.write_text("s3cret\n")
    server = serve(tmp_path / "store", port=0, session_timeout=60, token_file=path).start()
    try:
        assert [_post(server.port, f"{scheme} s3cret") for scheme in ("Bearer", "bearer", "BEARER")] == [
            200
        ] * 3
        assert _post(server.port, "Bearer wrong") == 401
        assert _post(server.port, None) == 401
    finally:
        server.stop()


def test_the_cli_takes_the_token_from_the_environment_and_keeps_it_out_of_ps(tmp_path):
    env = {**os.environ, TOKEN_ENV: "env-s3cret"}
    argv = [
        sys.executable,
        "-m",
        "evalkit",
        "spans",
        "serve",
        "--store",
        str(tmp_path / "store"),
        "--port",
        "0",
    ]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = process.stdout.readline()
        assert line.startswith("Receiving OTLP spans on http://127.0.0.1:"), (line, process.stderr.read())
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        assert _post(port, None) == 401
        assert _post(port, "bearer env-s3cret") == 200
        with open(f"/proc/{process.pid}/cmdline", "rb") as handle:  # what ps shows
            assert b"env-s3cret" not in handle.read()
    finally:
        process.terminate()
        assert process.wait(30) == 0


def test_the_cli_names_a_bad_token_file_with_exit_2(tmp_path, capsys):
    argv = ["spans", "serve", "--store", str(tmp_path / "s"), "--port", "0"]
    assert main([*argv, "--token-file", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err == f"Error: --token-file {tmp_path / 'missing'}: no such file\n"
    assert not (tmp_path / "s").exists()
    with pytest.raises(SystemExit):  # argparse: the two options exclude each other
        main([*argv, "--token", "a", "--token-file", str(tmp_path / "t")])
    assert "not allowed with argument" in capsys.readouterr().err
