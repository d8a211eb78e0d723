"""LLM judges end to end against the local model server, through the real openai / promptflow /
azure-ai-evaluation code: built-ins, custom .prompty judges, the cache, faults, and key hygiene."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import evalkit

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-test-SECRET-4242"


def document(n=3, evaluators=None):
    return {
        "schemaVersion": "1.11.0",
        "default_evaluators": evaluators if evaluators is not None else {"Relevance": {}, "Coherence": {}},
        "items": [
            {
                "prompt": f"How many vacation days do employees get in year {i}?",
                "expected_response": "Employees get 20 vacation days per year.",
                "response": "Employees get 20 vacation days per year."
                if i % 2 == 0
                else "The cafeteria opens at noon.",
            }
            for i in range(n)
        ],
    }


def openai_config(server):
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": SECRET}


def azure_config(server):
    return {
        "azure_endpoint": server.azure_endpoint,
        "azure_deployment": "judge",
        "api_version": "2024-12-01-preview",
        "api_key": SECRET,
    }


@pytest.mark.parametrize("config", [openai_config, azure_config], ids=["openai", "azure"])
def test_builtin_judges_score_through_azure_ai_evaluation(model_server, config):
    scored = evalkit.evaluate(evalkit.load(document()), model_config=config(model_server), progress=False)
    assert model_server.request_count == 6
    for key in ("relevance", "coherence"):
        assert scored[key].between(1, 5).all()
        assert (scored[f"{key}_threshold"] == 3).all()
        expected = ["pass" if s >= 3 else "fail" for s in scored[key]]
        assert scored[f"{key}_result"].tolist() == expected
    # The heuristic judge scores an on-topic answer above an off-topic one.
    assert scored.loc[0, "relevance"] > scored.loc[1, "relevance"]
    judge = scored.attrs["evalkit"]["judge"]
    assert judge["calls"] == 6 and judge["prompt_tokens"] > 0 and judge["completion_tokens"] > 0


def test_results_of_judged_runs_validate_against_the_upstream_schema(model_server, tmp_path, upstream_schema):
    scored = evalkit.evaluate(
        evalkit.load(document()), model_config=openai_config(model_server), progress=False
    )
    paths = evalkit.save_results(scored, tmp_path)
    results = json.loads(paths["json"].read_text())
    jsonschema.Draft202012Validator(upstream_schema).validate(results)
    entry = results["items"][0]["scores"]["relevance"]
    assert set(entry) == {"score", "result", "threshold", "reason"}


def test_thresholds_and_required_fields(model_server):
    doc = document(2, {"Relevance": {"threshold": 5}, "Similarity": {}})
    del doc["items"][1]["expected_response"]
    scored = evalkit.evaluate(evalkit.load(doc), model_config=openai_config(model_server), progress=False)
    assert (scored["relevance_threshold"] == 5).all()
    assert scored.loc[1, "similarity_result"] == "error"
    assert "Similarity needs 'expected_response'" in scored.loc[1, "similarity_error"]


def test_empty_response_is_an_error_result_without_a_call(model_server):
    doc = document(1, {"Relevance": {}})
    doc["items"][0]["response"] = "   "
    scored = evalkit.evaluate(evalkit.load(doc), model_config=openai_config(model_server), progress=False)
    assert model_server.request_count == 0
    assert scored.loc[0, "relevance_code"] == "emptyAgentResponse"
    assert scored.loc[0, "status"] == "partial"


def test_unparseable_and_unauthorised_answers_are_readable_errors(model_server):
    model_server.fail_next(1, malformed=True)
    model_server.fail_next(1, status=401, message="Access denied due to invalid subscription key")
    doc = document(2, {"Relevance": {}})
    scored = evalkit.evaluate(
        evalkit.load(doc), model_config=openai_config(model_server), concurrency=1, progress=False
    )
    codes = sorted(scored["relevance_code"].tolist())
    assert codes == ["judgeAuthenticationError", "judgeOutputUnparseable"]
    auth = scored.loc[scored["relevance_code"] == "judgeAuthenticationError", "relevance_error"].iloc[0]
    assert "HTTP 401" in auth and "invalid subscription key" in auth


def test_a_rerun_is_answered_by_the_cache(model_server):
    doc = evalkit.load(document())
    evalkit.evaluate(doc, model_config=openai_config(model_server), progress=False)
    first = model_server.request_count
    again = evalkit.evaluate(doc, model_config=openai_config(model_server), progress=False)
    assert model_server.request_count == first
    assert again.attrs["evalkit"]["judge"]["cache_hits"] == 6
    evalkit.evaluate(doc, model_config=openai_config(model_server), cache=False, progress=False)
    assert model_server.request_count == 2 * first


def test_custom_prompty_judge_runs_through_promptflow_and_edits_rescore_only_it(model_server, project):
    from evalkit.evaluators.scaffold import scaffold

    scaffold("tone", project.custom, llm=True)
    doc = document(2, {"Relevance": {}, "tone": {"threshold": 2}})
    config = openai_config(model_server)
    scored = evalkit.evaluate(evalkit.load(doc), model_config=config, progress=False)
    assert scored["tone"].between(1, 5).all() and (scored["tone_threshold"] == 2).all()
    assert scored["tone_result"].isin(["pass", "fail"]).all()
    before = model_server.request_count
    prompty = project.custom / "tone" / "tone.prompty"
    prompty.write_text(prompty.read_text().replace("You grade", "You carefully grade"))
    evalkit.evaluate(evalkit.load(doc), model_config=config, progress=False)
    tone_calls = [r for r in model_server.requests[before:] if "carefully" in json.dumps(r["body"])]
    assert model_server.request_count - before == 2 == len(tone_calls)


def test_cli_run_with_openai_environment_and_no_key_leaks(model_server, tmp_path):
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(document()))
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "OPENAI_BASE_URL": model_server.openai_base_url,
        "OPENAI_MODEL": "judge",
        "OPENAI_API_KEY": SECRET,
        "EVALKIT_CACHE_DIR": str(cache),
    }
    run = [
        sys.executable,
        "-m",
        "evalkit",
        "run",
        str(doc),
        "--out",
        str(tmp_path / "out"),
        "--log-level",
        "debug",
    ]
    proc = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Judge: OpenAI-compatible" in proc.stdout and "6 calls" in proc.stdout
    assert "judge model: OpenAI-compatible" in proc.stderr
    rerun = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "0 calls, 6 from cache" in rerun.stdout
    assert model_server.request_count == 6
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite3" for p in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in proc.stdout + proc.stderr + rerun.stdout + rerun.stderr


NETWORK_PROBE = """
import json, socket, sys, time
outside = []
def hook(event, args):
    if event == "socket.connect":
        address = args[1]
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost"):
            outside.append(host)
    if event == "socket.getaddrinfo" and args[0] not in ("127.0.0.1", "::1", "localhost"):
        outside.append(str(args[0]))
sys.addaudithook(hook)
import evalkit
from evalkit.evaluators.scaffold import scaffold
scaffold("tone", "custom-evaluators", llm=True)
doc = {"schemaVersion": "1.11.0", "default_evaluators": {"Relevance": {}, "tone": {}},
       "items": [{"prompt": "Hi there?", "response": "Hello, how can I help?"}]}
config = {"base_url": sys.argv[1], "model": "judge", "api_key": "k"}
scored = evalkit.evaluate(evalkit.load(doc), model_config=config, cache=False, progress=False)
time.sleep(1)
import logging, threading
threads = [t.name for t in threading.enumerate()]
muted = logging.getLogger("promptflow._sdk._telemetry").disabled
print(json.dumps({"outside": outside, "status": scored["status"].tolist(), "threads": threads, "muted": muted}))
"""


def test_judged_runs_contact_only_the_configured_model(model_server, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("APPLICATIONINSIGHTS", "PF_"))}
    proc = subprocess.run(
        [sys.executable, "-c", NETWORK_PROBE, model_server.openai_base_url],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["status"] == ["pass"] or report["status"] == ["fail"]
    assert report["outside"] == []
    # The Application Insights control-plane poller (which would call settings.sdk.monitor.azure.com)
    # never starts, and promptflow's telemetry logger is muted.
    assert "ConfigurationWorker" not in report["threads"] and report["muted"] is True


def test_summary_counts_tokens_per_evaluator_and_run(model_server):
    scored = evalkit.evaluate(
        evalkit.load(document()), model_config=openai_config(model_server), progress=False
    )
    table = evalkit.summary(scored)
    assert table.loc["Relevance", "prompt_tokens"] > 0 and table.loc["Coherence", "completion_tokens"] > 0
    assert (
        table.loc["(status)", "prompt_tokens"] == table.loc[["Relevance", "Coherence"], "prompt_tokens"].sum()
    )


def test_groundedness_grounds_on_context_then_extracts_then_expected_response():
    from evalkit.evaluators.llm_judges.builtin import grounding

    executions = [{"retrievalHits": [{"extracts": [{"text": "first"}, {"text": "second"}]}]}]
    assert (
        grounding({"context": "ctx", "retrieval_executions": executions, "expected_response": "e"}) == "ctx"
    )
    assert (
        grounding({"context": " ", "retrieval_executions": executions, "expected_response": "e"})
        == "first\n\nsecond"
    )
    assert grounding({"context": "", "retrieval_executions": [], "expected_response": "e"}) == "e"


def test_configuration_from_dotenv_files(tmp_path, monkeypatch):
    from evalkit.judges.models import describe, judge_config

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("OPENAI_BASE_URL=http://127.0.0.1:1/v1\nOPENAI_MODEL=from-env-file\n")
    (tmp_path / ".env.local").write_text("OPENAI_MODEL=from-env-local\n")
    assert judge_config()["model"] == "from-env-local"
    monkeypatch.setenv("OPENAI_MODEL", "from-process")
    assert judge_config()["model"] == "from-process"
    monkeypatch.setenv("AZURE_AI_OPENAI_ENDPOINT", "https://example.invalid")
    monkeypatch.setenv("AZURE_AI_MODEL_NAME", "gpt-judge")
    monkeypatch.setenv("AZURE_AI_API_KEY", SECRET)
    config = judge_config()
    assert config["azure_deployment"] == "gpt-judge" and config["api_version"] == "2024-12-01-preview"
    assert SECRET not in describe(config)


def test_keyless_azure_uses_a_token_provider():
    from evalkit.judges.models import judge_client

    client, model = judge_client(
        {
            "azure_endpoint": "https://example.invalid",
            "azure_deployment": "judge",
            "api_version": "2024-12-01-preview",
        }
    )
    assert model == "judge" and client._azure_ad_token_provider is not None  # never called here: no network


KILL_AND_RESUME = """
import sys, evalkit
doc = {"schemaVersion": "1.11.0", "default_evaluators": {"Relevance": {}},
       "items": [{"prompt": f"Question {i}?", "response": f"Answer {i}."} for i in range(40)]}
config = {"base_url": sys.argv[1], "model": "judge", "api_key": "k"}
evalkit.evaluate(evalkit.load(doc), model_config=config, concurrency=4, progress=False)
"""


def test_a_killed_run_resumes_without_repeating_completed_calls(model_server, tmp_path):
    import signal
    import time

    model_server.latency = 0.1
    env = {**os.environ, "EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-c", KILL_AND_RESUME, model_server.openai_base_url], env=env)
    deadline = time.monotonic() + 60
    while model_server.request_count < 12 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    answered_before_kill = model_server.request_count
    assert 12 <= answered_before_kill < 40
    model_server.latency = 0.0
    subprocess.run([sys.executable, "-c", KILL_AND_RESUME, model_server.openai_base_url], env=env, check=True)
    repeated = model_server.request_count - 40
    # Only the calls in flight at the kill (at most the concurrency) may be asked again.
    assert 0 <= repeated <= 4


def test_samples_are_cached_separately(model_server):
    doc = evalkit.load(document(2, {"Relevance": {}}))
    runs = evalkit.sample_judgments(doc, 3, model_config=openai_config(model_server), progress=False)
    assert len(runs) == 3 and model_server.request_count == 6
    evalkit.sample_judgments(doc, 3, model_config=openai_config(model_server), progress=False)
    assert model_server.request_count == 6  # every judgment of the second round came from the cache


def test_judge_noise_over_sampled_judgments(model_server):
    doc = evalkit.load(document(4, {"Relevance": {}}))
    runs = evalkit.sample_judgments(doc, 3, model_config=openai_config(model_server), progress=False)
    noise = evalkit.judge_noise(runs, "relevance")
    # The heuristic judge is deterministic: no spread, no flips, pass^k equals the single-sample pass rate.
    assert (noise.rows["spread"] == 0).all() and not noise.rows["flip"].any()
    row = noise.table.iloc[0]
    assert row["flip_rate"] == 0 and row["pass_hat_k"] == row["pass_rate"]


def test_judge_provenance_in_results(model_server, tmp_path):
    scored = evalkit.evaluate(
        evalkit.load(document(1)), model_config=openai_config(model_server), progress=False
    )
    results = json.loads(evalkit.save_results(scored, tmp_path)["json"].read_text())
    judge = results["metadata"]["extensions"]["dev.evalkit.judge"]
    assert judge["model_name"] == "judge" and judge["parameters"]["temperature"] == 0.0
    assert judge["prompt_hashes"]["Relevance"].startswith("builtin:Relevance@azure-ai-evaluation==")
    assert results["metadata"]["extensions"]["dev.evalkit.run"]["evalkit_version"] == evalkit.__version__
    assert SECRET not in json.dumps(results)


def test_tool_call_accuracy_judges_the_agents_captured_tool_calls(model_server):
    from opentelemetry import trace

    def agent(prompt, history):
        with trace.get_tracer("test").start_as_current_span("execute_tool fetch_weather") as span:
            span.set_attribute("gen_ai.tool.name", "fetch_weather")
            span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"location": "Seattle"}))
            span.set_attribute("gen_ai.tool.description", "Weather for a city")
        return "Rainy, 12 degrees."

    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ToolCallAccuracy": {}},
           "items": [{"prompt": "How is the weather in Seattle?"}]}  # fmt: skip
    scored = evalkit.evaluate(
        evalkit.load(doc), agent=agent, model_config=openai_config(model_server), progress=False
    )
    assert scored.loc[0, "toolCallAccuracy"] == 5 and scored.loc[0, "toolCallAccuracy_result"] == "pass"
    body = json.dumps(model_server.requests[-1]["body"])
    assert "fetch_weather" in body and "Seattle" in body

    recorded = {"schemaVersion": "1.11.0", "default_evaluators": {"ToolCallAccuracy": {}},
                "items": [{"prompt": "Weather?", "response": "Rainy."}]}  # fmt: skip
    without = evalkit.evaluate(
        evalkit.load(recorded), model_config=openai_config(model_server), progress=False
    )
    assert without.loc[0, "toolCallAccuracy_code"] == "evaluatorConfigurationError"
    assert "--agent" in without.loc[0, "toolCallAccuracy_error"]


def test_no_judge_model_names_the_offline_model_server(tmp_path):
    """A newcomer without a model is told the way in: evalkit's local model server (exact message)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_"))}
    env["PYTHONPATH"] = str(repo)
    (tmp_path / "doc.json").write_text(
        '{"schemaVersion": "1.11.0", "items": [{"prompt": "p", "response": "r"}]}'
    )
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", str(tmp_path / "out")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert done.stderr == (
        "Error: The LLM evaluator(s) Relevance, Coherence needs a judge model, and none is configured. Set "
        "AZURE_AI_OPENAI_ENDPOINT, AZURE_AI_API_KEY and AZURE_AI_MODEL_NAME (Azure OpenAI; AZURE_AI_API_VERSION "
        "defaults to 2024-12-01-preview), or OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL (any "
        "OpenAI-compatible endpoint), in the environment or in a .env / .env.local file in the project folder. "
        "To try it offline with no model or key, start evalkit's local model server (deterministic 1-5 answers): "
        "'python -m evalkit.testing > judge.env &', then 'source judge.env' and run again.\n"
    )
