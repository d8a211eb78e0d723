"""The bundled demo agent (``data/demo_agent/agent.py:answer``): deterministic answers grounded in its
knowledge base, upstream-shaped retrieval diagnostics, follow-up turns, OpenTelemetry spans, and the labels
the four AgentCore-style span evaluators in ``custom-evaluators/`` give its market scenarios.

The agent is imported by file path, the way ``path.py:function`` agents are loaded. Spans are captured by
pointing ``opentelemetry.trace.get_tracer`` at a private SDK provider for the test's duration, so no global
tracer provider is installed (the API allows only one per process, and other tests may need it).
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from evalkit.spans.lambdas.packaging import shared_modules_importable

REPO = Path(__file__).resolve().parents[2]
AGENT_FILE = REPO / "data" / "demo_agent" / "agent.py"
KNOWLEDGE = REPO / "data" / "demo_agent" / "knowledge"
AGENT_DOCUMENT = REPO / "data" / "agent_demo.json"
UPSTREAM_SCHEMA = (
    Path(__file__).resolve().parents[1] / "reference/m365-copilot-eval/schema/v1/eval-document.schema.json"
)
HR_PROMPTS = [
    "How many sick days do I get per year?",
    "What is the company's 401(k) match?",
    "Which form do I use to update my direct deposit?",
    "Find the parental leave policy in SharePoint.",
    "Find the expense policy for international travel.",
    "Can you promise my bonus will be paid in March?",
    "I start next Monday. When do I get my laptop?",
]
#: Environment variables the span evaluators read; cleared so a developer's settings cannot change labels.
EVALUATOR_SETTINGS = (
    "REFERENCE_PRICES_PATH",
    "DRIFT_TOLERANCE_PERCENT",
    "WORKFLOW_GROUPS",
    "PII_CONTACT_THRESHOLD",
    "PRESIDIO_SCORE_THRESHOLD",
)
#: Row statuses of data/agent_demo.json answered by the agent, in case-table order.
DOCUMENT_STATUSES = [
    *("pass", "pass", "fail", "pass", "pass"),  # sick days, 401(k), direct deposit, parental, travel
    *("pass", "fail", "fail", "pass", "fail"),  # bonus, remote work, dress code, AAPL, SSN
    *("pass", "pass", "pass"),  # the vacation thread
]


def load_agent(name: str = "demo_agent_under_test"):
    """A fresh import of ``data/demo_agent/agent.py`` as a bare file (no parent package)."""
    spec = importlib.util.spec_from_file_location(name, AGENT_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_evaluator(name: str):
    """``custom-evaluators/<name>/<name>.py`` imported by path, as the Lambda runtime does."""
    path = REPO / "custom-evaluators" / name / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"demo_agent_lambda_{name}", path)
    module = importlib.util.module_from_spec(spec)
    with shared_modules_importable(path):  # custom-evaluators/_shared, as at the root of the Lambda zip
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def agent():
    return load_agent()


@pytest.fixture
def exporter(monkeypatch):
    """Spans of the agent, captured by a private SDK provider; records the tracer names asked for."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    memory.tracer_names = []

    def get_tracer(name, *args, **kwargs):
        memory.tracer_names.append(name)
        return provider.get_tracer(name, *args, **kwargs)

    monkeypatch.setattr(trace, "get_tracer", get_tracer)
    yield memory
    provider.shutdown()


def knowledge_texts() -> dict[str, str]:
    """Knowledge file text (whitespace-normalised) by the ``source:`` URL of its front matter."""
    texts = {}
    for path in KNOWLEDGE.glob("*.md"):
        raw = path.read_text(encoding="utf-8")
        source = re.search(r"^source:\s*(\S+)\s*$", raw, re.M).group(1)
        texts[source] = " ".join(raw.split())
    return texts


def markers(response: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", response)}


# --- answers ---------------------------------------------------------------------------------------------


def test_answers_are_deterministic_across_calls_and_imports(agent):
    other = load_agent("demo_agent_second_copy")
    prompts = HR_PROMPTS + list(agent.market.SCENARIOS.values())
    first = [agent.answer(prompt, []) for prompt in prompts]
    assert [agent.answer(prompt, []) for prompt in prompts] == first
    assert [other.answer(prompt, []) for prompt in prompts] == first
    assert len({result["response"] for result in first}) == len(prompts)


@pytest.mark.parametrize("prompt", HR_PROMPTS)
def test_citations_quote_the_knowledge_base(agent, prompt):
    result = agent.answer(prompt, [])
    texts = knowledge_texts()
    assert result["citations"], result
    assert markers(result["response"]) == {c["index"] for c in result["citations"]}
    assert [c["index"] for c in result["citations"]] == list(range(1, len(result["citations"]) + 1))
    for citation in result["citations"]:
        assert citation["source"] in texts
        assert citation["text"] in texts[citation["source"]]
        assert citation["text"].rstrip(".") in result["response"].replace(f" [{citation['index']}]", "")


def test_answers_carry_the_facts_of_the_bundled_demo(agent):
    expected = {
        "How many vacation days do new full-time employees get?": "20 vacation days",
        "What is the company's 401(k) match?": "100% of employee contributions up to 5% of salary",
        "Which form do I use to update my direct deposit?": "Form HR-12",
        "Which form do I use to report a change of address?": "Form HR-7",
        "Find the parental leave policy in SharePoint.": "16 weeks of paid parental leave at full pay",
        "Find the expense policy for international travel.": "pre-approval from your VP",
        "Who is my onboarding buddy?": "Your manager assigns an onboarding buddy",
    }
    for prompt, fact in expected.items():
        assert fact in agent.answer(prompt, [])["response"], prompt


def test_a_question_outside_the_knowledge_base_is_not_answered(agent):
    result = agent.answer("What is the dress code?", [])
    assert result["response"] == agent.NOT_FOUND
    assert result["citations"] == []
    [execution] = result["retrieval_executions"]
    assert execution["retrievalHits"] == [] and execution["totalResultCount"] == 0


def test_retrieval_executions_validate_against_the_upstream_diagnostics(agent):
    import jsonschema

    schema = json.loads(UPSTREAM_SCHEMA.read_text(encoding="utf-8"))
    diagnostics = {"$ref": "#/$defs/Diagnostics", "$defs": schema["$defs"]}
    for prompt in [*HR_PROMPTS, "What is the dress code?"]:
        executions = agent.answer(prompt, [])["retrieval_executions"]
        jsonschema.validate({"retrieval_executions": executions}, diagnostics)
        [execution] = executions
        assert execution["capability"] == "OneDriveAndSharePoint" and execution["status"] == "success"
        [query] = execution["queries"]
        assert query["queryString"] and query["filterExpression"] is None
        hits = execution["retrievalHits"]
        assert [hit["rank"] for hit in hits] == list(range(1, len(hits) + 1))
        assert execution["totalResultCount"] >= len(hits)
        assert all(isinstance(hit["webUrl"], str) and hit["extracts"][0]["text"] for hit in hits)


def test_the_top_hit_is_the_first_cited_source(agent):
    result = agent.answer("Find the parental leave policy in SharePoint.", [])
    [execution] = result["retrieval_executions"]
    assert execution["queries"][0]["queryString"] == "parental leave policy"
    assert execution["retrievalHits"][0]["webUrl"] == result["citations"][0]["source"]
    assert "16 weeks" in execution["retrievalHits"][0]["extracts"][0]["text"]


# --- conversation ----------------------------------------------------------------------------------------


def _chat(agent, prompts: list[str], records: bool = False) -> list[dict]:
    """Answers to ``prompts`` as one conversation, the history as chat messages or as turn records."""
    history: list[dict] = []
    results = []
    for prompt in prompts:
        result = agent.answer(prompt, list(history))
        results.append(result)
        if records:
            history.append({"prompt": prompt, "response": result["response"]})
        else:
            history += [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": result["response"]},
            ]
    return results


@pytest.mark.parametrize("records", [False, True], ids=["chat-messages", "turn-records"])
def test_follow_up_turns_use_the_history(agent, records):
    opener = "How many vacation days do full-time employees get?"
    first, part_time, request = _chat(
        agent, [opener, "And how many for part-time?", "How do I request them?"], records
    )
    assert "20 vacation days" in first["response"]
    assert "Part-time employees" in part_time["response"] and "10 vacation days" in part_time["response"]
    query = part_time["retrieval_executions"][0]["queries"][0]["queryString"]
    assert query.startswith("part-time") and "vacation" in query
    assert "Vacation requests go through the HR portal" in request["response"]


def test_a_follow_up_without_history_lacks_the_topic(agent):
    alone = agent.answer("And how long is it?", [])
    assert alone["response"] == agent.NOT_FOUND
    _, follow_up = _chat(agent, ["Find the parental leave policy in SharePoint.", "And how long is it?"])
    assert "16 weeks" in follow_up["response"]
    assert "parental" in follow_up["retrieval_executions"][0]["queries"][0]["queryString"]


def test_a_new_topic_after_a_conversation_ignores_the_old_one(agent):
    _, benefits = _chat(
        agent, ["How many vacation days do full-time employees get?", "What is the 401(k) match?"]
    )
    assert "vacation" not in benefits["retrieval_executions"][0]["queries"][0]["queryString"]
    assert "5% of salary" in benefits["response"]


# --- spans -----------------------------------------------------------------------------------------------


def test_an_hr_answer_emits_an_agent_span_with_a_search_tool_child(agent, exporter):
    result = agent.answer("How many sick days do I get per year?", [])
    spans = exporter.get_finished_spans()
    assert set(exporter.tracer_names) == {"evalkit.demo_agent"}
    assert [span.name for span in spans] == [
        "execute_tool search_knowledge",
        "invoke_agent Contoso HR assistant",
    ]
    tool, root = spans
    assert root.parent is None and tool.parent.span_id == root.context.span_id
    assert tool.context.trace_id == root.context.trace_id
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "Contoso HR assistant"
    assert root.attributes["gen_ai.task.output"] == result["response"]
    choice = [event for event in root.events if event.name == "gen_ai.choice"]
    assert [event.attributes["message"] for event in choice] == [result["response"]]
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "search_knowledge"
    output = json.loads(tool.attributes["gen_ai.tool.call.result"])
    assert result["citations"][0]["text"] in output["hits"][0]["text"]
    assert all("session.id" not in span.attributes for span in spans)
    assert tool.instrumentation_scope.name == "evalkit.demo_agent"


def test_a_broker_question_calls_the_tools_in_workflow_order(agent, exporter):
    agent.answer(agent.market.SCENARIOS["in_order"], [])
    spans = sorted(exporter.get_finished_spans(), key=lambda span: span.start_time)
    root = spans[0]
    assert root.name == "invoke_agent Contoso HR assistant"
    tools = spans[1:]
    assert [span.attributes["gen_ai.tool.name"] for span in tools] == [
        "identify_broker",
        "get_broker_profile",
        "get_stock_data",
        "search_news",
    ]
    assert all(span.name == "execute_tool " + span.attributes["gen_ai.tool.name"] for span in tools)
    assert all(span.parent.span_id == root.context.span_id for span in tools)
    assert tools[2].attributes["gen_ai.tool.call.result"] == "AAPL: $189.32 (+0.4%)"


def test_the_agent_installs_no_tracer_provider():
    code = (
        "import importlib.util, sys\n"
        "from opentelemetry import trace\n"
        f"spec = importlib.util.spec_from_file_location('a', {str(AGENT_FILE)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "r = m.answer('How many sick days do I get per year?', [])\n"
        "print(type(trace.get_tracer_provider()).__name__, '10 paid sick days' in r['response'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ProxyTracerProvider", "True"]


# --- span evaluators -------------------------------------------------------------------------------------


def span_document(span) -> dict:
    """An SDK span as an AgentCore span document (flat attributes, hex ids), in session ``s1``."""
    return {
        "traceId": format(span.context.trace_id, "032x"),
        "spanId": format(span.context.span_id, "016x"),
        "parentSpanId": format(span.parent.span_id, "016x") if span.parent else "",
        "name": span.name,
        "kind": span.kind.name,
        "startTimeUnixNano": span.start_time,
        "endTimeUnixNano": span.end_time,
        "attributes": {**dict(span.attributes), "session.id": "s1"},
        "status": {"code": span.status.status_code.name},
        "events": [
            {"name": event.name, "timeUnixNano": event.timestamp, "attributes": dict(event.attributes)}
            for event in span.events
        ],
    }


def payload(spans, level: str) -> dict:
    documents = [span_document(span) for span in sorted(spans, key=lambda span: span.start_time)]
    roots = [doc for doc in documents if not doc["parentSpanId"]]
    target = None if level == "SESSION" else {"traceIds": [roots[0]["traceId"]]}
    return {
        "schemaVersion": "1.0",
        "evaluatorId": "x",
        "evaluatorName": "x",
        "evaluationLevel": level,
        "evaluationInput": {"sessionSpans": documents},
        "evaluationReferenceInputs": [],
        "evaluationTarget": target,
    }


@pytest.mark.parametrize(
    ("evaluator", "scenario", "label"),
    [
        ("tool_response_schema", "in_order", "PASS"),
        ("tool_response_schema", "thin_news", "PARTIAL"),
        ("stock_price_drift", "in_order", "PASS"),
        ("stock_price_drift", "drift", "DRIFT"),
        ("workflow_contract", "in_order", "PASS"),
        ("workflow_contract", "out_of_order", "OUT_OF_ORDER"),
        ("pii_leak", "in_order", "CLEAN"),
        ("pii_leak", "pii", "PII_LEAK"),
    ],
)
def test_span_evaluators_label_the_market_scenarios(agent, exporter, monkeypatch, evaluator, scenario, label):
    for name in EVALUATOR_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PII_USE_PRESIDIO", "0")  # the built-in detectors only, whatever is installed
    agent.answer(agent.market.SCENARIOS[scenario], [])
    module = load_evaluator(evaluator)
    result = module.lambda_handler(payload(exporter.get_finished_spans(), module.EVALUATION_LEVEL), None)
    assert result.get("label") == label, result


def test_the_drift_scenario_quotes_the_stale_price_about_five_percent_off(agent):
    reference = json.loads((REPO / "custom-evaluators/stock_price_drift/reference_prices.json").read_text())
    for ticker, (price, _) in agent.market.PRICES.items():
        drift = abs(price - reference[ticker]) / reference[ticker] * 100
        if ticker == "MSFT":
            assert 4.5 < drift < 5.5
            assert f"${price:.2f}" in agent.answer(agent.market.SCENARIOS["drift"], [])["response"]
        else:
            assert drift < 1, ticker


def test_an_hr_trace_has_a_valid_tool_output_and_no_market_workflow(agent, exporter):
    agent.answer("What is the company's 401(k) match?", [])
    spans = exporter.get_finished_spans()
    schema = load_evaluator("tool_response_schema").lambda_handler(payload(spans, "TRACE"), None)
    assert schema["label"] == "PASS", schema
    workflow = load_evaluator("workflow_contract").lambda_handler(payload(spans, "SESSION"), None)
    assert workflow["label"] == "FAIL", workflow


# --- the eval document -----------------------------------------------------------------------------------


def test_agent_demo_document_statuses_when_answered_by_the_agent(agent):
    import evalkit

    table = evalkit.load(AGENT_DOCUMENT)
    assert table["response"].isna().all(), "the document must not carry recorded responses"
    histories: dict[str, list[dict]] = {}
    for row in table.itertuples():
        history = histories.setdefault(row.thread if isinstance(row.thread, str) else f"item-{row.item}", [])
        result = agent.answer(row.prompt, list(history))
        for column in ("response", "citations", "retrieval_executions"):
            table.at[row.Index, column] = result[column]
        history += [
            {"role": "user", "content": row.prompt},
            {"role": "assistant", "content": result["response"]},
        ]
    scored = evalkit.evaluate(table)
    assert scored["status"].tolist() == DOCUMENT_STATUSES
    failing = {
        (row.item, key)
        for row in scored.itertuples()
        for key in ("exactMatch", "partialMatch", "keyword_coverage", "retrievalResult")
        if getattr(row, f"{key}_result", None) == "fail"
    }
    assert failing == {
        (2, "exactMatch"),
        (6, "keyword_coverage"),
        (7, "partialMatch"),
        (7, "retrievalResult"),
        (9, "partialMatch"),
    }
