"""The model server's Batch API: ``/v1/files`` and ``/v1/batches``, OpenAI and Azure OpenAI style.

Why: evalkit's batch judging (``evalkit.judges.batch``) uploads JSONL files of chat-completions requests,
creates batches, polls them and downloads their output and error files. Tests and the demo must do all of it
offline, through the real ``openai`` client, so ``ModelServer`` serves the same endpoints:

    ``POST /v1/files`` (multipart: ``purpose``, ``file``), ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``
    ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``), ``GET /v1/batches/{id}``,
    ``POST /v1/batches/{id}/cancel``, ``GET /v1/batches``
    Azure OpenAI: the same under ``/openai/files`` and ``/openai/batches`` with ``?api-version=`` (a 400
    without it); the lines' ``url`` is ``/chat/completions`` there, ``/v1/chat/completions`` on OpenAI.

A batch is ``validating`` when created, ``in_progress`` while its ``delay`` runs (``request_counts.completed``
grows with the time elapsed), then ``finalizing`` for an instant and ``completed``. Its lines are answered
when it completes, each like a chat-completions request (the server's script, else the heuristic judge;
``Reply.status`` != 200 gives a failed line). ``fail_lines(n)`` makes the next ``n`` lines answered fail
(``status``, in the error file); ``expire_lines(n)`` makes the next ``n`` lines unfinished, and their batch
``expired`` (the completed lines in the output file, the expired ones in the error file with code
``batch_expired``, as the OpenAI API does). ``garble_lines(n, text)`` writes the next ``n`` answered lines
of the output file as ``text`` instead (a broken or hostile service: not JSON, or a JSON array), and
``repeat_output = True`` writes every output line twice (each ``custom_id`` repeated). An input file that is not valid JSONL, repeats a ``custom_id``,
mixes models or urls, or is over ``max_lines`` / ``max_bytes`` makes the batch ``failed`` with ``errors``.

Every line answered is kept in ``lines`` (``batch``, ``custom_id``, ``body``, ``status``) for tests; the
HTTP requests themselves are in ``ModelServer.requests`` as usual. Standard library only.

May import: ``evalkit.testing.protocol``, ``evalkit.testing.answers``.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import re
import threading
import time
from typing import Any

from evalkit.testing.answers import Reply
from evalkit.testing.protocol import Response, chat_response, error_response, json_response

__all__ = ["BatchService", "is_batch_path"]

_PATH = re.compile(
    r"^(?:/v1|/openai|/openai/v1)/(?P<kind>files|batches)(?:/(?P<id>[^/]+))?(?:/(?P<verb>[a-z]+))?$"
)
#: The OpenAI limits of one input file (requests, bytes); Azure's global batch allows 100,000 requests.
DEFAULT_MAX_LINES = 50_000
DEFAULT_MAX_BYTES = 200 * 1024 * 1024


def is_batch_path(path: str) -> bool:
    """Whether ``path`` is one of the Files / Batches endpoints this module serves."""
    return _PATH.match(path) is not None


class BatchService:
    """Files and batches in memory for one ``ModelServer`` (see the module docstring)."""

    def __init__(self, server, delay: float = 0.0):
        self.server = server
        self.delay = delay  # seconds from creation to completion
        self.max_lines = DEFAULT_MAX_LINES
        self.max_bytes = DEFAULT_MAX_BYTES
        self.lines: list[dict] = []
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self._failing: list[int] = []  # statuses of the next lines that fail
        self._expiring = 0
        self._garbled: list[str] = []  # what the next answered lines are written as in the output file
        self.repeat_output = False
        self._ids = itertools.count(1)
        self._lock = threading.RLock()

    # What tests set ---------------------------------------------------------------------------------------
    def fail_lines(self, n: int = 1, status: int = 500) -> None:
        """The next ``n`` batch lines answered fail with HTTP ``status`` (in the error file)."""
        with self._lock:
            self._failing.extend([int(status)] * n)

    def expire_lines(self, n: int = 1) -> None:
        """The next ``n`` batch lines are not done in time: their batch ends ``expired``."""
        with self._lock:
            self._expiring += n

    def garble_lines(self, n: int = 1, text: str = "not json") -> None:
        """The next ``n`` answered lines are written as ``text`` in the output file (not their JSON)."""
        with self._lock:
            self._garbled.extend([text] * n)

    def reset(self) -> None:
        with self._lock:
            self.lines.clear()
            self._failing.clear()
            self._garbled.clear()
            self._expiring = 0
            self.repeat_output = False

    # Routing ----------------------------------------------------------------------------------------------
    def handle(self, record: dict) -> Response:
        match = _PATH.match(record["path"])
        azure = record["path"].startswith("/openai/") and not record["path"].startswith("/openai/v1/")
        if azure and not record["query"].get("api-version"):
            return error_response(400, "Missing required query parameter 'api-version'.")
        kind, ident, verb = match["kind"], match["id"], match["verb"]
        method = record["method"]
        with self._lock:
            if kind == "files":
                if method == "POST" and ident is None:
                    return self._upload(record)
                if method == "GET" and ident is not None:
                    return self._file(ident, content=verb == "content")
            else:
                if method == "POST" and ident is None:
                    return self._create(record, azure)
                if method == "GET" and ident is None:
                    return json_response(
                        200, {"object": "list", "data": [self._view(b) for b in self.batches.values()]}
                    )
                if method == "GET" and verb is None:
                    return self._retrieve(ident)
                if method == "POST" and verb == "cancel":
                    return self._cancel(ident)
        return error_response(405, f"{method} is not allowed on {record['path']}.")

    # Files ------------------------------------------------------------------------------------------------
    def _upload(self, record: dict) -> Response:
        fields = _multipart(record)
        if fields is None or "file" not in fields:
            return error_response(
                400, "Upload a file as multipart/form-data with the fields 'purpose' and 'file'."
            )
        data, filename = fields["file"]
        purpose = fields.get("purpose", (b"", None))[0].decode()
        return json_response(200, self._add_file(data, filename or "upload.jsonl", purpose))

    def _add_file(self, data: bytes, filename: str, purpose: str) -> dict:
        ident = f"file-evalkit{next(self._ids):06d}"
        self.files[ident] = {
            "data": data,
            "filename": filename,
            "purpose": purpose,
            "created_at": int(time.time()),
        }
        return self._file_object(ident)

    def _file_object(self, ident: str) -> dict:
        entry = self.files[ident]
        return {
            "id": ident,
            "object": "file",
            "bytes": len(entry["data"]),
            "created_at": entry["created_at"],
            "filename": entry["filename"],
            "purpose": entry["purpose"],
            "status": "processed",
        }

    def _file(self, ident: str, content: bool) -> Response:
        if ident not in self.files:
            return error_response(404, f"No such File object: {ident}")
        if not content:
            return json_response(200, self._file_object(ident))
        return Response(200, self.files[ident]["data"], {"Content-Type": "application/octet-stream"})

    # Batches ----------------------------------------------------------------------------------------------
    def _create(self, record: dict, azure: bool) -> Response:
        body = record["body"] if isinstance(record["body"], dict) else {}
        source = body.get("input_file_id")
        if source not in self.files:
            return error_response(400, f"input_file_id {source!r} is not an uploaded file.")
        endpoint = body.get("endpoint")
        if endpoint not in ("/v1/chat/completions", "/chat/completions"):
            return error_response(400, f"endpoint {endpoint!r} is not supported: use /v1/chat/completions.")
        now = time.time()
        ident = f"batch_evalkit{next(self._ids):06d}"
        batch = {
            "id": ident,
            "input_file_id": source,
            "endpoint": endpoint,
            "completion_window": body.get("completion_window") or "24h",
            "metadata": body.get("metadata"),
            "created": now,
            "status": "validating",
            "errors": None,
            "output_file_id": None,
            "error_file_id": None,
            "total": 0,
            "delay": float(self.delay or 0.0),
            "done_at": None,
        }
        requests, errors = self._read_input(
            self.files[source]["data"], "/chat/completions" if azure else "/v1/chat/completions"
        )
        batch["requests"], batch["total"] = requests, len(requests)
        if errors:
            batch.update(status="failed", errors={"object": "list", "data": errors}, done_at=now)
        self.batches[ident] = batch
        return json_response(200, self._view(batch))

    def _read_input(self, data: bytes, url: str) -> tuple[list[dict], list[dict]]:
        """The requests of an input file, or the errors that fail the batch."""
        if len(data) > self.max_bytes:
            return [], [_error("file_too_large", f"The input file is over {self.max_bytes} bytes.")]
        requests, seen, models, errors = [], set(), set(), []
        for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
                custom_id, body = line["custom_id"], line["body"]
            except (ValueError, KeyError, TypeError):
                errors.append(
                    _error("invalid_json_line", f"Line {number} is not a JSON request line.", number)
                )
                continue
            if custom_id in seen:
                errors.append(_error("duplicate_custom_id", f"custom_id {custom_id!r} is repeated.", number))
            if line.get("url") != url:
                errors.append(
                    _error("invalid_url", f"Line {number} has url {line.get('url')!r}, not {url}.", number)
                )
            seen.add(custom_id)
            models.add(body.get("model") if isinstance(body, dict) else None)
            requests.append({"custom_id": custom_id, "body": body})
        if len(requests) > self.max_lines:
            errors.append(_error("too_many_requests", f"The input file has over {self.max_lines} requests."))
        if len(models) > 1:
            errors.append(_error("mixed_models", "An input file may hold requests for one model only."))
        return requests, errors

    def _retrieve(self, ident: str) -> Response:
        if ident not in self.batches:
            return error_response(404, f"No such Batch object: {ident}")
        batch = self.batches[ident]
        self._advance(batch)
        return json_response(200, self._view(batch))

    def _cancel(self, ident: str) -> Response:
        if ident not in self.batches:
            return error_response(404, f"No such Batch object: {ident}")
        batch = self.batches[ident]
        self._advance(batch)
        if batch["status"] in ("validating", "in_progress"):
            batch.update(status="cancelled", done_at=time.time())
        return json_response(200, self._view(batch))

    def _advance(self, batch: dict) -> None:
        """Move the batch on by the time elapsed; answer its lines when its delay is over."""
        if batch["status"] not in ("validating", "in_progress"):
            return
        if time.time() - batch["created"] < batch["delay"]:
            batch["status"] = "in_progress"
            return
        self._answer(batch)

    def _answer(self, batch: dict) -> None:
        outputs, failures = [], []
        expired = False
        for number, request in enumerate(batch["requests"]):
            line_id = f"batch_req_{batch['id']}_{number:06d}"
            if self._expiring > 0:
                self._expiring -= 1
                expired = True
                failures.append(
                    {
                        "id": line_id,
                        "custom_id": request["custom_id"],
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "This request could not be executed before the completion window expired.",
                        },
                    }
                )
                continue
            status, payload = self._line(batch, number, request)
            entry = {
                "id": line_id,
                "custom_id": request["custom_id"],
                "error": None,
                "response": {"status_code": status, "request_id": line_id, "body": payload},
            }
            if status == 200 and self._garbled:
                entry = self._garbled.pop(0)
            (outputs if status == 200 else failures).append(entry)
        if self.repeat_output:
            outputs = [entry for entry in outputs for _ in range(2)]
        if outputs:
            batch["output_file_id"] = self._add_file(_jsonl(outputs), "batch_output.jsonl", "batch_output")[
                "id"
            ]
        if failures:
            batch["error_file_id"] = self._add_file(_jsonl(failures), "batch_errors.jsonl", "batch_output")[
                "id"
            ]
        batch["completed"] = len(outputs)
        batch["failed"] = len(failures)
        batch["status"] = "expired" if expired else "completed"
        batch["done_at"] = time.time()

    def _line(self, batch: dict, number: int, request: dict) -> tuple[int, Any]:
        """One line answered as the chat-completions endpoint answers it: (status, body)."""
        body = request["body"] if isinstance(request["body"], dict) else {}
        record = {
            "index": len(self.lines),
            "body": body,
            "model": body.get("model"),
            "path": batch["endpoint"],
            "api": "batch",
            "query": {},
            "headers": {},
            "method": "POST",
            "time": time.time(),
        }
        if self._failing:
            reply = Reply(
                status=self._failing.pop(0), content="The server had an error processing this batch line."
            )
        elif not isinstance(body.get("messages"), list):
            reply = Reply(status=400, content="The request body must be a JSON object with 'messages'.")
        else:
            reply = self.server._scripted(record)
        response = chat_response(record, reply, delay=0.0)
        self.lines.append(
            {
                "batch": batch["id"],
                "custom_id": request["custom_id"],
                "body": body,
                "status": response.status,
                "usage": record.get("usage"),
            }
        )
        return response.status, json.loads(response.body)

    def _view(self, batch: dict) -> dict:
        """The Batch object of the API."""
        status, created = batch["status"], batch["created"]
        total = batch["total"]
        if status in ("validating", "in_progress"):
            share = min(1.0, (time.time() - created) / batch["delay"]) if batch["delay"] else 0.0
            counts = {"total": total, "completed": int(total * share), "failed": 0}
        else:
            counts = {
                "total": total,
                "completed": batch.get("completed", 0),
                "failed": batch.get("failed", 0),
            }
        done = int(batch["done_at"]) if batch["done_at"] else None
        return {
            "id": batch["id"],
            "object": "batch",
            "endpoint": batch["endpoint"],
            "errors": batch["errors"],
            "input_file_id": batch["input_file_id"],
            "completion_window": batch["completion_window"],
            "status": status,
            "output_file_id": batch["output_file_id"],
            "error_file_id": batch["error_file_id"],
            "created_at": int(created),
            "in_progress_at": int(created) if status != "failed" else None,
            "expires_at": int(created) + 86400,
            "finalizing_at": done if status in ("completed", "expired") else None,
            "completed_at": done if status == "completed" else None,
            "failed_at": done if status == "failed" else None,
            "expired_at": done if status == "expired" else None,
            "cancelled_at": done if status == "cancelled" else None,
            "request_counts": counts,
            "metadata": batch["metadata"],
        }


def _error(code: str, message: str, line: int | None = None) -> dict:
    return {"code": code, "message": message, "param": None, "line": line}


def _jsonl(entries: list[dict | str]) -> bytes:
    """JSON lines; a string entry (``garble_lines``) is written as it is."""
    return "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in entries).encode()


def _multipart(record: dict) -> dict[str, tuple[bytes, str | None]] | None:
    """``{field: (bytes, filename)}`` of a multipart/form-data request, or None."""
    kind = record["headers"].get("content-type", "")
    if not kind.startswith("multipart/form-data"):
        return None
    raw = record["body"]
    raw = raw.encode("utf-8") if isinstance(raw, str) else json.dumps(raw).encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {kind}\r\n\r\n".encode() + raw
    )
    if not message.is_multipart():
        return None
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields[name] = (part.get_payload(decode=True) or b"", part.get_filename())
    return fields
