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
    spans = [{"traceId": "t", "spanId": "s", "attributes": {"http.url": "http://u:spanpass1@h/v1"}}]
    path = tmp_path / "spans.jsonl"
    assert write_spans_jsonl(pd.DataFrame({"spans": [spans]}), path) == 1
    assert json.loads(path.read_text())["attributes"]["http.url"] == "http://***@h/v1"


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
