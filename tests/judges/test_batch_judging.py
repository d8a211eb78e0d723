"""Batch judging (issue 17 item 3): every judge call of a run through the Batch API of ``ModelServer``.

Through the real code: azure-ai-evaluation's prompts for the built-ins, promptflow for custom ``.prompty``
judges (evalkit's shipped ``professional_tone`` and ``consistency_check``, which samples its prompty five
times a row, and promptflow's own ``eval-apology`` example as shipped, see ``test_judge_usage``), against the
model server's ``/v1/files`` and ``/v1/batches``; nothing is mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalkit
from evalkit.judges.cache import JudgeCache
from tests.judges.test_judge_usage import answers, config, document, install

pytest_plugins = ["evalkit.testing.pytest_plugin"]

REPO = Path(__file__).resolve().parents[2]
RESULT = ("result", "reason", "error", "code")


def results(scored) -> list[dict]:
    """Every evaluator's score, result, reason, error and code, and the status, per row."""
    keys = [spec["key"] for spec in scored.attrs["evalkit"]["scored"]]
    columns = [c for key in keys for c in (key, *(f"{key}_{part}" for part in RESULT)) if c in scored.columns]
    frame = scored[columns + ["status"]].astype(object)
    return frame.where(frame.notna(), None).to_dict("records")


def chat_requests(server) -> list[dict]:
    return [r for r in server.requests if r["api"] is not None]


def paths(server) -> list[str]:
    """``POST /v1/files``, ``GET /v1/batches/{id}`` ...: what the server received, ids left out."""
    import re

    ids = re.compile(r"(file|batch)[-_]evalkit\d+")
    return [r["method"] + " " + ids.sub("{id}", r["path"]) for r in server.requests]


@pytest.mark.slow  # promptflow's judges, run directly and in a batch: about 12 s
def test_batch_results_equal_the_direct_run_and_fill_the_cache(project, model_server, tmp_path):
    install(project)
    model_server.script = answers
    doc = evalkit.load(document())
    direct = evalkit.evaluate(doc, model_config=config(model_server), cache=False, progress=False)
    direct_judge = direct.attrs["evalkit"]["judge"]
    model_server.reset()

    cache = JudgeCache(tmp_path / "cache" / "judge-cache.sqlite3")
    batched = evalkit.evaluate(
        doc, model_config=config(model_server), cache=cache, progress=False, batch=True
    )
    assert results(batched) == results(direct)
    assert not chat_requests(model_server), "a batch run sends no chat-completions request"
    judge = batched.attrs["evalkit"]["judge"]
    lines = model_server.batches.lines
    # 4 rows: Relevance 4, professional_tone 4, consistency_check 4 x 5 samples, apology 4: one line each
    assert judge["calls"] == len(lines) == direct_judge["calls"] == 32
    assert (judge["prompt_tokens"], judge["completion_tokens"]) == (
        direct_judge["prompt_tokens"],
        direct_judge["completion_tokens"],
    )
    assert judge["tokens"] == direct_judge["tokens"]
    assert judge["batch"]["lines"] == 32 and len(judge["batch"]["batches"]) == 1
    assert judge["batch"]["retried"] == judge["batch"]["failed"] == 0
    # what the server received: one upload, one batch, polls, the output file; the lines are the direct bodies
    seen = paths(model_server)
    assert seen[:2] == ["POST /v1/files", "POST /v1/batches"] and seen[-1] == "GET /v1/files/{id}/content"
    assert set(seen[2:-1]) == {"GET /v1/batches/{id}"}
    sent = sorted(json.dumps(line["body"], sort_keys=True) for line in lines)
    direct_bodies = sorted(
        json.dumps(r["body"], sort_keys=True) for r in direct_server_bodies(doc, project, tmp_path)
    )
    assert sent == direct_bodies

    # the judge cache holds every judgment: a re-run is free, and makes no request at all
    assert cache.info()["entries"] == 4 + 4 + 4 + 4
    model_server.reset()
    again = evalkit.evaluate(doc, model_config=config(model_server), cache=cache, progress=False, batch=True)
    assert results(again) == results(direct)
    assert model_server.request_count == 0
    assert again.attrs["evalkit"]["judge"]["cache_hits"] == 16
    assert not list((tmp_path / "cache" / "batches").glob("*.json")), (
        "the kept batch ids are dropped when done"
    )


def direct_server_bodies(doc, project, tmp_path) -> list[dict]:
    """The bodies a direct run sends, from a fresh server."""
    from evalkit.testing import ModelServer

    with ModelServer(script=answers) as server:
        evalkit.evaluate(doc, model_config=config(server), cache=False, progress=False)
        return [r for r in server.requests]


def small_document() -> dict:
    return {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"Relevance": {}},
        "items": [
            {"prompt": "What is the capital of France?", "response": "Paris is the capital of France."},
            {"prompt": "How many days in a leap year?", "response": "A leap year has 366 days."},
            {"prompt": "Who wrote Hamlet?", "response": "William Shakespeare wrote Hamlet."},
        ],
    }


def test_a_failed_or_expired_line_is_retried_once_in_a_new_batch(model_server, tmp_path):
    doc = evalkit.load(small_document())
    direct = evalkit.evaluate(doc, model_config=config(model_server), cache=False, progress=False)
    model_server.reset()
    model_server.batches.fail_lines(1, status=500)
    model_server.batches.expire_lines(1)
    cache = JudgeCache(tmp_path / "judge-cache.sqlite3")
    batched = evalkit.evaluate(
        doc, model_config=config(model_server), cache=cache, progress=False, batch=True
    )
    assert results(batched) == results(direct)
    report = batched.attrs["evalkit"]["judge"]["batch"]
    assert len(report["batches"]) == 2 and report["retried"] == 2 and report["failed"] == 0
    first, second = report["batches"]
    lines = model_server.batches.lines
    assert [line["batch"] for line in lines] == [
        first,
        first,
        second,
        second,
    ]  # the expired line is not answered
    assert [line["status"] for line in lines] == [500, 200, 200, 200]
    # the retried lines are the ones that failed, sent again with the same custom id and body
    retried = {line["custom_id"] for line in lines if line["batch"] == second}
    assert len(retried) == 2 and retried < {line["custom_id"] for line in lines} | retried
    # calls: 3 lines answered, and the two tries that failed
    assert batched.attrs["evalkit"]["judge"]["calls"] == 5
    assert cache.info()["entries"] == 3


def test_a_line_that_fails_twice_is_an_error_naming_the_batch_and_the_line(model_server, tmp_path):
    doc = evalkit.load(small_document())
    model_server.batches.fail_lines(
        4, status=500
    )  # the 3 lines of the first batch, and the first retried one
    batched = evalkit.evaluate(
        doc,
        model_config=config(model_server),
        cache=JudgeCache(tmp_path / "c.sqlite3"),
        progress=False,
        batch=True,
    )
    report = batched.attrs["evalkit"]["judge"]["batch"]
    assert report["retried"] == 3 and report["failed"] == 1
    errors = batched["relevance_error"].dropna().tolist()
    assert len(errors) == 1 and batched["relevance"].notna().sum() == 2
    failed = model_server.batches.lines[3]
    assert failed["status"] == 500
    message = errors[0]
    assert f"batch {report['batches'][1]}, line {failed['custom_id']}" in message
    assert (
        f"first try: HTTP 500: The server had an error processing this batch line. (batch {report['batches'][0]}"
        in message
    )
    assert batched["relevance_code"].dropna().tolist() == ["evaluatorError"]
    assert message.startswith("the judge's batch line failed twice: HTTP 500: ")


@pytest.mark.slow  # a real evalkit process, started and killed: about 5 s
def test_a_run_killed_while_waiting_resumes_polling_instead_of_paying_again(model_server, tmp_path):
    doc_path = tmp_path / "doc.json"
    doc_path.write_text(json.dumps(small_document()))
    cache_folder = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_"))}
    env.update(
        PYTHONPATH=str(REPO),
        EVALKIT_CACHE_DIR=str(cache_folder),
        OPENAI_BASE_URL=model_server.openai_base_url,
        OPENAI_API_KEY="k",
        OPENAI_MODEL="judge",
    )
    model_server.batches.delay = 600  # the batch will not be done while the first process waits
    command = [
        sys.executable,
        "-m",
        "evalkit",
        "run",
        str(doc_path),
        "--batch",
        "--out",
        str(tmp_path / "out"),
    ]
    first = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not list((cache_folder / "batches").glob("*.json")):
            assert first.poll() is None, first.stdout.read().decode()
            assert time.monotonic() < deadline, "the run never kept its batch id"
            time.sleep(0.1)
        time.sleep(0.5)  # it is polling now
    finally:
        first.kill()
        first.wait()
    assert first.returncode == -9
    (kept,) = list(model_server.batches.batches)
    polls = [r for r in model_server.requests if r["path"] == f"/v1/batches/{kept}"]
    assert polls, "the killed run was polling its batch"
    model_server.batches.batches[kept]["delay"] = 0  # the batch completes meanwhile

    second = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert second.returncode in (0, 1), second.stdout + second.stderr
    assert f"Batch: 1 batch ({kept}), 1 batch resumed, 0 lines sent" in second.stdout, second.stdout
    created = [r for r in model_server.requests if r["method"] == "POST"]
    assert [r["path"] for r in created] == ["/v1/files", "/v1/batches"], "the resumed run paid nothing again"
    assert len(model_server.batches.lines) == 3
    run = json.loads((tmp_path / "out" / "results.json").read_text())
    judge = run["metadata"]["extensions"]["dev.evalkit.judge"]
    assert judge["calls"] == 3 and judge["batch"]["resumed"] == [kept]
    assert not list((cache_folder / "batches").glob("*.json"))
    cache = JudgeCache(cache_folder / "judge-cache.sqlite3")
    assert cache.info()["entries"] == 3


def azure_config(server) -> dict:
    return {
        "azure_endpoint": server.azure_endpoint,
        "azure_deployment": "judge-batch",
        "api_key": "k",
        "api_version": "2024-10-21",
    }


@pytest.mark.slow  # azure-ai-evaluation's ToolCallAccuracy, directly and in a batch: about 9 s
def test_azure_global_batch_and_azure_ai_evaluations_own_tool_call_judge(model_server, tmp_path):
    """Azure OpenAI's paths (``/openai/files``, ``/openai/batches``, ``?api-version=``, lines to
    ``/chat/completions`` for the deployment), and ToolCallAccuracy, which azure-ai-evaluation's own async
    prompty sends: the hook answers the async client the same way."""
    from opentelemetry import trace

    def agent(prompt, history):
        with trace.get_tracer("test").start_as_current_span("execute_tool fetch_weather") as span:
            span.set_attribute("gen_ai.tool.name", "fetch_weather")
            span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"location": "Seattle"}))
            span.set_attribute("gen_ai.tool.description", "Weather for a city")
        return "Rainy, 12 degrees."

    doc = evalkit.load(
        {
            "schemaVersion": "1.11.0",
            "default_evaluators": {"ToolCallAccuracy": {}, "Relevance": {}},
            "items": [{"prompt": "How is the weather in Seattle?"}, {"prompt": "And in Paris?"}],
        }
    )
    direct = evalkit.evaluate(
        doc, agent=agent, model_config=azure_config(model_server), cache=False, progress=False
    )
    model_server.reset()
    batched = evalkit.evaluate(
        doc, agent=agent, model_config=azure_config(model_server), cache=False, progress=False, batch=True
    )
    assert results(batched) == results(direct)
    assert batched["toolCallAccuracy"].notna().all() and batched["relevance"].notna().all()
    posts = [
        (r["path"], r["query"].get("api-version")) for r in model_server.requests if r["method"] == "POST"
    ]
    assert posts == [("/openai/files", "2024-10-21"), ("/openai/batches", "2024-10-21")]
    (batch,) = model_server.batches.batches.values()
    assert batch["endpoint"] == "/chat/completions"
    lines = model_server.batches.lines
    assert len(lines) == 4 and {line["body"]["model"] for line in lines} == {"judge-batch"}
    assert sum("fetch_weather" in json.dumps(line["body"]) for line in lines) == 2
    assert batched.attrs["evalkit"]["judge"]["calls"] == 4


def test_a_service_without_a_batch_api_is_a_clear_error(model_server):
    doc = evalkit.load(small_document())
    elsewhere = {"base_url": model_server.openai_base_url + "/nothing-here", "model": "judge", "api_key": "k"}
    with pytest.raises(evalkit.EnvironmentConfigError) as refused:
        evalkit.evaluate(doc, model_config=elsewhere, cache=False, progress=False, batch=True)
    message = str(refused.value)
    assert message.startswith("cannot upload the judge requests (POST files) at http://127.0.0.1:")
    assert "HTTP 404" in message and "has no Batch API" in message and "run without --batch" in message


def test_samples_are_independent_lines_and_big_runs_are_packed_in_several_files(model_server, monkeypatch):
    from evalkit.judges.batch import api

    monkeypatch.setattr(api, "limits", lambda config: (4, api.MAX_BYTES))  # 4 requests a file
    doc = evalkit.load(small_document())
    direct = evalkit.evaluate(doc, model_config=config(model_server), cache=False, progress=False, samples=3)
    model_server.reset()
    batched = evalkit.evaluate(
        doc, model_config=config(model_server), cache=False, progress=False, samples=3, batch=True
    )
    assert results(batched) == results(direct)
    report = batched.attrs["evalkit"]["judge"]["batch"]
    assert report["lines"] == 9 and len(report["batches"]) == 3  # 3 rows x 3 samples, 4 + 4 + 1
    assert [len(b["requests"]) for b in model_server.batches.batches.values()] == [4, 4, 1]
    bodies = [json.dumps(line["body"], sort_keys=True) for line in model_server.batches.lines]
    assert len(set(bodies)) == 3, "each row's three samples are three lines with the same body"
    assert len({line["custom_id"] for line in model_server.batches.lines}) == 9


def test_a_partly_cached_run_sends_only_the_missing_judgments(model_server, tmp_path):
    cache = JudgeCache(tmp_path / "judge-cache.sqlite3")
    first_two = small_document()
    first_two["items"] = first_two["items"][:2]
    evalkit.evaluate(evalkit.load(first_two), model_config=config(model_server), cache=cache, progress=False)
    model_server.reset()
    batched = evalkit.evaluate(
        evalkit.load(small_document()),
        model_config=config(model_server),
        cache=cache,
        progress=False,
        batch=True,
    )
    judge = batched.attrs["evalkit"]["judge"]
    assert judge["cache_hits"] == 2 and judge["calls"] == 1 and judge["batch"]["lines"] == 1
    assert [
        line["body"]["messages"][-1]["content"].count("Hamlet") > 0 for line in model_server.batches.lines
    ] == [True]
    assert cache.info()["hits"] == 2, "each cached judgment is read once, not once per pass"
    assert cache.info()["entries"] == 3


def test_an_azure_batch_deployment_of_its_own(model_server, monkeypatch):
    """A global batch deployment answers only batches: ``AZURE_OPENAI_BATCH_DEPLOYMENT`` names it, and the
    lines go to it while the judge (and its cache keys) stay the standard deployment."""
    monkeypatch.setenv("AZURE_OPENAI_BATCH_DEPLOYMENT", "judge-global-batch")
    doc = evalkit.load(small_document())
    direct = evalkit.evaluate(doc, model_config=azure_config(model_server), cache=False, progress=False)
    batched = evalkit.evaluate(
        doc, model_config=azure_config(model_server), cache=False, progress=False, batch=True
    )
    assert results(batched) == results(direct)
    assert {line["body"]["model"] for line in model_server.batches.lines} == {"judge-global-batch"}
    assert batched.attrs["evalkit"]["judge"]["model_name"] == "judge-batch"


TWO_STEP = '''
import json
from pathlib import Path


class TwoStep:
    """Asks the professional_tone prompty, then asks it again about its own first reason: the second request
    depends on the first answer, so a batch run needs two batch rounds."""

    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        config = dict(model_config)
        config.setdefault("type", "openai")
        self._flow = load_flow(source=str(Path(__file__).with_suffix(".prompty")), model={"configuration": config})

    def __call__(self, *, prompt="", response="", **_):
        first = self._flow(user_prompt=prompt, response=response)
        first = json.loads(first) if isinstance(first, str) else first
        second = self._flow(user_prompt=prompt, response=response + " (" + str(first.get("reason")) + ")")
        second = json.loads(second) if isinstance(second, str) else second
        return {"score": second["score"], "reason": second.get("reason", "")}
'''


@pytest.mark.slow  # promptflow's prompty, directly and in two batch rounds: about 10 s
def test_a_judge_whose_second_request_depends_on_its_first_answer_takes_two_rounds(project, model_server):
    import shutil

    home = project.custom / "two_step"
    home.mkdir()
    shutil.copy(
        REPO / "custom-evaluators" / "professional_tone" / "professional_tone.prompty",
        home / "two_step.prompty",
    )
    (home / "two_step.py").write_text(TWO_STEP)
    document = small_document()
    document["default_evaluators"] = {"two_step": {}}
    doc = evalkit.load(document)
    direct = evalkit.evaluate(doc, model_config=config(model_server), cache=False, progress=False)
    direct_bodies = sorted(json.dumps(r["body"], sort_keys=True) for r in model_server.requests)
    model_server.reset()
    batched = evalkit.evaluate(
        doc, model_config=config(model_server), cache=False, progress=False, batch=True
    )
    assert results(batched) == results(direct)
    report = batched.attrs["evalkit"]["judge"]["batch"]
    assert len(report["batches"]) == 2 and report["lines"] == 6  # the first asks, then the second ones
    sent = sorted(json.dumps(line["body"], sort_keys=True) for line in model_server.batches.lines)
    assert sent == direct_bodies, "no line was built from a placeholder answer"
    assert batched.attrs["evalkit"]["judge"]["calls"] == 6
