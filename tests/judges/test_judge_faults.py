"""The fault matrix: whatever the judge model does, a run ends with a complete, valid results file."""

from __future__ import annotations

import json
import time

import jsonschema

import evalkit
from evalkit.testing import ModelServer


def document(n=8):
    return {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"Relevance": {}, "ExactMatch": {}},
        "items": [
            {"prompt": f"How many vacation days in year {i}?", "expected_response": "20", "response": "20"}
            for i in range(n)
        ],
    }


def config(server):
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


def run(server, **options):
    options = {"cache": False, "progress": False, "judge_attempts": 3, **options}
    return evalkit.evaluate(evalkit.load(document()), model_config=config(server), **options)


def assert_complete(scored, tmp_path, upstream_schema):
    """Every row has a Relevance result and a status; the deterministic evaluator kept its results."""
    assert scored["relevance_result"].isin(["pass", "fail", "error"]).all()
    assert (scored["exactMatch_result"] == "pass").all()
    assert scored["status"].isin(["pass", "fail", "partial"]).all()
    results = json.loads(evalkit.save_results(scored, tmp_path)["json"].read_text())
    jsonschema.Draft202012Validator(upstream_schema).validate(results)
    assert len(results["items"]) == len(scored)


def test_a_429_storm_is_ridden_out_with_less_concurrency(model_server, tmp_path, upstream_schema):
    model_server.fail_randomly(0.5, status=429, retry_after=0.05)
    scored = run(model_server, concurrency=8, judge_attempts=12)
    assert_complete(scored, tmp_path, upstream_schema)
    assert scored["relevance_result"].isin(["pass", "fail"]).all()
    assert model_server.request_count > len(scored)
    assert scored.attrs["evalkit"]["judge"]["throttled"] >= 1


def test_persistent_throttling_is_a_distinct_readable_error(model_server, tmp_path, upstream_schema):
    model_server.fail_randomly(
        1.0, status=429, retry_after=0.01, message="Rate limit is exceeded. Try again later."
    )
    scored = run(model_server)
    assert_complete(scored, tmp_path, upstream_schema)
    assert (scored["relevance_code"] == "judgeRateLimited").all()
    assert (
        scored.loc[0, "relevance_error"]
        == "HTTP 429: Rate limit is exceeded. Try again later. (after 3 attempts)"
    )
    assert (scored["status"] == "partial").all()


def test_server_errors_keep_the_status_and_message(model_server, tmp_path, upstream_schema):
    model_server.fail_randomly(1.0, status=500, message="upstream exploded")
    scored = run(model_server, judge_attempts=2)
    assert_complete(scored, tmp_path, upstream_schema)
    assert scored["relevance_error"].str.contains("HTTP 500: upstream exploded").all()


def test_a_hanging_judge_times_out_without_hanging_the_run(model_server, tmp_path, upstream_schema):
    model_server.fail_randomly(1.0, hang=5.0)
    started = time.monotonic()
    scored = run(model_server, judge_timeout=0.3, judge_attempts=1)
    assert time.monotonic() - started < 4
    assert_complete(scored, tmp_path, upstream_schema)
    assert (scored["relevance_code"] == "judgeTimeout").all()


def test_garbage_answers_are_unparseable_errors(model_server, tmp_path, upstream_schema):
    model_server.fail_randomly(1.0, malformed=True)
    scored = run(model_server)
    assert_complete(scored, tmp_path, upstream_schema)
    assert (scored["relevance_code"] == "judgeOutputUnparseable").all()
    assert model_server.request_count == len(scored)  # not retried


def test_connection_refused(tmp_path, upstream_schema):
    with ModelServer() as server:
        gone = config(server)
    scored = evalkit.evaluate(
        evalkit.load(document()), model_config=gone, cache=False, progress=False, judge_attempts=2
    )
    assert_complete(scored, tmp_path, upstream_schema)
    assert scored["relevance_error"].str.startswith("cannot reach the judge model").all()
