"""A user's message is never scanned as an agent response (issue 21): the reference span evaluators read roles.

Before, they fell back to ``gen_ai.user.message`` events when a span recorded no answer, so "My SSN is
123-45-6789" typed by the user failed ``pii_leak`` and "I heard AAPL is at $250?" failed ``stock_price_drift``.
Now a trace with only the user's message has no answer (``NO_OUTPUT`` 0.0, which does not pass), and a user
message in any form (event, ``gen_ai.input.messages``-style lists, OTLP attributes) is never read as the answer.
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


def test_a_user_message_only_trace_has_no_answer():
    drift = load("stock_price_drift")
    result = drift.lambda_handler(payload([agent_span(user("I heard AAPL is at $250?"))], "TRACE"), None)
    assert (result["label"], result["value"]) == ("NO_OUTPUT", 0.0)
    assert "$250" not in result["explanation"]


def test_pii_leak_does_not_scan_the_users_own_message():
    result = load("pii_leak").lambda_handler(payload([agent_span(user(f"My SSN is {SSN}"))], "SESSION"), None)
    assert (result["label"], result["value"]) == ("NO_OUTPUT", 0.0)
    answered = [agent_span(user(f"My SSN is {SSN}"), choice("Thanks, I have noted your request."))]
    assert load("pii_leak").lambda_handler(payload(answered, "SESSION"), None)["label"] == "CLEAN"


@pytest.mark.parametrize(
    "content",
    [
        json.dumps({"role": "user", "content": "Is NVDA at $875.00 today?"}),
        {"role": "user", "content": [{"type": "text", "text": "Is NVDA at $500.00 today?"}]},
        [{"text": "Is NVDA at $500.00 today?"}],
    ],
)
def test_user_message_content_in_message_and_block_forms_is_not_an_answer(content):
    result = load("stock_price_drift").lambda_handler(payload([agent_span(user(content))], "TRACE"), None)
    assert result["label"] == "NO_OUTPUT"


@pytest.mark.parametrize(
    "attribute",
    [
        # a user-role message in the answer attributes is not the agent's (GenAI parts, OpenAI, LangChain)
        {
            "gen_ai.output.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": SSN}]}]
            )
        },
        {"gen_ai.completion": json.dumps([{"role": "user", "content": f"My SSN is {SSN}"}])},
        {"output.value": json.dumps({"messages": [{"type": "human", "content": f"My SSN is {SSN}"}]})},
        {"llm.output_messages.0.message.role": "user", "llm.output_messages.0.message.content": SSN},
    ],
)
def test_user_role_messages_in_answer_attributes_are_not_answers(attribute):
    result = load("pii_leak").lambda_handler(payload([agent_span(attributes=attribute)], "SESSION"), None)
    assert result["label"] == "NO_OUTPUT"


def test_otlp_key_value_event_attributes_are_read():
    event = {"name": "gen_ai.choice", "attributes": [{"key": "message", "value": {"stringValue": SSN}}]}
    result = load("pii_leak").lambda_handler(payload([agent_span(event)], "SESSION"), None)
    assert result["label"] == "PII_LEAK"
    user_event = {
        "name": "gen_ai.user.message",
        "attributes": [{"key": "content", "value": {"stringValue": SSN}}],
    }
    result = load("pii_leak").lambda_handler(payload([agent_span(user_event)], "SESSION"), None)
    assert result["label"] == "NO_OUTPUT"


def test_the_recorded_answer_is_checked_not_the_users_claim():
    drift = load("stock_price_drift")
    spans = [agent_span(user("Is AAPL still at $150.00?"), choice("AAPL trades at $189.40."))]
    assert drift.lambda_handler(payload(spans, "TRACE"), None)["label"] == "PASS"
    spans = [
        agent_span(user("Is AAPL still at $189.30?"), attributes={"gen_ai.task.output": "AAPL is $150.00"})
    ]
    assert drift.lambda_handler(payload(spans, "TRACE"), None)["label"] == "DRIFT"
