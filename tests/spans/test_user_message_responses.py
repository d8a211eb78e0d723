"""The reference span evaluators read ``gen_ai.user.message`` events, a response-text source the AgentCore
fact sheet lists ("also events gen_ai.choice (attribute message) and gen_ai.user.message (attribute
content)"): a trace that recorded only the user's message is read instead of giving ``NO_OUTPUT``; an
answer recorded beside it (attributes or ``gen_ai.choice``) still comes first.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

EVALUATORS = Path(__file__).resolve().parents[2] / "custom-evaluators"
SSN = "123-45-6789"


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    for var in ("REFERENCE_PRICES_PATH", "DRIFT_TOLERANCE_PERCENT", "PII_CONTACT_THRESHOLD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PII_USE_PRESIDIO", "0")
    monkeypatch.syspath_prepend(str(EVALUATORS / "_shared"))


def load(name: str):
    """``custom-evaluators/<name>/<name>.py`` imported by path, as the Lambda runtime imports it."""
    spec = importlib.util.spec_from_file_location(
        f"lambda_user_message_{name}", EVALUATORS / name / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def agent_span(*events, attributes=None) -> dict:
    return {
        "traceId": "t1",
        "spanId": "a1",
        "name": "invoke_agent market_agent",
        "startTimeUnixNano": 1_000,
        "endTimeUnixNano": 2_000,
        "attributes": {"gen_ai.operation.name": "invoke_agent", "session.id": "s", **(attributes or {})},
        "events": list(events),
    }


def user(content) -> dict:
    return {"name": "gen_ai.user.message", "attributes": {"content": content}}


def choice(message) -> dict:
    return {"name": "gen_ai.choice", "attributes": {"message": message}}


def payload(spans, level: str) -> dict:
    return {
        "schemaVersion": "1.0",
        "evaluatorId": "user-message-0123456789",
        "evaluatorName": "UserMessage",
        "evaluationLevel": level,
        "evaluationInput": {"sessionSpans": spans},
        "evaluationReferenceInputs": [],
        "evaluationTarget": {"traceIds": ["t1"], "spanIds": []} if level == "TRACE" else None,
    }


def test_stock_price_drift_reads_a_user_message_only_trace():
    drift = load("stock_price_drift")
    result = drift.lambda_handler(payload([agent_span(user("Is AAPL still at $150.00?"))], "TRACE"), None)
    assert result["label"] == "DRIFT"  # 150.00 against the reference 189.30, not NO_OUTPUT
    assert "AAPL" in result["explanation"]
    no_prices = drift.lambda_handler(payload([agent_span(user("Any news today?"))], "TRACE"), None)
    assert no_prices["label"] == "NO_PRICES"


def test_pii_leak_scans_a_user_message_only_session():
    result = load("pii_leak").lambda_handler(payload([agent_span(user(f"My SSN is {SSN}"))], "SESSION"), None)
    assert result["label"] == "PII_LEAK"
    assert SSN not in result["explanation"]


@pytest.mark.parametrize(
    "content",
    [
        json.dumps({"role": "user", "content": "Is NVDA at $875.00 today?"}),
        {"role": "user", "content": [{"type": "text", "text": "Is NVDA at $875.00 today?"}]},
        [{"text": "Is NVDA at $875.00 today?"}],
    ],
)
def test_user_message_content_in_message_and_block_forms(content):
    result = load("stock_price_drift").lambda_handler(payload([agent_span(user(content))], "TRACE"), None)
    assert result["label"] == "PASS" and "NVDA" in result["explanation"]


def test_otlp_key_value_event_attributes_are_read():
    event = {"name": "gen_ai.user.message", "attributes": [{"key": "content", "value": {"stringValue": SSN}}]}
    result = load("pii_leak").lambda_handler(payload([agent_span(event)], "SESSION"), None)
    assert result["label"] == "PII_LEAK"


def test_a_recorded_answer_comes_before_the_user_message():
    drift = load("stock_price_drift")
    spans = [agent_span(user("Is AAPL still at $150.00?"), choice("AAPL trades at $189.40."))]
    assert drift.lambda_handler(payload(spans, "TRACE"), None)["label"] == "PASS"
    spans = [
        agent_span(user("Is AAPL still at $150.00?"), attributes={"gen_ai.task.output": "AAPL is $189.35"})
    ]
    assert drift.lambda_handler(payload(spans, "TRACE"), None)["label"] == "PASS"
    clean = [agent_span(user(f"My SSN is {SSN}"), choice("I can't store that here."))]
    assert load("pii_leak").lambda_handler(payload(clean, "SESSION"), None)["label"] == "CLEAN"
