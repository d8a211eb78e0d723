"""The Batch API of OpenAI and of Azure OpenAI's global batch deployments, through the ``openai`` client.

One batch is: the requests as a JSONL file (one ``{"custom_id", "method": "POST", "url", "body"}`` a line)
uploaded to ``/v1/files`` with purpose ``batch``; ``/v1/batches`` created on it for the chat-completions
endpoint with the ``24h`` completion window; retrieved until its status is final; then its output file
(the lines that succeeded) and error file (the lines that failed or expired) downloaded by file id.

OpenAI: lines' and batch's endpoint ``/v1/chat/completions``; at most 50,000 requests and 200 MB a file.
Azure OpenAI (``openai.AzureOpenAI``: ``{endpoint}/openai/files`` and ``/openai/batches`` with
``?api-version=``, 2024-10-21 or later): endpoint ``/chat/completions``, the body's ``model`` is the global
batch deployment's name: the judge's deployment, or ``AZURE_OPENAI_BATCH_DEPLOYMENT`` when the batch
deployment is another one (a global batch deployment answers only batches); at most 100,000 requests and
200 MB a file. A file also holds one model only.
evalkit packs below those limits (``pack``), leaving a margin on the bytes for the multipart framing.

The output and error files are the service's text, read line by line through evalkit's one bounded JSON
parser (``evalkit.documents.json_input``). A line that is not a JSON object with a string ``custom_id`` (not
JSON, an array, nested too deeply) answers nothing: the lines of the batch left without a result fail with
its description (retried once, then an error result naming the batch and the line). A ``custom_id`` on more
than one line is warned about (the last line is the one kept).

May import: ``evalkit.judges.models``, ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable

from evalkit.documents.json_input import JsonInputError, clip, parse_json_text
from evalkit.documents.redaction import redact, redact_url
from evalkit.errors import EnvironmentConfigError

log = logging.getLogger("evalkit.judges")

#: Final states of a batch; the others are validating, in_progress, finalizing, cancelling.
FINAL = ("completed", "failed", "expired", "cancelled")
MAX_BYTES = 190 * 1024 * 1024  # 200 MB, less a margin


def limits(config: dict) -> tuple[int, int]:
    """(requests, bytes) one input file may hold at the judge's service."""
    return (100_000 if "azure_endpoint" in config else 50_000), MAX_BYTES


BATCH_DEPLOYMENT = "AZURE_OPENAI_BATCH_DEPLOYMENT"


def batch_model(config: dict) -> str | None:
    """The Azure OpenAI deployment batches go to when not the judge's own (``AZURE_OPENAI_BATCH_DEPLOYMENT``)."""
    if "azure_endpoint" not in config:
        return None
    return os.environ.get(BATCH_DEPLOYMENT, "").strip() or None


def endpoint_of(config: dict) -> str:
    """Where the judge's batches live (credentials in a URL removed): what a kept batch id belongs to."""
    if "azure_endpoint" in config:
        deployment = batch_model(config) or config.get("azure_deployment")
        return redact_url(str(config["azure_endpoint"]).rstrip("/")) + "#" + str(deployment)
    return redact_url(str(config.get("base_url", "")).rstrip("/"))


def encode_line(custom_id: str, body: dict, url: str) -> bytes:
    line = {"custom_id": custom_id, "method": "POST", "url": url, "body": body}
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
        "utf-8", "surrogatepass"
    )


def pack(lines: Iterable[tuple[str, bytes]], max_lines: int, max_bytes: int) -> list[list[tuple[str, bytes]]]:
    """``(model, encoded line)`` pairs in files of one model, at most ``max_lines`` lines and ``max_bytes``."""
    files: list[list[tuple[str, bytes]]] = []
    open_file: dict[str, tuple[list, list[int]]] = {}
    for model, data in lines:
        current, size = open_file.get(model, (None, [0]))
        if current is None or len(current) >= max_lines or size[0] + len(data) > max_bytes:
            current, size = [], [0]
            files.append(current)
            open_file[model] = (current, size)
        current.append((model, data))
        size[0] += len(data)
    return files


class BatchAPI:
    """Upload, create, retrieve and download batches on the judge's service."""

    def __init__(self, config: dict, timeout: float = 120.0):
        from evalkit.judges.models import judge_client

        client, _ = judge_client(config, timeout=timeout)
        self.client = client.with_options(max_retries=3)  # transient errors of the bookkeeping calls
        self.azure = "azure_endpoint" in config
        self.url = "/chat/completions" if self.azure else "/v1/chat/completions"
        self.max_lines, self.max_bytes = limits(config)
        self.endpoint = endpoint_of(config)
        self.model = batch_model(config)  # None: each body's own model

    def line(self, custom_id: str, body: dict) -> tuple[str, bytes]:
        """(model, the encoded JSONL line) of one request."""
        if self.model:
            body = {**body, "model": self.model}
        return str(body.get("model")), encode_line(custom_id, body, self.url)

    def submit(self, data: bytes) -> str:
        """Upload one JSONL file and create its batch; the batch id."""
        with self._refused("upload the judge requests (POST files)"):
            uploaded = self.client.files.create(file=("evalkit-judge-batch.jsonl", data), purpose="batch")
        with self._refused("create the batch (POST batches)"):
            batch = self.client.batches.create(
                input_file_id=uploaded.id,
                endpoint=self.url,
                completion_window="24h",
                metadata={"made_by": "evalkit"},
            )
        return batch.id

    def retrieve(self, batch_id: str):
        """The batch object, or None when the service does not know the id (a 404)."""
        import openai

        try:
            with self._refused(f"poll batch {batch_id}", missing_ok=True):
                return self.client.batches.retrieve(batch_id)
        except openai.NotFoundError:
            return None

    @contextlib.contextmanager
    def _refused(self, what: str, missing_ok: bool = False):
        """The service's refusals as errors that say what to do, not tracebacks."""
        import openai

        try:
            yield
        except openai.APIStatusError as exc:
            status = exc.response.status_code
            if missing_ok and status == 404:
                raise
            detail = redact(f"HTTP {status}: {getattr(exc, 'message', exc)}")
            if status in (404, 405):
                fix = (
                    "it has no Batch API (OpenAI and Azure OpenAI global batch deployments have one): run "
                    "without --batch / batch=True to judge directly"
                )
            elif status in (401, 403):
                fix = "check the judge's key or sign-in, and that it may use the Batch API"
            else:
                fix = "try again later; batches already sent are kept and a new run resumes them"
            raise EnvironmentConfigError(f"cannot {what} at {self.endpoint} ({detail}): {fix}") from None
        except openai.APIConnectionError as exc:
            raise EnvironmentConfigError(
                f"cannot {what}: the judge service at {self.endpoint} cannot be reached ({exc}); batches "
                "already sent are kept and a new run resumes them"
            ) from None

    def results(self, batch) -> tuple[dict[str, dict], dict[str, str]]:
        """``({custom_id: response body}, {custom_id: why it failed})`` of a batch in a final state."""
        answers: dict[str, dict] = {}
        failures: dict[str, str] = {}
        unreadable: list[str] = []
        repeated: dict[str, None] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            with self._refused(f"download the results of batch {batch.id} (GET files/{file_id}/content)"):
                content = self.client.files.content(file_id).text
            for number, text in enumerate(content.splitlines(), 1):
                if not text.strip():
                    continue
                line, problem = _output_line(text)
                if problem is not None:
                    unreadable.append(f"line {number} of its file {file_id} {problem}")
                    continue
                if line["custom_id"] in answers or line["custom_id"] in failures:
                    repeated[line["custom_id"]] = None
                read_output_line(line, answers, failures)
        if repeated:
            log.warning(
                "judge batch %s: its results name %d custom id(s) on more than one line (%s); the last line of "
                "each is kept",
                batch.id,
                len(repeated),
                ", ".join(list(repeated)[:3]) + (", ..." if len(repeated) > 3 else ""),
            )
        if batch.status != "completed" and not answers and not failures:
            why = _batch_errors(batch) or f"the batch ended {batch.status}"
            failures["*"] = why
        if unreadable and "*" not in failures:
            more = f" (and {len(unreadable) - 1} more)" if len(unreadable) > 1 else ""
            failures["*"] = f"no result read from batch {batch.id}: {unreadable[0]}{more}"
        return answers, failures


def _output_line(text: str) -> tuple[dict, None] | tuple[None, str]:
    """``(line, None)`` for a line of an output or error file that is a JSON object with a string
    ``custom_id``; else ``(None, why it answers nothing)``."""
    try:
        line = parse_json_text(text)
    except JsonInputError as exc:
        return None, f"is not JSON evalkit reads ({exc}): {clip(text)!r}"
    if not isinstance(line, dict):
        return None, f"is not a JSON object: {clip(text)!r}"
    if not isinstance(line.get("custom_id"), str):
        return None, f"has no custom_id: {clip(text)!r}"
    return line, None


def read_output_line(line: dict, answers: dict, failures: dict) -> None:
    """File one line of an output or error file: its response body in ``answers``, or why it failed in
    ``failures`` (by ``custom_id``).

    A line succeeded when it has no ``error`` and its ``response`` has ``status_code`` 200 and a body. A failed
    one has an ``error`` (OpenAI: ``{"code", "message"}``, e.g. ``batch_expired``; vLLM's ``run_batch``: a
    string) or a response with another status, whose body holds the API's error object.
    """
    custom_id = line.get("custom_id")
    response = line.get("response") if isinstance(line.get("response"), dict) else {}
    error = line.get("error")
    status = response.get("status_code")
    if not error and status == 200 and isinstance(response.get("body"), dict):
        answers[custom_id] = response["body"]
        return
    if isinstance(error, dict):
        failures[custom_id] = f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
        return
    if error:
        failures[custom_id] = f"HTTP {status}: {error}" if status else str(error)
        return
    body = response.get("body") or {}
    inner = body.get("error") if isinstance(body, dict) else None
    message = inner.get("message") if isinstance(inner, dict) else str(body)[:200]
    failures[custom_id] = f"HTTP {status}: {message}"


def _batch_errors(batch) -> str:
    errors = getattr(batch, "errors", None)
    data = getattr(errors, "data", None) or []
    return "; ".join(f"{e.code}: {e.message}" for e in data[:3])
