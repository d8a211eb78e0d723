"""The HTTP/1.1 plumbing under ``ModelServer``: a threading server and its request handler.

Why here: reading requests off sockets (``Content-Length`` or chunked bodies), writing responses after their
delay, keep-alive, and dropping open connections on stop are transport, the same for every route; what a
request means and what to answer are the model server's (``evalkit.testing.server``). Standard library
only: ``http.server.ThreadingHTTPServer``, one thread per connection, so 64+ requests in flight are fine.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from evalkit.testing.protocol import error_response

__all__ = ["ModelHTTPServer", "ModelRequestHandler"]

logger = logging.getLogger("evalkit.testing.server")  # one logger for the whole model server


class ModelHTTPServer(ThreadingHTTPServer):
    """Threading server that remembers its open connections so ``stop`` can drop idle keep-alives."""

    daemon_threads = True
    request_queue_size = 512  # listen backlog: bursts of hundreds of new connections are not refused

    def __init__(self, address, handler, model: Any):
        self.model = model
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request, client_address):
        # A client that timed out or hung up mid-answer is normal in fault tests; anything else is a bug.
        if isinstance(sys.exc_info()[1], OSError):
            return
        logger.exception("ModelServer: error while handling a request from %s", client_address)


class ModelRequestHandler(BaseHTTPRequestHandler):
    """Reads a request, has the server's ``ModelServer`` record and answer it, and writes the answer."""

    protocol_version = "HTTP/1.1"  # keep-alive, as httpx uses it
    server_version = "evalkit-model-server/1.0"
    sys_version = ""
    timeout = 60  # idle keep-alive connections are closed after a minute
    # TCP_NODELAY: headers and body are two writes; with Nagle on, the second waits for the client's delayed
    # ACK, which costs ~40 ms per keep-alive request.
    disable_nagle_algorithm = True
    server: ModelHTTPServer

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # Not the raw request line: its query string could hold a key (``?api-key=``).
        logger.debug("ModelServer %s %s -> %s", self.command, urlsplit(self.path).path, code)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base-class signature
        logger.debug("ModelServer: " + format, *args)

    def do_POST(self) -> None:
        self._dispatch()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_POST

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _dispatch(self) -> None:
        model = self.server.model
        raw = self._read_body()
        record, key = model._record(self.command, self.path, dict(self.headers.items()), raw)
        try:
            response = model._handle(record, key)
        except Exception as exc:  # a bug here must still answer, or the client hangs until its timeout
            logger.exception("ModelServer: failed to answer %s %s", self.command, record["path"])
            response = error_response(500, f"ModelServer internal error: {type(exc).__name__}: {exc}")
        if response.delay > 0 and model._stopping.wait(response.delay):
            self.close_connection = True
            return
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(response.body)
        self.wfile.flush()
