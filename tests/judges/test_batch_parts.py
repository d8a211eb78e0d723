"""The parts of batch judging on their own: the Batch API's output lines (OpenAI's documented example and
vLLM's error shape, ``data/batch_api/SOURCE.md``), packing within the limits, the request bodies, the batch
price, the kept batch ids."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from evalkit.judges.batch.api import encode_line, limits, pack, read_output_line
from evalkit.judges.batch.journal import Journal
from evalkit.judges.batch.stand_in import PLACEHOLDER, Deferred, StandIn, request_body
from evalkit.judges.metering import Usage
from evalkit.judges.prices import Price, judge_cost

DATA = Path(__file__).parent / "data" / "batch_api"


def lines(name: str) -> list[dict]:
    return [json.loads(t) for t in (DATA / name).read_text().splitlines() if t.strip()]


def test_openais_documented_output_line_is_an_answer_the_openai_client_reads():
    answers, failures = {}, {}
    for line in lines("openai_output.jsonl"):
        read_output_line(line, answers, failures)
    assert not failures and list(answers) == ["request-2"]
    completion = openai.types.chat.ChatCompletion.model_validate(answers["request-2"])
    assert completion.choices[0].message.content == "2 + 2 equals 4."
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (24, 15)


def test_error_lines_say_why_they_failed():
    answers, failures = {}, {}
    for line in lines("error_lines.jsonl"):
        read_output_line(line, answers, failures)
    assert not answers
    assert failures["request-3"].startswith("batch_expired: This request could not be executed")
    assert failures["request-4"] == "HTTP 400: Only /v1/chat/completions is supported in the batch endpoint."
    failed = {
        "custom_id": "r5",
        "response": {"status_code": 500, "body": {"error": {"message": "overloaded"}}},
    }
    read_output_line(failed, answers, failures)
    assert failures["r5"] == "HTTP 500: overloaded"


def test_files_hold_one_model_within_the_line_and_byte_limits():
    encoded = [("a", b"x" * 10)] * 5 + [("b", b"y" * 10)] * 2 + [("a", b"z" * 10)]
    files = pack(encoded, max_lines=3, max_bytes=1000)
    assert [len(f) for f in files] == [3, 3, 2]
    assert [{m for m, _ in f} for f in files] == [{"a"}, {"a"}, {"b"}]
    assert [len(f) for f in pack(encoded[:5], max_lines=100, max_bytes=25)] == [2, 2, 1]
    assert limits({"base_url": "x", "model": "m"})[0] == 50_000
    assert limits({"azure_endpoint": "x", "azure_deployment": "d"})[0] == 100_000
    line = json.loads(encode_line("k", {"model": "m", "messages": []}, "/v1/chat/completions"))
    assert line == {
        "custom_id": "k",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "m", "messages": []},
    }


def test_the_body_is_what_create_sends_and_streams_are_not_batched():
    body = request_body(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "temperature": 0.0,
            "max_tokens": openai.NOT_GIVEN,
            "extra_headers": {"x": "y"},
            "timeout": 5,
            "extra_body": {"seed": 1},
            "stream": False,
        }
    )
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "seed": 1,
    }
    assert request_body({"model": "m", "messages": [], "stream": True}) is None


def test_a_recording_pass_answers_repeats_with_the_placeholder_and_stops_at_a_new_request():
    stand_in, usage = StandIn(), Usage()
    ask = {"model": "m", "messages": [{"role": "user", "content": "rate it"}]}
    first = stand_in.create(usage, "judge", ask, None)
    again = stand_in.create(usage, "judge", ask, None)
    assert first.choices[0].message.content == again.choices[0].message.content == PLACEHOLDER
    assert len(stand_in.pending) == 2, "two asks of one body are two lines"
    with pytest.raises(Deferred):  # may depend on the placeholder: not recorded now
        stand_in.create(
            usage, "judge", {"model": "m", "messages": [{"role": "user", "content": "next"}]}, None
        )
    assert len(stand_in.pending) == 2 and usage.requests == 0
    keys = list(stand_in.pending)
    stand_in.new_pass()
    stand_in.answers[keys[0]] = lines("openai_output.jsonl")[0]["response"]["body"]
    reply = stand_in.create(usage, "judge", ask, None)
    assert reply.choices[0].message.content == "2 + 2 equals 4." and usage.requests == 1


def test_batch_prices_default_to_half_the_ordinary_ones():
    price = Price(1.0, 4.0, source="--price")
    assert price.cost(1_000_000, 1_000_000, batch=True) == pytest.approx(2.5)
    assert Price(1.0, 4.0, batch_input=0.2).cost(1_000_000, 0, batch=True) == pytest.approx(0.2)
    judge = {"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000, "model_name": "m"}
    assert judge_cost(judge, price)["usd"] == 5.0
    assert judge_cost(judge, price, batch=True) | {"usd": 2.5} == judge_cost(judge, price, batch=True)
    assert judge_cost(judge, price, batch=True)["batch"] is True


def test_kept_batch_ids_are_owner_only_and_per_service(tmp_path):
    journal = Journal(tmp_path / "batches", "http://127.0.0.1:1/v1")
    journal.keep("batch_1", ["k1", "k2"], 1)
    assert [e["lines"] for e in journal.entries()] == [["k1", "k2"]]
    assert not Journal(tmp_path / "batches", "http://elsewhere/v1").entries()
    path = tmp_path / "batches" / "batch_1.json"
    assert path.stat().st_mode & 0o777 == 0o600 and (tmp_path / "batches").stat().st_mode & 0o777 == 0o700
    journal.drop("batch_1")
    assert not journal.entries()


def test_requests_to_another_service_are_sent_directly():
    """A judge whose client talks to another service than the batches' (a jury's second endpoint) is not
    batched: its request is sent as usual, through the real openai client."""
    from evalkit.judges.batch.stand_in import service_url
    from evalkit.testing import ModelServer

    with ModelServer() as ours, ModelServer() as theirs:
        stand_in, usage = StandIn(), Usage()
        stand_in.base_url = service_url(openai.OpenAI(base_url=ours.openai_base_url, api_key="k").base_url)
        other = openai.OpenAI(base_url=theirs.openai_base_url, api_key="k", max_retries=0).chat.completions
        ask = {"model": "m", "messages": [{"role": "user", "content": "Rate this answer from 1 to 5."}]}
        reply = stand_in.create(usage, "judge", ask, lambda: other.create(**ask), other)
        assert theirs.request_count == 1 and usage.requests == 1 and not stand_in.pending
        assert reply.choices[0].message.content != PLACEHOLDER
        same = openai.OpenAI(base_url=ours.openai_base_url + "/", api_key="k").chat.completions
        assert stand_in.create(usage, "judge", ask, None, same).choices[0].message.content == PLACEHOLDER
    azure = openai.AzureOpenAI(
        azure_endpoint="https://x.example", azure_deployment="d", api_key="k", api_version="v"
    )
    assert service_url(azure.base_url) == "https://x.example/openai"
