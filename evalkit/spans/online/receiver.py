"""The HTTP server of the online receiver: aiohttp's web server on an event loop in a thread of its own.

Why aiohttp: it is already in the dependency set (the judge clients use it), and its server is well kept and
brings what a receiver facing every exporter of a fleet needs, which the standard library's ``http.server``
left to hand-written code: keep-alive with an idle timeout (a connection that sends nothing for
``idle_timeout`` seconds, before its first request or between two, is closed), a request size limit,
``TCP_NODELAY`` (the status line, headers and body leave in one write: no Nagle / delayed-ACK stall of about
40 ms per response) and TLS through an ``ssl.SSLContext``. Starlette on uvicorn would have served as well, at
the cost of two more dependencies.

The routes are those of ``intake``: ``POST /v1/traces`` and ``POST /v1/logs`` (OTLP/HTTP; the same limits,
token and answers on both), ``GET /health``, 404 elsewhere and 405 for another method on either. Decoding and
the SQLite commit run in a small thread pool, off the event loop, so one slow commit does not stall other
connections; the answer is sent only once the spans or records are committed (``Store.add_spans``,
``Store.add_records``: one group commit for both), so an acknowledged one is never lost.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import sqlite3
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aiohttp import web

from evalkit.errors import EvalkitError
from evalkit.spans.online.intake import SIGNALS, Signal
from evalkit.spans.online.receiver_token import authorized

log = logging.getLogger("evalkit.spans.online")

#: Seconds an idle keep-alive connection (or one that never sends a request) is kept open.
IDLE_TIMEOUT = 60.0

_TEXT = "text/plain; charset=utf-8"


def is_loopback(host: str) -> bool:
    """Whether ``host`` binds to loopback only (``localhost``, ``127.0.0.0/8``, ``::1``); names other than
    ``localhost`` count as reachable from the network."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def tls_context(cert: str | Path | None, key: str | Path | None) -> ssl.SSLContext | None:
    """The server's TLS context from a PEM certificate (chain) and key, or ``None`` without TLS."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        given, missing = ("--tls-cert", "--tls-key") if cert is not None else ("--tls-key", "--tls-cert")
        raise EvalkitError(f"{given} needs {missing}: pass both the certificate and its private key (PEM)")
    for option, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not Path(path).is_file():
            raise EvalkitError(f"{option} {path}: no such file; pass the PEM file of the certificate and key")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(str(cert), str(key))
    except (ssl.SSLError, OSError) as exc:
        raise EvalkitError(
            f"--tls-cert {cert} / --tls-key {key}: cannot be loaded as a PEM certificate and its private key "
            f"({getattr(exc, 'reason', None) or exc}); check that the key belongs to the certificate"
        ) from None
    return context


def _text(status: int, message: str, close: bool = False) -> web.Response:
    response = web.Response(status=status, body=message.encode(), content_type="text/plain", charset="utf-8")
    if close:
        response.force_close()
    return response


def _routes(app: Any, pool: ThreadPoolExecutor) -> web.Application:
    """The aiohttp application answering for ``app`` (an ``OnlineEvaluation``: token, max_body, ingest)."""

    def route(signal: Signal):
        async def export(request: web.Request) -> web.Response:
            return await _export(app, pool, signal, request)

        return export

    async def other(request: web.Request) -> web.Response:
        if request.method == "GET" and request.path == "/health":
            return _text(200, "ok\n")
        return _text(404, f"not found: {_WHERE}\n", close=request.method != "GET")

    # auto_decompress off: intake inflates gzip itself, with its limits (a gzip bomb is a 413)
    application = web.Application(
        client_max_size=app.max_body, handler_args={"max_field_size": 16384, "auto_decompress": False}
    )
    for name, signal in SIGNALS.items():
        application.router.add_route("*", f"/v1/{name}", route(signal))
    application.router.add_route("*", "/{tail:.*}", other)
    return application


_WHERE = "POST spans to /v1/traces, event records (OTLP logs) to /v1/logs"


async def _export(app: Any, pool: ThreadPoolExecutor, signal: Signal, request: web.Request) -> web.Response:
    """One OTLP/HTTP export request of ``signal``: checked, ingested off the loop, answered once committed."""
    if request.method != "POST":
        return _text(405, f"method not allowed: {_WHERE}\n", close=True)
    if app.token is not None and not authorized(request.headers.get("Authorization"), app.token):
        return _text(401, "missing or wrong Authorization: Bearer token\n", close=True)
    size = request.content_length
    if size is None:
        return _text(411, "Content-Length is required\n", close=True)
    if size > app.max_body:
        return _text(413, f"the body is larger than {app.max_body} bytes\n", close=True)
    body = await request.read()
    ctype, encoding = request.headers.get("Content-Type", ""), request.headers.get("Content-Encoding", "")
    try:
        status, payload, answer_type = await asyncio.get_running_loop().run_in_executor(
            pool, app.ingest, body, ctype, encoding, signal.name
        )
    except (sqlite3.Error, OSError) as exc:  # the store failed: 503 asks the exporter to retry
        log.exception("cannot store %s", signal.name)
        return _text(503, f"cannot store the {signal.item}s: {exc}\n", close=True)
    except Exception:  # evalkit's fault (intake answers 400 for what the request holds): never retried
        log.exception("cannot take %s", signal.name)
        return _text(500, "the receiver failed on this request; see its log\n", close=True)
    response = web.Response(status=status, body=payload)
    response.headers["Content-Type"] = answer_type
    return response


class ReceiverServer:
    """aiohttp serving ``app`` on ``host:port`` from a daemon thread; ``start()`` binds (``OSError`` if it
    cannot) and returns the bound port, ``stop()`` closes every connection and the loop."""

    def __init__(
        self,
        app: Any,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
        workers: int = 4,
    ):
        self.app, self.host, self.port = app, host, port
        self.ssl_context, self.idle_timeout = ssl_context, idle_timeout
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="evalkit-intake")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        # The loop runs in its own thread from the first moment: the caller's thread may be running an event
        # loop of its own (Jupyter's kernel, a test's browser driver), where run_until_complete would fail.
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="evalkit-receiver", daemon=True)
        self._thread.start()

        async def bind() -> None:
            self._runner = web.AppRunner(
                _routes(self.app, self._pool),
                access_log=None,
                keepalive_timeout=self.idle_timeout,
                handle_signals=False,
                shutdown_timeout=5.0,
            )
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.ssl_context)
            await site.start()

        try:
            asyncio.run_coroutine_threadsafe(bind(), loop).result()
        except BaseException:
            if self._runner is not None:
                asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop).result(timeout=30)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(timeout=30)
            loop.close()
            self._pool.shutdown(wait=False)
            self._loop = self._thread = None
            raise
        self.port = self._runner.addresses[0][1]
        return self.port

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return
        if self._thread is not None and self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop).result(timeout=30)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(timeout=30)
        loop.close()
        self._pool.shutdown(wait=True)
        self._loop = None
