"""Every span evaluator's results say which labels pass, and every gate uses it (issue 21, item 5).

A code evaluator declares ``PASSING_LABELS``; an LLM judge passes at the top of its scale; an evaluator that
declares nothing keeps the value rule. ``--fail-under``, results.json / results.csv, the online store (so
``spans status``, the alarms and the exports), the Spark stream's ``passed`` and document runs all follow it.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
import time
from pathlib import Path

import pandas as pd
import pytest

from evalkit.errors import EvaluatorConfigError
from evalkit.evaluators.custom.span_docs import SpanDocumentEvaluator
from evalkit.spans import load_span_evaluator, passing, results_frame
from evalkit.spans.lambdas.passing_rule import VALUE_RULE, passes, rule_text
from evalkit.spans.llm_judges.builtin_judges import BUILTINS
from evalkit.spans.online.server import serve
from evalkit.spans.online.session_evaluation import passed
from evalkit.spans.online.views import online_frame, status

REPO = Path(__file__).resolve().parents[2]
CUSTOM = REPO / "custom-evaluators"
LENIENT = """EVALUATION_LEVEL = "SESSION"
{declaration}

def lambda_handler(event, context):
    return {{"label": "NO_OUTPUT", "value": 1.0, "explanation": "no answer found"}}
"""


def write(root: Path, name: str, declaration: str = "") -> None:
    (root / name).mkdir(parents=True, exist_ok=True)
    (root / name / f"{name}.py").write_text(LENIENT.format(declaration=declaration))


@pytest.fixture
def custom(tmp_path):
    root = tmp_path / "custom-evaluators"
    write(root, "declared", 'PASSING_LABELS = ("PASS", "CLEAN")')
    write(root, "undeclared")
    return root


def entry(evaluator, **fields) -> dict:
    return {"evaluatorName": evaluator.name, "evaluatorId": evaluator.evaluator_id, **fields}


def test_reference_evaluators_declare_their_passing_labels():
    labels = {name: load_span_evaluator(name, CUSTOM).passing_labels for name in (
        "tool_response_schema", "stock_price_drift", "workflow_contract", "pii_leak")}  # fmt: skip
    assert labels == {
        "tool_response_schema": {"PASS", "SKIPPED"},
        "stock_price_drift": {"PASS", "NO_PRICES"},
        "workflow_contract": {"PASS"},
        "pii_leak": {"CLEAN"},
    }
    for never in ("OUT_OF_ORDER", "PII_LEAK", "DRIFT", "NO_OUTPUT", "PII_OVERUSE"):
        assert not any(never in found for found in labels.values())
    assert load_span_evaluator("pii_leak", CUSTOM, level="TRACE").passing_labels == {"CLEAN"}  # with_level


def test_declared_labels_decide_whatever_the_value(custom):
    declared = load_span_evaluator("declared", custom)
    undeclared = load_span_evaluator("undeclared", custom)
    results = [
        entry(declared, label="NO_OUTPUT", value=1.0),
        entry(declared, label="CLEAN", value=0.0),
        entry(undeclared, label="NO_OUTPUT", value=1.0),  # today's rule: value >= 1.0 passes
        entry(undeclared, label="PASS"),  # no value: a PASS-like label
        entry(undeclared, errorCode="Timeout", errorMessage="slow"),
    ]
    assert passing(results, evaluators=[declared, undeclared]) == (3, 5)
    frame = results_frame(results, [declared, undeclared])
    assert frame["passed"].tolist() == [False, True, True, True, False]
    assert "passed" not in results_frame(results).columns
    assert rule_text(declared.passing_labels) == "label CLEAN or PASS" and rule_text(None) == VALUE_RULE


def test_llm_judges_pass_at_the_top_of_their_scale():
    from evalkit.spans.evaluator_specs import resolve_span_evaluator

    helpfulness = resolve_span_evaluator("Builtin.Helpfulness", None)
    assert helpfulness.passing_labels == {"Above And Beyond"}
    assert resolve_span_evaluator("Builtin.Refusal", None).passing_labels == {"Yes"}
    assert passes({"label": "Very Helpful", "value": 0.833}, helpfulness.passing_labels) is False
    assert len(BUILTINS) == 13


@pytest.mark.parametrize(
    "declaration, message",
    [
        ('PASSING_LABELS = "PASS"', "must be a list of label strings"),
        ("PASSING_LABELS = ()", "at least one non-empty label string"),
        ('PASSING_LABELS = ("PASS", 1)', "at least one non-empty label string"),
    ],
)
def test_a_malformed_declaration_names_the_file_and_the_fix(tmp_path, declaration, message):
    write(tmp_path, "bad", declaration)
    with pytest.raises(EvaluatorConfigError) as info:
        load_span_evaluator("bad", tmp_path)
    assert message in str(info.value) and str(tmp_path / "bad" / "bad.py") in str(info.value)
    assert "e.g." in str(info.value)


def test_document_runs_fail_a_row_whose_label_does_not_pass():
    """A threshold of 0 lets OUT_OF_ORDER 0.0 meet it; its label still fails the row."""
    event = json.loads((REPO / "tests/data/reference_spans/workflow_contract/out_of_order.json").read_text())
    docs = event["event"]["evaluationInput"]["sessionSpans"]
    adapter = SpanDocumentEvaluator(load_span_evaluator("workflow_contract", CUSTOM))
    frame = adapter.score(pd.DataFrame({"spans": [docs]}), [{"threshold": 0.0}])
    row = frame.iloc[0]
    assert row["result"] == "fail" and row["score"] == 0.0
    assert row["reason"].startswith("label OUT_OF_ORDER is not passing (passing: PASS)")


def test_spark_stream_and_receiver_rule(custom):
    declared = load_span_evaluator("declared", custom)
    result = entry(declared, label="NO_OUTPUT", value=1.0)
    assert passed(result, [declared]) is False
    assert passed(result) is True  # an evaluator it does not know: the value rule


def _otlp(session: str, trace: int) -> bytes:
    span = {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:016x}",
        "name": "invoke_agent",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": "session.id", "value": {"stringValue": session}}],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def test_online_store_status_and_frame_use_the_declared_labels(tmp_path, custom):
    server = serve(
        tmp_path / "store",
        port=0,
        evaluators=["declared", "undeclared"],
        custom_dir=custom,
        session_timeout=0.2,
        poll_interval=0.02,
    ).start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request(
            "POST", "/v1/traces", body=_otlp("s1", 1), headers={"Content-Type": "application/json"}
        )
        assert connection.getresponse().status == 200
        connection.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with sqlite3.connect(tmp_path / "store" / "store.sqlite3") as db:
                if db.execute("SELECT state FROM sessions").fetchall() == [("evaluated",)]:
                    break
            time.sleep(0.02)
    finally:
        server.stop()
    info = status(tmp_path / "store")
    assert info["hour"] == {"declared": (0, 1), "undeclared": (1, 1)}
    frame = online_frame(tmp_path / "store").set_index("evaluator")
    assert frame.loc["declared", "passed"] == False  # noqa: E712 - numpy bool
    metrics = [json.loads(line) for line in (tmp_path / "store" / "metrics.jsonl").read_text().splitlines()]
    assert {m["label"] for m in metrics} == {"NO_OUTPUT"}
