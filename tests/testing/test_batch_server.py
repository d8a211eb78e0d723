"""The model server's Batch API (``evalkit.testing.batches``), through the real ``openai`` client."""

from __future__ import annotations

import json
import time

import openai
import pytest

from evalkit.testing import ModelServer


def jsonl(lines) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def request(custom_id: str, model: str = "m", url: str = "/v1/chat/completions") -> dict:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": f"Rate answer {custom_id} from 1 to 5."}],
    }
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


@pytest.fixture
def server():
    with ModelServer() as running:
        yield running


@pytest.fixture
def client(server):
    return openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0)


def submit(client, lines):
    uploaded = client.files.create(file=("in.jsonl", jsonl(lines)), purpose="batch")
    return client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )


def test_a_batch_waits_its_delay_counts_its_lines_and_answers_each_like_a_chat_request(server, client):
    server.batches.delay = 0.4
    batch = submit(client, [request("a"), request("b")])
    assert batch.status == "validating" and batch.request_counts.total == 2
    assert client.batches.retrieve(batch.id).status == "in_progress"
    time.sleep(0.45)
    done = client.batches.retrieve(batch.id)
    assert done.status == "completed" and done.request_counts.completed == 2 and done.error_file_id is None
    output = [json.loads(t) for t in client.files.content(done.output_file_id).text.splitlines()]
    assert [line["custom_id"] for line in output] == ["a", "b"]
    body = output[0]["response"]["body"]
    assert output[0]["response"]["status_code"] == 200 and body["object"] == "chat.completion"
    assert body["usage"]["prompt_tokens"] > 0
    assert [line["custom_id"] for line in server.batches.lines] == ["a", "b"]
    assert client.files.retrieve(done.output_file_id).purpose == "batch_output"


def test_failed_and_expired_lines_go_to_the_error_file(server, client):
    server.batches.expire_lines(1)
    server.batches.fail_lines(1, status=503)
    batch = client.batches.retrieve(submit(client, [request("a"), request("b"), request("c")]).id)
    assert batch.status == "expired" and batch.request_counts.failed == 2
    errors = {
        json.loads(t)["custom_id"]: json.loads(t)
        for t in client.files.content(batch.error_file_id).text.splitlines()
    }
    assert errors["a"]["error"]["code"] == "batch_expired" and errors["a"]["response"] is None
    assert errors["b"]["response"]["status_code"] == 503
    output = client.files.content(batch.output_file_id).text
    assert [json.loads(t)["custom_id"] for t in output.splitlines()] == ["c"]


@pytest.mark.parametrize(
    ("lines", "code"),
    [
        ([request("a"), request("a")], "duplicate_custom_id"),
        ([request("a"), request("b", model="other")], "mixed_models"),
        ([request("a", url="/v1/embeddings")], "invalid_url"),
    ],
)
def test_an_invalid_input_file_fails_the_batch(client, lines, code):
    batch = submit(client, lines)
    assert batch.status == "failed" and batch.errors.data[0].code == code


def test_limits_cancel_and_azure_paths(server, client):
    server.batches.max_lines = 1
    assert submit(client, [request("a"), request("b")]).errors.data[0].code == "too_many_requests"
    server.batches.max_lines = 10
    server.batches.delay = 60
    batch = submit(client, [request("a")])
    assert client.batches.cancel(batch.id).status == "cancelled"
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_unknown")
    azure = openai.AzureOpenAI(
        azure_endpoint=server.azure_endpoint, api_key="k", api_version="2024-10-21", max_retries=0
    )
    uploaded = azure.files.create(
        file=("in.jsonl", jsonl([request("a", url="/chat/completions")])), purpose="batch"
    )
    server.batches.delay = 0
    made = azure.batches.create(
        input_file_id=uploaded.id, endpoint="/chat/completions", completion_window="24h"
    )
    assert azure.batches.retrieve(made.id).status == "completed"
    assert server.requests[-1]["path"] == f"/openai/batches/{made.id}"
    bare = openai.OpenAI(base_url=server.url + "/openai", api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="api-version"):
        bare.batches.retrieve(made.id)


def test_a_required_key_guards_the_batch_api_too():
    with ModelServer(require_key="right") as server:
        wrong = openai.OpenAI(base_url=server.openai_base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            wrong.files.create(file=("in.jsonl", b"{}\n"), purpose="batch")


def test_python_m_evalkit_testing_serves_the_batch_api_with_its_delay():
    from tests.testing.test_testing_main import shell_environment, start, stop

    process, lines = start("--batch-delay", "1")
    try:
        env = shell_environment(lines)
        client = openai.OpenAI(base_url=env["OPENAI_BASE_URL"], api_key=env["OPENAI_API_KEY"], max_retries=0)
        batch = submit(client, [request("a", model=env["OPENAI_MODEL"])])
        assert client.batches.retrieve(batch.id).status == "in_progress"
        time.sleep(1.05)
        done = client.batches.retrieve(batch.id)
        assert done.status == "completed" and done.request_counts.completed == 1
    finally:
        code, err = stop(process)
    assert code == 0, err
