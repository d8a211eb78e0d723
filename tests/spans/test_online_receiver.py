"""The receiver's HTTP server: no Nagle stall, idle connections closed, one receiver per store, TLS.

Every test talks to a real receiver on loopback (raw sockets, ``http.client`` or the OpenTelemetry SDK
exporter); the TLS certificate is self-signed, made in the test with ``cryptography``.
"""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import time

import pytest

from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.spans.online.server import serve


def _request(session: str, span: int) -> bytes:
    spans = [
        {
            "traceId": f"{span:032x}",
            "spanId": f"{span:016x}",
            "name": "invoke_agent",
            "startTimeUnixNano": "1700000000000000000",
            "endTimeUnixNano": "1700000001000000000",
            "attributes": [{"key": "session.id", "value": {"stringValue": session}}],
        }
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


@pytest.fixture
def receivers(tmp_path):
    started = []

    def make(store="store", **options):
        options.setdefault("session_timeout", 60)
        server = serve(tmp_path / store, port=0, **options).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def _spans(server) -> int:
    return server.store.counts()["spans"]


def test_responses_on_a_keep_alive_connection_do_not_wait_for_delayed_acks(receivers):
    # http.server wrote the headers and the body in two segments: Nagle held the body until the client's
    # delayed ACK, about 40 ms per response. Served whole, a keep-alive round trip takes a millisecond or two.
    server = receivers()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    times = []
    for n in range(30):
        started = time.perf_counter()
        connection.request("GET", "/health")
        response = connection.getresponse()
        assert (response.status, response.read()) == (200, b"ok\n")
        times.append(time.perf_counter() - started)
        connection.request(
            "POST", "/v1/traces", body=_request("s", n + 1), headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        assert (response.status, response.read()) == (200, b"{}")
    connection.close()
    assert statistics.median(times) < 0.02, times
    assert _spans(server) == 30


def test_idle_keep_alive_connections_are_closed_after_the_idle_timeout(receivers):
    server = receivers(idle_timeout=0.5)
    body = _request("s", 1)
    used = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    used.sendall(
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    assert used.recv(65536).startswith(b"HTTP/1.1 200")
    silent = socket.create_connection(("127.0.0.1", server.port), timeout=10)  # never sends a request
    started = time.monotonic()
    assert used.recv(65536) == b""  # closed by the server, not by the 10 s socket timeout
    assert silent.recv(65536) == b""
    assert 0.4 < time.monotonic() - started < 5
    used.close()
    silent.close()


def test_idle_timeout_must_be_positive(tmp_path):
    with pytest.raises(EvalkitError, match="idle timeout"):
        serve(tmp_path / "store", idle_timeout=0)


def test_a_second_receiver_on_the_same_store_is_refused_naming_the_first(receivers, tmp_path):
    first = receivers()
    with pytest.raises(EvalkitError) as caught:
        receivers()
    message = str(caught.value)
    assert f"pid {os.getpid()}" in message and f":{first.port}/v1/traces" in message
    assert str(tmp_path / "store") in message and "--store" in message
    first.stop()
    second = receivers()  # the lock went with the first receiver
    assert second.port


def test_the_cli_refuses_a_second_receiver_with_exit_2(receivers, tmp_path):
    first = receivers()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalkit",
            "spans",
            "serve",
            "--store",
            str(tmp_path / "store"),
            "--port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("Error: ")
    assert f"pid {os.getpid()}" in done.stderr and f":{first.port}/v1/traces" in done.stderr
    assert (tmp_path / "store" / "results.jsonl").exists() is False  # the second one exported nothing


def _self_signed(folder) -> tuple:
    """A self-signed certificate for localhost and 127.0.0.1 (``cryptography``, else the ``openssl`` CLI)."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        return _openssl_self_signed(folder)
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def _openssl_self_signed(folder) -> tuple:
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", str(key_path), "-out", str(cert_path)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert_path, key_path


def test_tls_end_to_end_with_the_sdk_exporter_and_a_token(receivers, tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    cert, key = _self_signed(tmp_path)
    server = receivers(tls_cert=cert, tls_key=key, token="s3cret")
    assert server.url == f"https://127.0.0.1:{server.port}/v1/traces"

    provider = TracerProvider()
    exporter = OTLPSpanExporter(
        endpoint=server.url, certificate_file=str(cert), headers={"Authorization": "Bearer s3cret"}
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("invoke_agent", attributes={"session.id": "tls"}):
        pass
    provider.shutdown()
    assert _spans(server) == 1

    context = ssl.create_default_context(cafile=str(cert))
    connection = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=10)
    connection.request(
        "POST", "/v1/traces", body=_request("tls", 2), headers={"Content-Type": "application/json"}
    )
    assert connection.getresponse().status == 401  # TLS does not replace the token
    connection.close()

    plain = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)  # no TLS: no answer
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        plain.request("GET", "/health")
        plain.getresponse()
    plain.close()


def test_tls_files_are_checked(tmp_path):
    cert, key = _self_signed(tmp_path)
    with pytest.raises(EvalkitError, match="--tls-cert needs --tls-key"):
        serve(tmp_path / "store", tls_cert=cert)
    with pytest.raises(EvalkitError, match="no such file"):
        serve(tmp_path / "store", tls_cert=tmp_path / "missing.pem", tls_key=key)
    with pytest.raises(EvalkitError, match="cannot be loaded"):
        serve(tmp_path / "store", tls_cert=key, tls_key=cert)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::", "receiver.example"])
def test_a_token_off_loopback_without_tls_is_refused_unless_insecure(tmp_path, host):
    with pytest.raises(EvalkitError, match="--insecure") as caught:
        serve(tmp_path / "store", host=host, token="t")
    assert f"--host {host}" in str(caught.value) and "clear text" in str(caught.value)
    serve(tmp_path / "store", host=host, token="t", insecure=True)  # accepted (not started)
    serve(tmp_path / "store", host=host)  # no token: nothing to leak
    cert, key = _self_signed(tmp_path)
    serve(tmp_path / "store", host=host, token="t", tls_cert=cert, tls_key=key)
    for loopback in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        serve(tmp_path / "store", host=loopback, token="t")


def test_the_cli_refuses_a_token_off_loopback_without_tls(tmp_path, capsys):
    argv = ["spans", "serve", "--store", str(tmp_path / "s"), "--host", "0.0.0.0", "--token", "t"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and "--tls-cert" in err and "--insecure" in err
    assert not (tmp_path / "s").exists()


def test_the_cli_serves_https_with_tls_cert_and_tls_key(tmp_path):
    cert, key = _self_signed(tmp_path)
    argv = [sys.executable, "-m", "evalkit", "spans", "serve", "--store", str(tmp_path / "store"), "--port", "0",
            "--token", "t", "--tls-cert", str(cert), "--tls-key", str(key)]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("Receiving OTLP spans on https://127.0.0.1:"), (line, process.stderr.read())
        port = int(line.split("https://127.0.0.1:")[1].split("/")[0])
        context = ssl.create_default_context(cafile=str(cert))
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
        connection.request("GET", "/health")
        assert connection.getresponse().read() == b"ok\n"
        connection.close()
    finally:
        process.terminate()
        assert process.wait(30) == 0


def test_the_receiver_starts_from_a_thread_that_runs_an_event_loop(tmp_path):
    """Jupyter's kernel (and a browser driver in the same test session) run an event loop in the main thread:
    starting the receiver there must not try to run a second loop in that thread."""
    import asyncio
    import threading

    async def inside_a_running_loop():
        server = serve(tmp_path / "store", port=0, session_timeout=60).start()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            connection.request("GET", "/health")
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            server.stop()

    # In a thread of its own: the main thread of a test session may already run a loop (the browser tests').
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(asyncio.run(inside_a_running_loop())))
    thread.start()
    thread.join(timeout=60)
    assert outcome == [(200, b"ok\n")]
