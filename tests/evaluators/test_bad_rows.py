"""One bad row is one error: a row whose result cannot be read never spoils the evaluator's other rows."""

from __future__ import annotations

import pandas as pd
import pytest

import evalkit


class _Unprintable:
    def __str__(self):
        raise RuntimeError("no text for you")


class _UnprintableError(Exception):
    def __str__(self):
        raise RuntimeError("no text for you either")


def _by_prompt(*, prompt="", **_):
    if prompt == "huge":
        return {"score": 10**400, "reason": "too big for a float"}
    if prompt == "huge-negative":
        return {"score": -(10**400), "reason": ""}
    if prompt == "unprintable":
        return {"score": 1, "reason": _Unprintable()}
    if prompt == "unprintable-error":
        return {"error": _Unprintable()}
    if prompt == "unprintable-exception":
        raise _UnprintableError()
    return {"score": 1, "reason": "fine"}


@pytest.mark.parametrize(
    "bad, message, code",
    [
        ("huge", "is not a finite number", "invalidEvaluatorResult"),
        ("huge-negative", "is not a finite number", "invalidEvaluatorResult"),
        ("unprintable", "the 'reason' (_Unprintable) cannot be turned into text", "invalidEvaluatorResult"),
        ("unprintable-error", "its 'error' value cannot be turned into text", "evaluatorError"),
        (
            "unprintable-exception",
            "_UnprintableError (its message cannot be turned into text)",
            "evaluatorError",
        ),
    ],
)
def test_one_bad_row_is_one_error_result(bad, message, code):
    df = pd.DataFrame({"prompt": ["ok", bad, "ok"], "response": ["r", "r", "r"]})
    scored = evalkit.evaluate(df, evaluators={"check": _by_prompt})
    assert scored["check_result"].tolist() == ["pass", "error", "pass"]
    assert scored["check"].tolist()[0] == 1.0 and scored["check"].tolist()[2] == 1.0
    assert scored["check_reason"].tolist()[0] == "fine"
    error = scored["check_error"].tolist()[1]
    assert message in error
    assert scored["check_code"].tolist()[1] == code
    assert scored["status"].tolist() == ["pass", "partial", "pass"]  # a response, one evaluator errored


def test_a_huge_score_message_stays_short():
    df = pd.DataFrame({"prompt": ["huge"], "response": ["r"]})
    scored = evalkit.evaluate(df, evaluators={"check": _by_prompt})
    error = scored["check_error"].tolist()[0]
    assert "an integer of about 401 digits" in error and len(error) < 200
