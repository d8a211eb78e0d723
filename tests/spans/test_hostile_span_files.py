"""Hostile span files give a clean error or an error-marked item, never a traceback (issue 29 items 2, 8 and 9):
JSON text nested 3,000 deep (6 KB) in attributes and events, span times past OTLP's fixed64 or of 4,000 digits,
``--since`` of 400 digits, a numeric ``--filter`` against a 4,000-digit ``intValue``, and NaN / Infinity
``doubleValue``s (allowed in OTLP JSON) that must not reach a document as non-JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.documents.validation import schema_problems
from evalkit.spans.reading.message_text import messages_of
from evalkit.spans.reading.span_document import BadSpan, any_value, nanoseconds
from tests.spans.test_spans import run_cli

DEEP = "[" * 3000 + "]" * 3000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000
MESSAGES = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "What is 2+2?"}]}])
ANSWER = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "4"}]}])


def span(
    span_id: str, name: str, attributes: dict, *, end: str = "1700000001000000000", parent=None, events=()
):
    doc = {
        "traceId": "a" * 32,
        "spanId": span_id,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": end,
        "attributes": [{"key": k, "value": v} for k, v in attributes.items()],
    }
    if parent:
        doc["parentSpanId"] = parent
    if events:
        doc["events"] = list(events)
    return doc


def agent(output: str = ANSWER, **extra) -> dict:
    return {
        "session.id": {"stringValue": "s1"},
        "gen_ai.operation.name": {"stringValue": "invoke_agent"},
        "gen_ai.input.messages": {"stringValue": MESSAGES},
        "gen_ai.output.messages": {"stringValue": output},
        **extra,
    }


def write(tmp_path: Path, *spans) -> Path:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]}))
    return path


def deep_spans(tmp_path: Path) -> Path:
    event = {
        "name": "gen_ai.choice",
        "timeUnixNano": "1700000000500000000",
        "attributes": [
            {"key": "message", "value": {"stringValue": DEEP}},
            {"key": "body", "value": {"stringValue": DEEP_OBJECT}},
        ],
    }
    attributes = agent(DEEP, metadata={"stringValue": DEEP_OBJECT})
    return write(tmp_path, span("b" * 16, "invoke_agent", attributes, events=[event]))


def test_json_text_nested_3000_deep_in_attributes_and_events_is_read_as_text():
    assert messages_of(DEEP) == []  # was RecursionError
    assert messages_of(DEEP_OBJECT) == []


def test_to_document_reads_deeply_nested_attribute_and_event_text(tmp_path, capsys):
    out = tmp_path / "doc.json"
    assert run_cli(["spans", "to-document", str(deep_spans(tmp_path)), "--out", str(out)]) == 0
    assert "1 item from 1 trace written" in capsys.readouterr().out
    assert schema_problems(json.loads(out.read_text())) == []


def test_spans_eval_reads_deeply_nested_attribute_and_event_text(tmp_path, capsys):
    custom = tmp_path / "custom"
    (custom / "probe").mkdir(parents=True)
    (custom / "probe" / "probe.py").write_text(
        "EVALUATION_LEVEL = 'SESSION'\n"
        "def lambda_handler(event, context):\n"
        "    return {'label': 'PASS', 'value': 1.0}\n"
    )
    out = tmp_path / "out"
    argv = ["spans", "eval", str(deep_spans(tmp_path)), "--evaluator", "probe", "--custom-dir", str(custom)]
    assert run_cli([*argv, "--out", str(out)]) == 0
    (entry,) = json.loads((out / "results.json").read_text())["evaluationResults"]
    assert entry["label"] == "PASS"


def test_an_llm_span_judge_reads_an_answer_nested_3000_deep_as_text(judge_env, tmp_path, capsys):
    out = tmp_path / "out"
    spans = deep_spans(tmp_path)
    assert (
        run_cli(["spans", "eval", str(spans), "--evaluator", "Builtin.Helpfulness", "--out", str(out)]) == 0
    )
    (entry,) = json.loads((out / "results.json").read_text())["evaluationResults"]
    assert "errorCode" not in entry, entry
    (request,) = [r for r in judge_env.requests if r["api"] is not None]
    assert "[[[[" in json.dumps(request["body"])  # the answer's text, as it was written


def test_times_up_to_2_to_the_64_minus_1_are_read_larger_refused_naming_the_field(tmp_path, capsys):
    assert nanoseconds(str(2**64 - 1), "endTimeUnixNano") == 2**64 - 1
    for value in (str(2**64), "9" * 4000, -1, 2**64):
        with pytest.raises(BadSpan) as caught:
            nanoseconds(value, "endTimeUnixNano")
        assert str(caught.value).startswith(
            "'endTimeUnixNano' must be from 0 to 2^64-1 nanoseconds since the epoch (OTLP's fixed64), found "
        )
    path = write(tmp_path, span("b" * 16, "invoke_agent", agent(), end=str(2**64 - 1)))
    assert run_cli(["spans", "to-document", str(path), "--out", str(tmp_path / "ok.json")]) == 0
    capsys.readouterr()
    path = write(tmp_path, span("b" * 16, "invoke_agent", agent(), end="9" * 4000))
    assert run_cli(["spans", "to-document", str(path), "--out", str(tmp_path / "no.json")]) == 2
    printed = capsys.readouterr().out
    assert "no valid span found" in printed
    assert (
        "'endTimeUnixNano' must be from 0 to 2^64-1 nanoseconds since the epoch (OTLP's fixed64), found '999"
        in (printed)
    )
    assert "(4,000 characters)" in printed


def test_a_since_of_400_digits_is_an_error(tmp_path, capsys):
    path = write(tmp_path, span("b" * 16, "invoke_agent", agent()))
    since = "9" * 400
    assert (
        run_cli(["spans", "to-document", str(path), "--out", str(tmp_path / "d.json"), "--since", since]) == 2
    )
    assert capsys.readouterr().out.startswith("Error: --since '99999999")


def test_a_numeric_filter_against_a_4000_digit_int_value_compares_it(tmp_path, capsys):
    path = write(tmp_path, span("b" * 16, "invoke_agent", agent(count={"intValue": "9" * 4000})))
    out = tmp_path / "d.json"
    assert run_cli(["spans", "to-document", str(path), "--out", str(out), "--filter", "count>5"]) == 0
    assert len(json.loads(out.read_text())["items"]) == 1
    assert run_cli(["spans", "to-document", str(path), "--out", str(out), "--filter", "count<5"]) == 2


def test_nan_and_infinity_double_values_are_kept_as_their_otlp_strings(tmp_path, capsys):
    assert any_value({"doubleValue": "NaN"}, "v") == "NaN"
    assert any_value({"doubleValue": "Infinity"}, "v") == "Infinity"
    assert any_value({"doubleValue": "-Infinity"}, "v") == "-Infinity"
    assert any_value({"doubleValue": 1.5}, "v") == 1.5
    arguments = {
        "values": [
            {"key": "x", "value": {"doubleValue": "NaN"}},
            {"key": "y", "value": {"doubleValue": "-Infinity"}},
        ]
    }
    tool = {
        "gen_ai.operation.name": {"stringValue": "execute_tool"},
        "gen_ai.tool.name": {"stringValue": "lookup"},
        "gen_ai.tool.call.arguments": {"kvlistValue": arguments},
    }
    path = write(
        tmp_path,
        span("b" * 16, "invoke_agent", agent()),
        span("c" * 16, "execute_tool lookup", tool, parent="b" * 16),
    )
    out = tmp_path / "d.json"
    assert run_cli(["spans", "to-document", str(path), "--out", str(out)]) == 0
    text = out.read_text()
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} written as JSON"))
    assert schema_problems(document) == []
    assert '"x": "NaN"' in text and '"y": "-Infinity"' in text


def test_spans_invoke_passes_deeply_nested_attribute_text_to_the_handler(tmp_path, capsys):
    from evalkit.cli import main as cli_main

    event = json.loads((Path(__file__).parent / "data" / "agentcore_sdk_split_format_event.json").read_text())
    for doc in event["evaluationInput"]["sessionSpans"]:
        doc.setdefault("attributes", {}).update({"gen_ai.output.messages": DEEP, "metadata": DEEP_OBJECT})
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    custom = tmp_path / "custom"
    (custom / "probe").mkdir(parents=True)
    (custom / "probe" / "probe.py").write_text(
        "EVALUATION_LEVEL = 'SESSION'\n"
        "def lambda_handler(event, context):\n"
        "    attributes = event['evaluationInput']['sessionSpans'][0]['attributes']\n"
        "    return {'label': 'PASS', 'value': 1.0, 'explanation': str(len(attributes['metadata']))}\n"
    )
    assert cli_main(["spans", "invoke", "probe", "--custom-dir", str(custom), "--event", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["explanation"] == str(len(DEEP_OBJECT))


def test_nan_double_values_are_stored_in_the_online_store_as_json(tmp_path):
    from evalkit.spans import load
    from evalkit.spans.online.store import Store

    values = {k: {"doubleValue": k} for k in ("NaN", "Infinity", "-Infinity")}
    path = write(tmp_path, span("b" * 16, "invoke_agent", agent(**values)))
    docs = load(path)["document"].tolist()
    store = Store(tmp_path / "store")
    try:
        assert store.add_spans(docs, ["s1"], lambda session: True) == 1
        (stored,) = store.session_documents("s1")  # read back by the one parser, which refuses NaN tokens
    finally:
        store.close()
    assert {k: stored["attributes"][k] for k in values} == {k: k for k in values}
