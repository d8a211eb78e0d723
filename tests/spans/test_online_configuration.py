"""The online evaluation configuration as AgentCore enforces it: sampling 0.01-100 %, session timeout 1-1440
minutes (out of range: exit 2 naming the range), and a configuration name carried into results.jsonl and
metrics.jsonl as AgentCore's ``onlineEvaluationConfigId`` dimension.
"""

from __future__ import annotations

import http.client
import json
import time
from pathlib import Path

import pytest

from evalkit.cli import build_parser, main
from evalkit.errors import EvalkitError
from evalkit.spans.online.server import serve
from evalkit.spans.online.session_tracking import check_sampling, check_session_timeout

CHECK = """EVALUATION_LEVEL = "SESSION"

def lambda_handler(event, context):
    return {"label": "PASS", "value": 1.0, "explanation": "ok"}
"""


@pytest.fixture
def custom(tmp_path) -> Path:
    (tmp_path / "custom-evaluators" / "check").mkdir(parents=True)
    (tmp_path / "custom-evaluators" / "check" / "check.py").write_text(CHECK)
    return tmp_path / "custom-evaluators"


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--sampling", "0"], ["--sampling 0", "0.01-100 %"]),
        (["--sampling", "0.005"], ["--sampling 0.005", "0.01-100 %"]),
        (["--sampling", "100.5%"], ["--sampling 100.5", "0.01-100 %"]),
        (["--session-timeout", "30s"], ["--session-timeout 30s", "1-1440 minutes"]),
        (["--session-timeout", "2000m"], ["--session-timeout 2000m", "1-1440 minutes"]),
        (["--session-timeout", "25h"], ["--session-timeout 25h", "1-1440 minutes"]),
    ],
)
def test_out_of_range_is_exit_2_naming_the_range(tmp_path, custom, capsys, flags, words):
    argv = ["spans", "serve", "--store", str(tmp_path / "s"), "--custom-dir", str(custom)]
    assert main([*argv, "--evaluator", "check", "--port", "0", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ")
    for word in words:
        assert word in err
    assert not (tmp_path / "s").exists()  # refused before anything was created


def test_the_range_boundaries_are_accepted():
    assert check_sampling(0.01) == 0.01 and check_sampling(100) == 100.0
    assert check_session_timeout(60.0, "1m") == 60.0
    assert check_session_timeout(86_400.0, "1440m") == 86_400.0
    with pytest.raises(EvalkitError, match="0.01-100 %"):
        check_sampling(0.0099)
    with pytest.raises(EvalkitError, match="1-1440 minutes"):
        check_session_timeout(59.9, "59.9s")


def test_the_python_api_keeps_the_sampling_range_and_the_timeout_ceiling(tmp_path):
    for sampling in (0, 0.005, 101):
        with pytest.raises(EvalkitError, match="0.01-100 %"):
            serve(tmp_path / "s", sampling=sampling)
    with pytest.raises(EvalkitError, match="1-1440 minutes"):
        serve(tmp_path / "s", session_timeout="2000m")
    assert serve(tmp_path / "s", session_timeout=0.3).session_timeout == 0.3  # seconds, for tests and demos


def test_config_name_option_and_its_default():
    args = build_parser().parse_args(
        ["spans", "serve", "--store", "x/online-store", "--config-name", "prod_eval"]
    )
    assert args.config_name == "prod_eval"
    assert build_parser().parse_args(["spans", "serve", "--store", "x"]).config_name is None


def _post(port: int, session: str) -> None:
    span = {
        "traceId": "0" * 31 + "1",
        "spanId": "0" * 15 + "1",
        "name": "invoke_agent",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": "session.id", "value": {"stringValue": session}}],
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]}
    body = json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]})
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/json"})
        assert connection.getresponse().status == 200
    finally:
        connection.close()


def _first_line(path: Path) -> dict:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return json.loads(path.read_text().splitlines()[0])
        time.sleep(0.02)
    raise AssertionError(f"nothing written to {path}")


@pytest.mark.parametrize("config_name, expected", [("prod_eval", "prod_eval"), (None, "market-store")])
def test_config_name_is_the_online_evaluation_config_id_of_results_and_metrics(
    tmp_path, custom, config_name, expected
):
    store = tmp_path / "market-store"
    server = serve(
        store,
        evaluators=["check"],
        custom_dir=custom,
        port=0,
        session_timeout=0.2,
        poll_interval=0.02,
        config_name=config_name,
    ).start()
    try:
        _post(server.port, "s1")
        result = _first_line(store / "results.jsonl")
        metric = _first_line(store / "metrics.jsonl")
    finally:
        server.stop()
    assert result["attributes"]["onlineEvaluationConfigId"] == expected
    assert metric["onlineEvaluationConfigId"] == expected
    assert metric["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [
        ["service.name", "label", "onlineEvaluationConfigId"]
    ]
