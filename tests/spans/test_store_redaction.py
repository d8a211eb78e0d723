"""The online store keeps no key: span documents and evaluator results are stored redacted."""

from __future__ import annotations

import json
import logging

import pandas as pd

from evalkit.agents.span_capture import write_spans_jsonl
from evalkit.documents import redaction
from evalkit.spans.online.store import Store

KEY = "configured-agent-key-5b7e21"


def test_spans_and_results_are_stored_redacted(tmp_path, monkeypatch):
    monkeypatch.setattr(redaction, "_registered", set())
    redaction.register_secret(KEY)
    doc = {
        "traceId": "t1",
        "spanId": "s1",
        "name": "POST",
        "attributes": {"url.full": "https://bot:url-pass-77a1@agent.example.org/v1", "note": f"key {KEY}"},
    }
    result = {
        "evaluatorName": "tone",
        "context": {"spanContext": {"traceId": "t1", "spanId": "s1"}},
        "label": None,
        "value": None,
        "explanation": f"model said 401 for {KEY}",
        "errorCode": "EvaluatorError",
        "errorMessage": "Incorrect API key provided: sk-abcdef0123456789",
        "passed": False,
    }
    store = Store(tmp_path / "store")
    try:
        store.add_spans([doc], ["session"], lambda _: True, now=0.0)
        store.complete_idle(timeout=1.0, now=10.0)
        assert store.finish("session", "evaluated", [result], now=11.0)
        (stored,) = store.session_documents("session")
        assert stored["attributes"] == {"url.full": "https://***@agent.example.org/v1", "note": "key ***"}
        assert store.results_rows()[0][8] == "model said 401 for ***"
        entry = json.loads(store.results_after(0)[0][2])
        assert entry["explanation"] == "model said 401 for ***"
        assert entry["errorMessage"] == "Incorrect API key provided: sk-***"
        raw = b"".join(p.read_bytes() for p in (tmp_path / "store").iterdir())
    finally:
        store.close()
    for secret in (KEY, "url-pass-77a1", "sk-abcdef0123456789"):
        assert secret.encode() not in raw


def test_spans_jsonl_is_written_redacted(tmp_path):
    spans = [
        {"traceId": "t", "spanId": "s", "attributes": {"http.url": "http://u:spanpass1@h/v1"}},
        {"traceId": "t", "spanId": "u", "startTimeUnixNano": 7, "attributes": {"x-api-key": "plain", "n": 3}},
    ]
    path = tmp_path / "spans.jsonl"
    assert write_spans_jsonl(pd.DataFrame({"spans": [spans]}), path) == 2
    first, second = map(json.loads, path.read_text().splitlines())
    assert first["attributes"]["http.url"] == "http://***@h/v1"
    assert second == {**spans[1], "attributes": {"x-api-key": "***", "n": 3}}


def test_the_receiver_token_and_webhook_credentials_are_never_logged(tmp_path, monkeypatch, caplog):
    from evalkit.spans.online.server import serve

    monkeypatch.setattr(redaction, "_registered", set())
    serve(
        tmp_path / "s",
        evaluators=[],
        token="receiver-token-123456",
        alarm_webhook="https://h:hookpass99@x.org/a",
    )
    with caplog.at_level(logging.WARNING, logger="evalkit.spans"):
        logging.getLogger("evalkit.spans.test").warning(
            "rejected Bearer receiver-token-123456; hookpass99 failed"
        )
    assert caplog.records[-1].getMessage() == "rejected Bearer ***; *** failed"


def _span(trace: str, span: str, **attributes) -> dict:
    return {
        "traceId": trace,
        "spanId": span,
        "name": "invoke_agent",
        "startTimeUnixNano": 1700000000123456789,
        "endTimeUnixNano": 1700000000987654321,
        "attributes": attributes,
    }


def test_a_secret_made_of_digits_does_not_rewrite_the_numbers_of_stored_spans(tmp_path, monkeypatch):
    """Issue 29 item 2: the store redacted serialized text, so a digit-valued secret rewrote span times into
    unparseable JSON, and every later pass failed on that session. Now the parsed values are redacted."""
    monkeypatch.setenv("DEPLOY_TOKEN", "1700000000")
    doc = _span("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", turns=3, note="no secret here")
    store = Store(tmp_path / "store")
    try:
        store.add_spans([doc], ["session-1"], lambda _: True, now=0.0)
        assert store.session_documents("session-1") == [doc]
    finally:
        store.close()


def test_key_shaped_ids_and_secret_named_attributes_are_not_kept(tmp_path, monkeypatch):
    """Issue 29 item 6: session and trace ids shaped like keys, api_key / x-api-key values were stored as
    sent. Ids holding a key are stored masked (the same mask everywhere, so sessions and traces still join,
    and two such ids stay two sessions); secret-named attributes lose their values."""
    monkeypatch.setattr(redaction, "_registered", set())
    sessions = ["ghp_0123456789abcdefghijABCDEFGHIJklmnop", "ghp_0123456789abcdefghijABCDEFGHIJklmnoq"]
    trace = "sk-live0123456789abcdef"
    docs = [
        _span(trace, "00f067aa0ba902b7", **{"session.id": sessions[0], "api_key": "plain-value-1"}),
        _span(
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "00f067aa0ba902b8",
            **{"session.id": sessions[1], "http.request.header.x-api-key": "plain-value-2"},
        ),
    ]
    result = {
        "evaluatorName": "tone",
        "context": {
            "spanContext": {"sessionId": sessions[0], "traceId": trace, "spanId": "00f067aa0ba902b7"}
        },
        "label": "PASS",
        "value": 1.0,
        "passed": True,
    }
    store = Store(tmp_path / "store")
    try:
        store.add_spans(docs, sessions, lambda _: True, now=0.0)
        masked = redaction.redact_ids(sessions)
        assert store.trace_sessions([trace]) == {trace: masked[0]}  # the join by trace id still holds
        assert store.span_sessions([(trace, "00f067aa0ba902b7")]) == {(trace, "00f067aa0ba902b7"): masked[0]}
        assert store.complete_idle(timeout=1.0, now=10.0) == 2  # two sessions, not one
        assert sorted(s for s, _, _ in store.complete_sessions()) == sorted(masked)
        (first,) = store.session_documents(masked[0])
        assert first["traceId"] == redaction.redact_id(trace) != trace
        assert first["attributes"] == {"session.id": masked[0], "api_key": "***"}
        assert first["startTimeUnixNano"] == 1700000000123456789
        (second,) = store.session_documents(masked[1])
        assert second["attributes"]["http.request.header.x-api-key"] == "***"
        assert store.finish(masked[0], "evaluated", [result], now=11.0)
        row = store.results_rows()[0]
        assert (row[2], row[4]) == (masked[0], redaction.redact_id(trace))
        entry = json.loads(store.results_after(0)[0][2])
        assert entry["context"]["spanContext"]["sessionId"] == masked[0]
        raw = b"".join(p.read_bytes() for p in (tmp_path / "store").iterdir())
    finally:
        store.close()
    for secret in (*sessions, trace, "plain-value-1", "plain-value-2"):
        assert secret.encode() not in raw


def test_to_document_selects_a_masked_session_by_the_id_it_was_sent_with(tmp_path):
    from evalkit import spans

    ghp = "ghp_0123456789abcdefghijABCDEFGHIJklmnop"
    messages = {
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "2+2?"}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "4"}]}]
        ),
    }
    doc = _span("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", **{"session.id": ghp}, **messages)
    store = Store(tmp_path / "store")
    try:
        store.add_spans([doc], [ghp], lambda _: True, now=0.0)
    finally:
        store.close()
    document = spans.to_document(store=tmp_path / "store", by="session", session=ghp)
    (thread,) = document["items"]
    assert thread["conversation_id"] == redaction.redact_id(ghp)
    assert [(t["prompt"], t["response"]) for t in thread["turns"]] == [("2+2?", "4")]
    assert ghp not in json.dumps(document)
