"""The receiver end to end with key-shaped ids, secret-named attributes and a secret made of digits (issue 29
items 2 and 6): sessions are evaluated (none is stuck), joins by trace hold, and no key reaches the store or
the exports."""

from __future__ import annotations

import http.client
import json
import time

from evalkit.spans.online.server import serve

GHP = ["ghp_0123456789abcdefghijABCDEFGHIJklmnop", "ghp_0123456789abcdefghijABCDEFGHIJklmnoq"]
COUNT = """EVALUATION_LEVEL = "SESSION"

def lambda_handler(event, context):
    spans = event["evaluationInput"]["sessionSpans"]
    keys = sorted(s["attributes"].get("x-api-key", "-") for s in spans)
    return {"label": "PASS", "value": 1.0, "explanation": f"{len(spans)} spans, keys {keys}"}
"""


def _span(session, trace: int, span: int, **attributes) -> dict:
    if session is not None:
        attributes["session.id"] = session
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{span:016x}",
        "name": "invoke_agent",
        "startTimeUnixNano": "1700000000123456789",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }


def test_key_shaped_sessions_are_evaluated_joined_and_kept_out_of_store_and_exports(tmp_path, monkeypatch):
    monkeypatch.setenv("RELEASE_TOKEN", "1700000000")  # a secret-named variable made of digits
    (tmp_path / "custom" / "count").mkdir(parents=True)
    (tmp_path / "custom" / "count" / "count.py").write_text(COUNT)
    spans = [
        _span(GHP[0], 1, 1, **{"x-api-key": "plain-header-value"}),
        _span(None, 1, 2),  # no session of its own: joins its trace's
        _span(GHP[1], 2, 3),
    ]
    body = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}
    store = tmp_path / "store"
    server = serve(
        store,
        port=0,
        evaluators=["count"],
        custom_dir=tmp_path / "custom",
        session_timeout=0.3,
        poll_interval=0.02,
    ).start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request(
            "POST", "/v1/traces", body=json.dumps(body), headers={"Content-Type": "application/json"}
        )
        assert connection.getresponse().status == 200
        connection.close()
        results = store / "results.jsonl"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (
            not results.exists() or len(results.read_text().splitlines()) < 2
        ):
            time.sleep(0.05)
    finally:
        server.stop()
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    explanations = sorted(json.dumps(line) for line in lines)
    assert len(lines) == 2, lines
    assert any("2 spans, keys ['***', '-']" in e for e in explanations), explanations  # joined, masked
    assert any("1 spans" in e for e in explanations), explanations  # a second session, not merged
    written = b"".join(p.read_bytes() for p in store.iterdir() if p.is_file())
    for secret in (*GHP, "plain-header-value"):
        assert secret.encode() not in written
