"""``evalkit spans serve`` runs AgentCore built-in LLM judges next to code-based evaluators, each session once."""

from __future__ import annotations

import json
import time

import pytest

from evalkit.errors import EnvironmentConfigError
from evalkit.spans import serve
from evalkit.spans.online.server import OnlineEvaluation
from tests.spans.test_builtin_span_judges import DATA, SESSIONS, TOOL_CALLS, TRACES
from tests.spans.test_online import _lines, _post, _states, _wait
from tests.spans.test_spans import to_otlp, write_evaluator


def test_builtins_run_online_once_per_session_with_emf_metrics(model_server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    custom = tmp_path / "custom-evaluators"
    write_evaluator(
        custom,
        "check",
        'EVALUATION_LEVEL = "SESSION"\ndef lambda_handler(event, context):\n    return {"label": "PASS", "value": 1.0}\n',
    )
    store = tmp_path / "store"
    evaluators = ["Builtin.Helpfulness", "Builtin.GoalSuccessRate", "Builtin.ToolParameterAccuracy", "check"]
    server = serve(
        store, evaluators=evaluators, custom_dir=custom, port=0, session_timeout=0.3, poll_interval=0.02
    )
    server.start()
    try:
        docs = [json.loads(line) for line in DATA.read_text().splitlines()]
        status, _ = _post(server.port, json.dumps(to_otlp(docs)).encode())
        assert status == 200
        expected = TRACES + SESSIONS + TOOL_CALLS + SESSIONS
        results = _wait(
            lambda: len(_lines(store / "results.jsonl")) == expected and _lines(store / "results.jsonl")
        )
        calls = model_server.request_count
        assert calls == TRACES + SESSIONS + TOOL_CALLS
        time.sleep(0.5)  # more passes of the loop: nothing is judged twice
        assert model_server.request_count == calls
        assert set(_states(store).values()) == {"evaluated"}
    finally:
        server.stop()
    names = [r["attributes"]["gen_ai.evaluation.name"] for r in results]
    assert names.count("Builtin.Helpfulness") == TRACES and names.count("Builtin.GoalSuccessRate") == SESSIONS
    assert names.count("Builtin.ToolParameterAccuracy") == TOOL_CALLS and names.count("check") == SESSIONS
    helpful = next(
        r["attributes"] for r in results if r["attributes"]["gen_ai.evaluation.name"] == "Builtin.Helpfulness"
    )
    assert 0 <= helpful["gen_ai.evaluation.score.value"] <= 1 and helpful["gen_ai.evaluation.score.label"]
    assert helpful["gen_ai.evaluation.explanation"].startswith("Heuristic judge:") and "trace_id" in helpful

    metrics = _lines(store / "metrics.jsonl")
    judged = [m for m in metrics if "Builtin.GoalSuccessRate" in m]
    assert len(judged) == SESSIONS
    directive = judged[0]["_aws"]["CloudWatchMetrics"][0]
    assert directive["Namespace"] == "Bedrock-AgentCore/Evaluations"
    assert directive["Metrics"] == [{"Name": "Builtin.GoalSuccessRate", "Unit": "None"}]
    assert judged[0]["label"] in ("Yes", "No")


def test_no_judge_model_is_an_environment_error_before_the_receiver_starts(tmp_path):
    with pytest.raises(EnvironmentConfigError, match="Span evaluator Builtin.Coherence needs a judge model"):
        OnlineEvaluation(tmp_path / "store", evaluators=["Builtin.Coherence"], port=0)
    assert not (tmp_path / "store").exists()
