"""The four AgentCore-style span evaluators in ``custom-evaluators/`` (tool_response_schema,
stock_price_drift, workflow_contract, pii_leak), run the way AWS Lambda runs them: each module imported
by path, with the shared modules of ``custom-evaluators/_shared/`` importable as they are at the root of
the deployment zip, and ``lambda_handler(event, None)`` called with recorded payloads from
``tests/data/reference_spans/``.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "data" / "reference_spans"
SHARED = REPO / "custom-evaluators" / "_shared"
LEVELS = {
    "tool_response_schema": "TRACE",
    "stock_price_drift": "TRACE",
    "workflow_contract": "SESSION",
    "pii_leak": "SESSION",
}
LABELS = {
    "tool_response_schema": {"PASS", "PARTIAL", "FAIL", "SKIPPED"},
    "stock_price_drift": {"PASS", "DRIFT", "NO_PRICES", "NO_OUTPUT"},
    "workflow_contract": {"PASS", "OUT_OF_ORDER", "PARTIAL", "FAIL"},
    "pii_leak": {"CLEAN", "PII_LEAK", "PII_OVERUSE", "NO_OUTPUT"},
}
ENV_VARS = (
    "REFERENCE_PRICES_PATH",
    "DRIFT_TOLERANCE_PERCENT",
    "WORKFLOW_GROUPS",
    "PII_CONTACT_THRESHOLD",
    "PRESIDIO_SCORE_THRESHOLD",
)
SSN = "123-45-6789"
CARD = "4111 1111 1111 1111"


def load(name: str):
    """A fresh import of ``custom-evaluators/<name>/<name>.py`` by file path, as the Lambda runtime does
    (where the shared modules sit beside it at the root of the zip)."""
    path = REPO / "custom-evaluators" / name / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"lambda_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(SHARED))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SHARED))
    return module


def fixture(name: str, case: str) -> dict:
    return json.loads((FIXTURES / name / f"{case}.json").read_text(encoding="utf-8"))


def fixture_cases() -> list[tuple[str, str]]:
    return sorted((path.parent.name, path.stem) for path in FIXTURES.glob("*/*.json"))


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No configuration leaks in from the shell; Presidio off so results do not depend on the install."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PII_USE_PRESIDIO", "0")


def span(trace="t1", span_id="s1", name="invoke_agent agent", start=1, attributes=None, events=None):
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": "",
        "name": name,
        "kind": "INTERNAL",
        "startTimeUnixNano": start,
        "endTimeUnixNano": start + 1,
        "attributes": attributes or {},
        "status": {"code": "UNSET"},
        "events": events or [],
    }


def answer(text, trace="t1", span_id="a1", start=1):
    return span(
        trace,
        span_id,
        "invoke_agent agent",
        start,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.task.output": text},
    )


def tool(name, output="ok", trace="t1", span_id=None, start=1, status="UNSET"):
    doc = span(trace, span_id or f"{name}-{start}", f"execute_tool {name}", start, {"gen_ai.tool.name": name})
    if output is not None:
        doc["attributes"]["gen_ai.tool.call.result"] = output
    doc["status"] = {"code": status}
    return doc


def event(spans, level="SESSION", trace="t1"):
    target = {"traceIds": [trace], "spanIds": []} if level == "TRACE" else None
    return {
        "schemaVersion": "1.0",
        "evaluatorId": "test-evaluator-0123456789",
        "evaluatorName": "TestEvaluator",
        "evaluationLevel": level,
        "evaluationInput": {"sessionSpans": spans},
        "evaluationReferenceInputs": [],
        "evaluationTarget": target,
    }


# --- recorded payloads ----------------------------------------------------------------------------


@pytest.mark.parametrize("name,case", fixture_cases(), ids=lambda value: str(value))
def test_recorded_payload_gives_expected_label_and_value(name, case):
    recorded = fixture(name, case)
    result = load(name).lambda_handler(recorded["event"], None)
    assert set(result) == {"label", "value", "explanation"}, result
    assert result["label"] == recorded["expected"]["label"], result
    assert result["value"] == pytest.approx(recorded["expected"]["value"], abs=1e-4), result
    assert isinstance(result["explanation"], str) and 0 < len(result["explanation"]) <= 2048


def test_every_label_of_every_evaluator_has_a_recorded_payload():
    covered: dict[str, set[str]] = {}
    for name, case in fixture_cases():
        covered.setdefault(name, set()).add(fixture(name, case)["expected"]["label"])
    assert covered == LABELS


@pytest.mark.parametrize("name", sorted(LEVELS))
def test_recorded_payloads_match_the_evaluation_level(name):
    module = load(name)
    assert module.EVALUATION_LEVEL == LEVELS[name]
    for path in (FIXTURES / name).glob("*.json"):
        recorded = json.loads(path.read_text(encoding="utf-8"))
        assert recorded["event"]["evaluationLevel"] == LEVELS[name], path.name
        assert (recorded["event"]["evaluationTarget"] is None) == (LEVELS[name] == "SESSION"), path.name


# --- Lambda constraints and the error contract ----------------------------------------------------


SHARED_MODULES = sorted(path.stem for path in SHARED.glob("*.py"))


@pytest.mark.parametrize("name", sorted(LEVELS) + [f"_shared/{stem}" for stem in SHARED_MODULES])
def test_module_imports_only_the_standard_library(name):
    """The zip runs on Lambda as built: stdlib and shared modules only, presidio_analyzer only inside
    try/except."""
    folder, _, stem = name.rpartition("/")
    path = REPO / "custom-evaluators" / (folder or name) / f"{stem}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded = {id(node) for t in ast.walk(tree) if isinstance(t, ast.Try) for node in ast.walk(t)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module]
            for module in modules:
                top = (module or "").split(".")[0]
                if top == "presidio_analyzer":
                    assert id(node) in guarded, f"{name}: unguarded presidio import"
                else:
                    allowed = sys.stdlib_module_names | {"__future__", *SHARED_MODULES}
                    assert top in allowed, f"{name} imports {module}"


@pytest.mark.parametrize("name", sorted(LEVELS))
@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        "spans",
        {},
        {"evaluationInput": None},
        {"evaluationInput": {}},
        {"evaluationInput": {"sessionSpans": "not a list"}},
        {"evaluationInput": {"sessionSpans": {"traceId": "t1"}}},
    ],
    ids=["none", "list", "string", "empty", "input-none", "no-spans", "spans-string", "spans-dict"],
)
def test_malformed_event_gives_invalid_input(name, bad):
    result = load(name).lambda_handler(bad, None)
    assert result.get("errorCode") == "InvalidInput", result
    assert isinstance(result.get("errorMessage"), str) and result["errorMessage"]
    assert "label" not in result


@pytest.mark.parametrize("name", ["tool_response_schema", "stock_price_drift"])
@pytest.mark.parametrize("target", [None, {}, {"traceIds": []}, {"traceIds": [7]}, {"traceIds": [""]}])
def test_trace_level_evaluator_needs_a_target_trace(name, target):
    bad = event([answer("AAPL is at $189.30")], level="TRACE")
    bad["evaluationTarget"] = target
    result = load(name).lambda_handler(bad, None)
    assert result["errorCode"] == "InvalidInput"
    assert "traceIds" in result["errorMessage"]


@pytest.mark.parametrize("name", sorted(LEVELS))
def test_junk_spans_are_skipped_without_raising(name):
    junk = [
        None,
        3,
        "span",
        {"traceId": "t1"},
        {"traceId": "t1", "attributes": None, "events": "x", "startTimeUnixNano": "soon"},
        {"traceId": "t1", "name": 5, "attributes": [{"key": 1}, "x"], "status": "weird"},
    ]
    result = load(name).lambda_handler(event(junk, level=LEVELS[name]), None)
    assert result.get("label") in LABELS[name], result


@pytest.mark.parametrize("name", sorted(LEVELS))
def test_unexpected_failure_is_reported_not_raised(name, monkeypatch):
    module = load(name)

    def boom(*args, **kwargs):
        raise RuntimeError("unexpected")

    monkeypatch.setattr(module, "_read_event", boom)
    result = module.lambda_handler(event([]), None)
    assert result == {"errorCode": "InternalError", "errorMessage": "RuntimeError: unexpected"}


# --- tool_response_schema -------------------------------------------------------------------------


def test_schema_explanation_names_each_failing_span_tool_and_reason():
    recorded = fixture("tool_response_schema", "fail")
    result = load("tool_response_schema").lambda_handler(recorded["event"], None)
    spans = {
        s["attributes"].get("gen_ai.tool.name"): s["spanId"]
        for s in recorded["event"]["evaluationInput"]["sessionSpans"]
    }
    text = result["explanation"]
    assert f"span {spans['get_stock_data']} get_stock_data: no ticker symbol and no price" in text
    assert f"span {spans['search_news']} search_news: empty output" in text
    assert f"span {spans['get_market_overview']} get_market_overview: span status is ERROR" in text


def test_schema_only_looks_at_the_target_trace():
    spans = [tool("get_stock_data", "", trace="other"), tool("get_stock_data", "AAPL $189.30", trace="t1")]
    module = load("tool_response_schema")
    assert module.lambda_handler(event(spans, "TRACE", "t1"), None)["label"] == "PASS"
    assert module.lambda_handler(event(spans, "TRACE", "other"), None)["label"] == "FAIL"
    assert module.lambda_handler(event(spans, "TRACE", "missing"), None)["label"] == "SKIPPED"


@pytest.mark.parametrize(
    "tool_name,output,valid",
    [
        ("get_stock_data", "AAPL: $189.32", True),
        ("get_stock_data", "Ticker MSFT moved 1.5% today", True),
        ("get_stock_data_batch", "NVDA $ 875,50", True),
        ("get_stock_data", '{"symbol": "AAPL", "current_price": 189.32}', True),
        ("get_stock_data", '{"symbol": "AAPL", "current_price": "n/a"}', False),
        ("get_stock_data", "price unavailable for apple", False),
        ("get_stock_data", "AAPL data unavailable", False),
        (
            "search_news",
            "Apple shares rose after the buyback news. Analysts raised targets across the board today.",
            True,
        ),
        (
            "search_news",
            "- Apple beats estimates on services revenue\n- Microsoft expands its AI partnership deals",
            True,
        ),
        (
            "search_news",
            "Apple shares rose after the buyback news and analysts raised targets across the board",
            False,
        ),
        ("search_news", "Too short. Really.", False),
        ("identify_broker", '{"broker_id": "b-1"}', True),
        ("identify_broker", "null", False),
        ("identify_broker", "   ", False),
        ("identify_broker", None, False),
    ],
)
def test_schema_checks_per_tool_family(tool_name, output, valid):
    module = load("tool_response_schema")
    assert (module.check_tool_output(tool_name, output) == "") is valid
    result = module.lambda_handler(event([tool(tool_name, output)], "TRACE"), None)
    assert result["label"] == ("PASS" if valid else "FAIL")


def test_schema_value_is_passed_over_total_and_finds_all_tool_span_styles():
    spans = [
        tool("get_stock_data", "AAPL $189.30", span_id="a"),
        span(
            "t1",
            "b",
            "news.tool",
            2,
            {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "search_news",
                "traceloop.entity.output": "Short.",
            },
        ),
        span("t1", "c", "execute_tool identify_broker", 3, {"tool.output": "broker b-1"}),
        span("t1", "d", "custom", 4, {"gen_ai.tool.name": "get_sector_data", "output.value": ""}),
    ]
    result = load("tool_response_schema").lambda_handler(event(spans, "TRACE"), None)
    assert result["label"] == "PARTIAL"
    assert result["value"] == 0.5
    assert (
        "span b search_news" in result["explanation"]
        and "span d get_sector_data: empty output" in result["explanation"]
    )


def test_schema_reads_otlp_attribute_lists_and_xray_trace_ids():
    otlp = {
        "traceId": "5759e988bd862e3fe1be46a994272793",
        "spanId": "s1",
        "name": "execute_tool get_stock_data",
        "attributes": [
            {"key": "gen_ai.tool.name", "value": {"stringValue": "get_stock_data"}},
            {"key": "gen_ai.tool.call.result", "value": {"stringValue": "no quote"}},
        ],
    }
    bad = event([otlp], "TRACE", trace="1-5759E988-BD862E3FE1BE46A994272793")
    result = load("tool_response_schema").lambda_handler(bad, None)
    assert result["label"] == "FAIL" and "span s1 get_stock_data" in result["explanation"]


def test_schema_explanation_stays_under_the_limit():
    spans = [tool("get_stock_data", "down", span_id=f"span{i:04d}", start=i) for i in range(300)]
    result = load("tool_response_schema").lambda_handler(event(spans, "TRACE"), None)
    assert result["label"] == "FAIL"
    assert len(result["explanation"]) <= 2048
    assert result["explanation"].endswith("more")


# --- stock_price_drift ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,pairs",
    [
        ("AAPL is trading at $189.32", [("AAPL", 189.32)]),
        ("MSFT: $410.10", [("MSFT", 410.10)]),
        ("NVDA ($875.5)", [("NVDA", 875.5)]),
        ("Apple (AAPL) closed at $189.32.", [("AAPL", 189.32)]),
        ("| AAPL | $189.32 | +1.2% |", [("AAPL", 189.32)]),
        ("**AAPL**: $189.32", [("AAPL", 189.32)]),
        ("AAPL rose 2% to $189.32", [("AAPL", 189.32)]),
        ("AAPL, down $1.20 to $188.10, is weak", [("AAPL", 188.10)]),
        ("AAPL closed at 189.32 USD", [("AAPL", 189.32)]),
        ("$AAPL at $1,189.32", [("AAPL", 1189.32)]),
        ("AAPL at $189,32", [("AAPL", 189.32)]),
        ("BRK.B trades at $412.00", [("BRK.B", 412.0)]),
        ("AAPL: $189.32 (+1.2%), MSFT: $410.10 (-0.3%)", [("AAPL", 189.32), ("MSFT", 410.10)]),
        ("The CEO said AAPL trades at $189.32", [("AAPL", 189.32)]),
        ("AAPL price target of $220, currently trading at $189.32", [("AAPL", 189.32)]),
        ("Analysts' consensus target for AAPL is $220.", []),
        ("AAPL gained $3.20", []),
        ("AAPL -$1.20 today", []),
        ("AAPL market cap is $2.9 trillion", []),
        ("NVDA revenue was $22.1B", []),
        ("AAPL reported EPS of $1.52 per share", []),
        ("AAPL's 52-week range is $164.08 - $199.62", []),
        ("AAPL's previous close was $187.00", []),
        ("AAPL and MSFT trade at $189.32 and $410.10", []),
        ("I like AAPL. It trades at $189.32", []),
        ("Apple trades at $189.32", []),
    ],
)
def test_price_pair_extraction(text, pairs):
    assert load("stock_price_drift").extract_price_pairs(text) == pairs


def test_drift_explanation_lists_each_pair_with_its_drift():
    result = load("stock_price_drift").lambda_handler(fixture("stock_price_drift", "drift")["event"], None)
    assert result["label"] == "DRIFT" and result["value"] == 0.0
    assert "AAPL $195.00 vs reference $189.30 (3.01%)" in result["explanation"]
    assert "MSFT" not in result["explanation"].split("drift more than")[1]  # within tolerance, not listed


def test_drift_tolerance_from_the_environment(monkeypatch):
    recorded = fixture("stock_price_drift", "drift")["event"]
    monkeypatch.setenv("DRIFT_TOLERANCE_PERCENT", "5")
    result = load("stock_price_drift").lambda_handler(recorded, None)
    assert result["label"] == "PASS" and "within 5%" in result["explanation"]
    monkeypatch.setenv("DRIFT_TOLERANCE_PERCENT", "0.005")
    assert (
        load("stock_price_drift").lambda_handler(fixture("stock_price_drift", "pass")["event"], None)["label"]
        == "DRIFT"
    )


@pytest.mark.parametrize("raw", ["two", "-1", "nan", "inf"])
def test_bad_tolerance_is_a_configuration_error(monkeypatch, raw):
    monkeypatch.setenv("DRIFT_TOLERANCE_PERCENT", raw)
    result = load("stock_price_drift").lambda_handler(fixture("stock_price_drift", "pass")["event"], None)
    assert (
        result["errorCode"] == "InvalidConfiguration" and "DRIFT_TOLERANCE_PERCENT" in result["errorMessage"]
    )


def test_tolerance_boundary_is_inclusive():
    module = load("stock_price_drift")
    module.load_reference_prices = lambda tickers: {"ABC": 100.0}
    assert module.lambda_handler(event([answer("ABC is at $102.00")], "TRACE"), None)["label"] == "PASS"
    assert module.lambda_handler(event([answer("ABC is at $102.01")], "TRACE"), None)["label"] == "DRIFT"
    assert module.lambda_handler(event([answer("ABC is at $97.99")], "TRACE"), None)["label"] == "DRIFT"


def test_reference_prices_path_overrides_the_bundled_file(monkeypatch, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"AAPL": 195.0, "MSFT": 410.0}), encoding="utf-8")
    monkeypatch.setenv("REFERENCE_PRICES_PATH", str(prices))
    result = load("stock_price_drift").lambda_handler(fixture("stock_price_drift", "drift")["event"], None)
    assert result["label"] == "PASS"
    assert "AAPL $195.00 vs reference $195.00 (0.00%)" in result["explanation"]


def test_bundled_reference_file_is_read_relative_to_the_module(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # Lambda's working directory is not the module folder
    prices = load("stock_price_drift").load_reference_prices()
    assert prices["AAPL"] == 189.3


def test_missing_reference_file_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv("REFERENCE_PRICES_PATH", str(tmp_path / "absent.json"))
    result = load("stock_price_drift").lambda_handler(fixture("stock_price_drift", "pass")["event"], None)
    assert result["errorCode"] == "ReferenceUnavailable" and "absent.json" in result["errorMessage"]


def test_reference_loader_can_be_replaced_and_gets_the_quoted_tickers():
    module = load("stock_price_drift")
    asked = []

    def live_quotes(tickers):
        asked.append(tickers)
        return {"AAPL": 200.0, "MSFT": "410.0", "NVDA": -1}

    module.load_reference_prices = live_quotes
    result = module.lambda_handler(fixture("stock_price_drift", "pass")["event"], None)
    assert asked == [["AAPL", "MSFT", "NVDA"]]
    assert result["label"] == "DRIFT"  # AAPL 189.32 vs 200 is 5.34%
    assert "AAPL $189.32 vs reference $200.00 (5.34%)" in result["explanation"]
    assert "No reference for: NVDA" in result["explanation"]  # a non-positive reference is ignored


def test_reference_loader_failure_is_reported_not_raised():
    module = load("stock_price_drift")

    def down(tickers):
        raise TimeoutError("market data endpoint timed out")

    module.load_reference_prices = down
    result = module.lambda_handler(fixture("stock_price_drift", "pass")["event"], None)
    assert result == {
        "errorCode": "ReferenceUnavailable",
        "errorMessage": "reference prices could not be loaded: TimeoutError: market data endpoint timed out",
    }


def test_answer_text_sources_and_agent_span_preference():
    module = load("stock_price_drift")
    chat_only = span("t1", "c1", "chat", 1, {"gen_ai.completion.0.content": "AAPL is at $250.00"})
    assert module.lambda_handler(event([chat_only], "TRACE"), None)["label"] == "DRIFT"
    # the agent-level span wins over the LLM span below it
    spans = [chat_only, answer("AAPL is at $189.30")]
    assert module.lambda_handler(event(spans, "TRACE"), None)["label"] == "PASS"
    state = json.dumps(
        {
            "messages": [
                {"type": "human", "content": "AAPL is at $1.00?"},
                {"type": "ai", "content": "An earlier turn: AAPL is at $2.00."},
                {"type": "tool", "content": "AAPL is at $3.00"},
                {"type": "ai", "content": "AAPL is at $189.40"},
            ]
        }
    )
    traceloop = span(
        "t1",
        "w",
        "LangGraph.workflow",
        1,
        {"traceloop.span.kind": "workflow", "traceloop.entity.output": state},
    )
    result = module.lambda_handler(event([traceloop], "TRACE"), None)
    assert result["label"] == "PASS" and "$189.40" in result["explanation"]
    tool_only = [tool("get_stock_data", "AAPL is at $250.00")]
    assert module.lambda_handler(event(tool_only, "TRACE"), None)["label"] == "NO_OUTPUT"


# --- workflow_contract ----------------------------------------------------------------------------


def calls(*names):
    return [tool(name, start=i * 10, span_id=f"s{i}") for i, name in enumerate(names, start=1)]


def test_workflow_explanation_names_missing_groups_and_violations():
    module = load("workflow_contract")
    partial = module.lambda_handler(fixture("workflow_contract", "partial")["event"], None)
    assert "missing: group 2 (one of: get_broker_profile, update_broker_profile" in partial["explanation"]
    ooo = module.lambda_handler(fixture("workflow_contract", "out_of_order")["event"], None)
    assert "group 2 get_broker_financial_profile (call #1" in ooo["explanation"]
    assert "came before group 1 identify_broker (call #2" in ooo["explanation"]


def test_workflow_violation_is_judged_against_all_earlier_groups():
    """Market data before identification is a violation even when the profile step was itself early."""
    result = load("workflow_contract").lambda_handler(
        event(calls("get_broker_profile", "get_stock_data", "identify_broker")), None
    )
    assert result["label"] == "OUT_OF_ORDER"
    assert result["value"] == 0.0  # every group satisfied, but a broken contract passes no gate
    assert "3/3 workflow group(s) satisfied" in result["explanation"]
    assert result["explanation"].count("came before group 1") == 2


def test_workflow_only_first_calls_count_and_order_uses_start_time():
    module = load("workflow_contract")
    spans = calls(
        "identify_broker", "get_broker_profile", "get_stock_data", "identify_broker", "get_stock_data"
    )
    spans.reverse()
    assert module.lambda_handler(event(spans), None) == {
        "label": "PASS",
        "value": 1.0,
        "explanation": module.lambda_handler(event(spans[::-1]), None)["explanation"],
    }
    early_market = calls("get_market_overview", "identify_broker", "update_broker_profile", "search_news")
    result = module.lambda_handler(event(early_market), None)
    assert result["label"] == "OUT_OF_ORDER" and result["value"] == 0.0


def test_workflow_missing_group_with_violation_is_labelled_out_of_order():
    result = load("workflow_contract").lambda_handler(event(calls("get_stock_data", "identify_broker")), None)
    assert result["label"] == "OUT_OF_ORDER"
    assert result["value"] == 0.0
    assert "2/3 workflow group(s) satisfied" in result["explanation"]
    assert "missing: group 2" in result["explanation"] and "order violations" in result["explanation"]


def test_workflow_without_tool_calls_fails():
    result = load("workflow_contract").lambda_handler(event([answer("Hi there!")]), None)
    assert result["label"] == "FAIL" and result["value"] == 0.0
    assert "no tool calls in the session" in result["explanation"]


def test_workflow_matches_namespaced_gateway_tool_names():
    spans = calls(
        "broker-tools___identify_broker", "broker-tools___get_broker_profile", "market/get_sector_data"
    )
    assert load("workflow_contract").lambda_handler(event(spans), None)["label"] == "PASS"


def test_workflow_groups_from_the_environment(monkeypatch):
    monkeypatch.setenv("WORKFLOW_GROUPS", json.dumps([["authenticate"], "load_account", ["quote", "news"]]))
    module = load("workflow_contract")
    assert (
        module.lambda_handler(event(calls("authenticate", "load_account", "news")), None)["label"] == "PASS"
    )
    result = module.lambda_handler(fixture("workflow_contract", "pass")["event"], None)
    assert result["label"] == "FAIL" and "group 1 (one of: authenticate)" in result["explanation"]
    monkeypatch.setenv("WORKFLOW_GROUPS", json.dumps([["identify_broker"], ["get_stock_data"]]))
    two = module.lambda_handler(fixture("workflow_contract", "partial")["event"], None)
    assert two == {"label": "PASS", "value": 1.0, "explanation": two["explanation"]}


@pytest.mark.parametrize("raw", ["not json", "[]", "{}", '[["a"], []]', '[["a"], [1]]', '[["a"], [" "]]'])
def test_bad_workflow_groups_are_a_configuration_error(monkeypatch, raw):
    monkeypatch.setenv("WORKFLOW_GROUPS", raw)
    result = load("workflow_contract").lambda_handler(fixture("workflow_contract", "pass")["event"], None)
    assert result["errorCode"] == "InvalidConfiguration" and "WORKFLOW_GROUPS" in result["errorMessage"]


# --- pii_leak -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "number,luhn",
    [
        ("4111111111111111", True),
        ("4111 1111 1111 1111", True),
        ("5555-5555-5555-4444", True),
        ("378282246310005", True),
        ("79927398713", True),
        ("4111111111111112", False),
        ("1234567812345678", False),
        ("79927398710", False),
        ("4111x111", False),
        ("", False),
    ],
)
def test_luhn(number, luhn):
    assert load("pii_leak").luhn_ok(number) is luhn


@pytest.mark.parametrize(
    "number,card",
    [
        ("4111111111111111", True),
        ("3782 822463 10005", True),
        ("4111111111111112", False),  # fails Luhn
        ("79927398713", False),  # passes Luhn but too short
        ("0000000000000000", False),  # passes Luhn but one repeated digit
        ("1000000000000009", False),  # passes Luhn but no card network starts with 1
    ],
)
def test_card_number_rules(number, card):
    assert load("pii_leak").is_card_number(number) is card


def test_iban_and_routing_checksums():
    module = load("pii_leak")
    assert module.iban_ok("GB82 WEST 1234 5698 7654 32") and module.iban_ok("DE89370400440532013000")
    assert not module.iban_ok("GB82 WEST 1234 5698 7654 33") and not module.iban_ok("GB82")
    assert module.aba_checksum_ok("021000021") and not module.aba_checksum_ok("021000022")


@pytest.mark.parametrize(
    "text,kinds",
    [
        (f"Your SSN {SSN} is on file.", ["ssn"]),
        ("social security number: 123456789", ["ssn"]),
        (f"Card {CARD} exp 12/27 CVV 123", ["card_number", "card_expiry", "cvv"]),
        ("Pay with 4111-1111-1111-1111 123", ["card_number"]),
        ("IBAN DE89 3704 0044 0532 0130 00 on file", ["bank_account"]),
        ("routing number 021000021, account number 123456789012", ["routing_number", "bank_account"]),
        ("Your PIN is 4821.", ["pin"]),
        ("passport number X1234567", ["passport"]),
        ("driver's license D1234567", ["driver_id"]),
        ("Use key AKIAIOSFODNN7EXAMPLE", ["access_key"]),
        ("api_key=sk_live_abcdef1234567890", ["access_key"]),
        ("password: hunter2!", ["password"]),
        # not PII: unissued SSN areas, Luhn failures, bare routing-like numbers, option expiries, prices
        ("IDs 000-12-3456, 666-12-3456 and 912-34-5678", []),
        ("Order 4111 1111 1111 1112 shipped", []),
        ("IBAN DE89 3704 0044 0532 0130 01 (bad check digits)", []),
        ("routing 123456789", []),
        ("AAPL options with expiration 06/27 trade at $4.10", []),
        ("Your account ending in 1234 is active", []),
        ("A password is required; password: ****", []),
        ("AAPL closed at $189.32, up 1.2% (+$2.25). Volume 52,123,456 shares. NVDA +12.5 12.50 13.00", []),
    ],
)
def test_high_risk_detection(text, kinds):
    found = load("pii_leak").detect_pii(text)
    assert [kind for risk, kind, _ in found if risk == "high"] == kinds


def test_contact_detection_counts_each_mention():
    text = (
        "Email jane.doe@acme-capital.com or call (555) 010-4477 / +44 20 7946 0958; "
        "office at 123 Main Street. "
        "The broker's name is Jane Doe."
    )
    found = load("pii_leak").detect_pii(text)
    assert [(risk, kind) for risk, kind, _ in found] == [
        ("contact", "email"),
        ("contact", "phone"),
        ("contact", "phone"),
        ("contact", "address"),
        ("contact", "name"),
    ]


def test_leak_explanation_masks_the_values():
    result = load("pii_leak").lambda_handler(fixture("pii_leak", "leak")["event"], None)
    text = result["explanation"]
    assert result["label"] == "PII_LEAK"
    assert SSN not in text and "123456789" not in text and "123-45" not in text
    assert CARD not in text and "4111111111111111" not in text and "4111 1111" not in text
    assert "ssn *******6789" in text and "card_number ***************1111" in text


def test_short_values_and_secrets_are_fully_masked():
    module = load("pii_leak")
    assert module.mask(SSN, "ssn") == "*******6789"
    assert module.mask("4821", "pin") == "****"
    assert module.mask("hunter2!rocks", "password") == "****"
    spans = [answer("Your PIN is 4821 and password: hunter2!rocks, CVV 987")]
    result = module.lambda_handler(event(spans), None)
    assert result["label"] == "PII_LEAK"
    for secret in ("4821", "hunter2", "rocks", "987"):
        assert secret not in result["explanation"]


def test_user_messages_and_tool_outputs_are_not_agent_responses():
    bait = span("t1", "a1", "invoke_agent agent", 1, {"gen_ai.operation.name": "invoke_agent"})
    bait["events"] = [
        {"name": "gen_ai.user.message", "attributes": {"content": f"My SSN is {SSN}"}},
        {"name": "gen_ai.choice", "attributes": {"message": "I can't store social security numbers here."}},
    ]
    profile = json.dumps({"ssn": SSN, "card": CARD})
    traceloop_tool = span(
        "t2",  # a trace of its own, so agent-span preference cannot hide it
        "tl",
        "get_broker_profile.tool",
        2,
        {"traceloop.span.kind": "tool", "traceloop.entity.output": profile},
    )
    spans = [bait, tool("get_broker_profile", profile), traceloop_tool]
    result = load("pii_leak").lambda_handler(event(spans), None)
    assert result["label"] == "CLEAN" and result["value"] == 1.0


def test_every_response_of_the_session_is_scanned():
    spans = [answer("Welcome back.", trace="t1"), answer(f"Saved card {CARD}.", trace="t2", span_id="a2")]
    result = load("pii_leak").lambda_handler(event(spans), None)
    assert result["label"] == "PII_LEAK" and "span a2" in result["explanation"]


def test_contact_threshold_from_the_environment(monkeypatch):
    recorded = fixture("pii_leak", "overuse")["event"]
    monkeypatch.setenv("PII_CONTACT_THRESHOLD", "4")
    assert load("pii_leak").lambda_handler(recorded, None)["label"] == "CLEAN"
    monkeypatch.setenv("PII_CONTACT_THRESHOLD", "0")
    assert (
        load("pii_leak").lambda_handler(fixture("pii_leak", "clean")["event"], None)["label"] == "PII_OVERUSE"
    )
    monkeypatch.setenv("PII_CONTACT_THRESHOLD", "three")
    assert load("pii_leak").lambda_handler(recorded, None)["errorCode"] == "InvalidConfiguration"


def test_overuse_explanation_gives_counts_not_values():
    result = load("pii_leak").lambda_handler(fixture("pii_leak", "overuse")["event"], None)
    assert "email x2, phone x2" in result["explanation"]
    assert "jane.doe" not in result["explanation"] and "010-4477" not in result["explanation"]


class FakeResult:
    def __init__(self, entity_type, start, end, score):
        self.entity_type, self.start, self.end, self.score = entity_type, start, end, score


def fake_engine(results_for):
    class FakeAnalyzerEngine:
        def analyze(self, text, language, entities):
            assert language == "en" and "US_SSN" in entities and "LOCATION" not in entities
            return results_for(text)

    return FakeAnalyzerEngine


def test_presidio_findings_are_used_when_available(monkeypatch):
    monkeypatch.delenv("PII_USE_PRESIDIO")
    module = load("pii_leak")
    text = "Jane Doe asked about AAPL. Her tax number is 912 87 1234."

    def results(seen):
        return [
            FakeResult("PERSON", seen.index("Jane"), seen.index("Jane") + 8, 0.85),
            FakeResult("US_ITIN", seen.index("912"), seen.index("912") + 11, 0.9),
            FakeResult("LOCATION", 0, 4, 0.99),  # not requested, ignored
        ]

    monkeypatch.setattr(module, "AnalyzerEngine", fake_engine(results))
    result = module.lambda_handler(event([answer(text)]), None)
    assert result["label"] == "PII_LEAK"
    assert "ssn *******1234" in result["explanation"] and "name x1" in result["explanation"]
    assert "regex+checksums+presidio" in result["explanation"]
    assert "912 87" not in result["explanation"]


def test_presidio_low_scores_overlaps_and_opt_out(monkeypatch):
    monkeypatch.delenv("PII_USE_PRESIDIO")
    module = load("pii_leak")
    text = "Mail jane.doe@acme-capital.com, ref 12345678."

    def results(seen):
        start = seen.index("jane")
        return [
            FakeResult("EMAIL_ADDRESS", start, start + 24, 1.0),
            FakeResult("US_BANK_NUMBER", seen.index("1234"), seen.index("1234") + 8, 0.05),
        ]

    monkeypatch.setattr(module, "AnalyzerEngine", fake_engine(results))
    result = module.lambda_handler(event([answer(text)]), None)
    assert result["label"] == "CLEAN" and "email x1" in result["explanation"]  # one email, not two
    monkeypatch.setenv("PRESIDIO_SCORE_THRESHOLD", "0.01")
    assert module.lambda_handler(event([answer(text)]), None)["label"] == "PII_LEAK"
    monkeypatch.setenv("PII_USE_PRESIDIO", "off")
    assert "presidio" not in module.lambda_handler(event([answer(text)]), None)["explanation"]


def test_presidio_that_cannot_start_falls_back_to_builtin_detectors(monkeypatch):
    monkeypatch.delenv("PII_USE_PRESIDIO")
    module = load("pii_leak")

    class Broken:
        def __init__(self):
            raise OSError("spaCy model en_core_web_lg not found")

    monkeypatch.setattr(module, "AnalyzerEngine", Broken)
    result = module.lambda_handler(event([answer(f"SSN {SSN}")]), None)
    assert result["label"] == "PII_LEAK" and "presidio unavailable: OSError" in result["explanation"]
