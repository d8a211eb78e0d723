"""Online filters as AgentCore's ``Rule.filters``: eight operators, at most five, keys in AgentCore's pattern.

The operator names and the limit are held against botocore's ``bedrock-agentcore-control`` model in
``test_agentcore_judge_config.py``; here each operator's meaning, the limit on the command line, and sessions
sent by the real OpenTelemetry SDK (``OTLPSpanExporter`` over loopback) selected by the new operators.
"""

from __future__ import annotations

import json
import time

import pytest

from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.spans.online.server import serve
from evalkit.spans.online.session_tracking import MAX_FILTERS, Filter, parse_filters

SPAN = {"attributes": {"gen_ai.request.model": "claude-3-haiku", "tokens": 10, "cached": True}}


@pytest.mark.parametrize(
    ("text", "operator", "matches"),
    [
        ("gen_ai.request.model=claude-3-haiku", "Equals", True),
        ("gen_ai.request.model!=claude-3-haiku", "NotEquals", False),
        ("gen_ai.request.model~=claude", "Contains", True),
        ("gen_ai.request.model!~=claude", "NotContains", False),
        ("gen_ai.request.model!~=gpt", "NotContains", True),
        ("tokens>10", "GreaterThan", False),
        ("tokens<10", "LessThan", False),
        ("tokens>=10", "GreaterThanOrEqual", True),
        ("tokens<=10", "LessThanOrEqual", True),
        ("tokens<=9.5", "LessThanOrEqual", False),
        ("cached=true", "Equals", True),
    ],
)
def test_each_operator(text, operator, matches):
    condition = Filter(text)
    assert condition.operator == operator
    assert condition.matches(SPAN) is matches


def test_an_absent_attribute_satisfies_no_operator():
    for text in ("missing!=x", "missing!~=x", "missing>=0", "missing<=0"):
        assert not Filter(text).matches(SPAN), text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tokens>=many", "GreaterThanOrEqual compares numbers; 'many' is not a number"),
        ("has space=1", "is not an AgentCore filter key"),
        ("k=", "1 to 1024 characters"),
        ("nothing", "KEY!~=VALUE, KEY>N, KEY<N, KEY>=N or KEY<=N"),
    ],
)
def test_mistakes_are_named(text, message):
    with pytest.raises(EvalkitError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Filter(text)


def test_at_most_five_filters():
    assert len(parse_filters([f"k{i}=v" for i in range(MAX_FILTERS)])) == 5
    with pytest.raises(EvalkitError, match="6 filters given: AgentCore's online evaluation takes at most 5"):
        parse_filters([f"k{i}=v" for i in range(6)])


def test_six_filters_on_the_command_line_exit_2_before_anything_is_made(tmp_path, capsys):
    (tmp_path / "ce" / "check").mkdir(parents=True)
    (tmp_path / "ce" / "check" / "check.py").write_text(
        'EVALUATION_LEVEL = "SESSION"\ndef lambda_handler(e, c):\n    return {"label": "PASS", "value": 1.0}\n'
    )
    argv = ["spans", "serve", "--store", str(tmp_path / "s"), "--custom-dir", str(tmp_path / "ce")]
    argv += ["--evaluator", "check", "--port", "0"]
    for i in range(6):
        argv += ["--filter", f"k{i}=v"]
    assert main(argv) == 2
    assert "at most 5" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_sessions_from_the_opentelemetry_sdk_are_selected_by_the_new_operators(tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    (tmp_path / "ce" / "check").mkdir(parents=True)
    (tmp_path / "ce" / "check" / "check.py").write_text(
        'EVALUATION_LEVEL = "SESSION"\ndef lambda_handler(e, c):\n    return {"label": "PASS", "value": 1.0}\n'
    )
    server = serve(
        tmp_path / "store", port=0, evaluators=["check"], custom_dir=tmp_path / "ce", session_timeout=0.3,
        poll_interval=0.02, filters=["gen_ai.request.model!~=gpt", "gen_ai.usage.input_tokens>=100"],
    ).start()  # fmt: skip
    try:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.url)))
        tracer = provider.get_tracer("filters")
        for session, model, tokens in [("big-claude", "claude-3", 100), ("small-claude", "claude-3", 99),
                                       ("big-gpt", "gpt-4o", 500)]:  # fmt: skip
            attributes = {
                "session.id": session,
                "gen_ai.request.model": model,
                "gen_ai.usage.input_tokens": tokens,
            }
            with tracer.start_as_current_span("chat", attributes=attributes):
                pass
        provider.shutdown()
        results = tmp_path / "store" / "results.jsonl"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not results.exists():
            time.sleep(0.02)
        time.sleep(0.5)  # the other two sessions complete in the same sweep; none may be evaluated
    finally:
        server.stop()
    evaluated = {json.loads(line)["attributes"]["session.id"] for line in results.read_text().splitlines()}
    assert evaluated == {"big-claude"}
