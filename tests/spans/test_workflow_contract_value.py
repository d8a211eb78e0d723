"""workflow_contract's values: PASS 1.0, PARTIAL satisfied groups / groups, OUT_OF_ORDER 0.0, FAIL 0.0.

Before (issue 21), OUT_OF_ORDER kept satisfied / groups, so a session with every group called but one out of
order scored 1.0 and passed ``spans eval --fail-under 100%``: a broken contract passed the gate. Now an order
violation is worth 0.0 whatever was called; the explanation still says how many groups were satisfied.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EVALUATORS = Path(__file__).resolve().parents[2] / "custom-evaluators"


@pytest.fixture
def contract(monkeypatch):
    """The evaluator imported by path, with ``_shared/`` importable as at the root of its Lambda zip."""
    monkeypatch.delenv("WORKFLOW_GROUPS", raising=False)
    monkeypatch.syspath_prepend(str(EVALUATORS / "_shared"))
    path = EVALUATORS / "workflow_contract" / "workflow_contract.py"
    spec = importlib.util.spec_from_file_location("lambda_workflow_contract_value", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def session(*tools: str) -> dict:
    spans = [
        {
            "traceId": "t1",
            "spanId": f"s{i}",
            "name": f"execute_tool {name}",
            "startTimeUnixNano": 1_000_000_000 * i,
            "endTimeUnixNano": 1_000_000_000 * i + 1,
            "attributes": {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "session.id": "x",
            },
        }
        for i, name in enumerate(tools, start=1)
    ]
    return {
        "schemaVersion": "1.0",
        "evaluatorId": "workflow-contract-a1b2c3d4e5",
        "evaluatorName": "WorkflowContract",
        "evaluationLevel": "SESSION",
        "evaluationInput": {"sessionSpans": spans},
        "evaluationReferenceInputs": [],
        "evaluationTarget": None,
    }


def test_all_groups_satisfied_one_out_of_order_scores_zero(contract):
    # profile before identification: all three groups satisfied, group 2 out of order
    result = contract.lambda_handler(session("get_broker_profile", "identify_broker", "get_stock_data"), None)
    assert (result["label"], result["value"]) == ("OUT_OF_ORDER", 0.0)
    assert "3/3 workflow group(s) satisfied" in result["explanation"]
    assert "order violations: group 2 get_broker_profile" in result["explanation"]
    assert contract.PASSING_LABELS == ("PASS",)


def test_partial_is_satisfied_over_groups_and_out_of_order_is_zero(contract):
    in_order = contract.lambda_handler(session("identify_broker", "search_news"), None)
    reversed_ = contract.lambda_handler(session("search_news", "identify_broker"), None)
    assert (in_order["label"], in_order["value"]) == ("PARTIAL", pytest.approx(2 / 3, abs=1e-4))
    assert (reversed_["label"], reversed_["value"]) == ("OUT_OF_ORDER", 0.0)
    assert (
        "missing: group 2" in reversed_["explanation"] and "came before group 1" in reversed_["explanation"]
    )
    result = contract.lambda_handler(session("identify_broker", "get_broker_profile", "search_news"), None)
    assert (result["label"], result["value"]) == ("PASS", 1.0)
