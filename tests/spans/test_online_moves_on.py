"""Online evaluation always moves on: a session whose evaluation fails gets error results and later sessions are
evaluated (issue 29, item 2).

Each test runs the real loop of ``spans serve`` (``serve(...).start()``: receiver, store, evaluation thread) on
a free loopback port and sends spans over HTTP.
"""

from __future__ import annotations

import json
import re
import time

from evalkit.spans.online.server import serve
from evalkit.spans.online.session_evaluation import SESSION_FAILED, describe
from evalkit.spans.online.session_tracking import Filter
from tests.spans.test_online import CHECK, _lines, _post_json, _span, _states, _wait

#: The first span of data/agentcore_spans.jsonl, its answer nested 3,000 deep (6 KB of JSON text).
DEEP = "[" * 3000 + "]" * 3000


def _llm_span(session: str, trace: int, answer: str) -> dict:
    messages = [{"role": "user", "parts": [{"type": "text", "content": "What is Apple trading at?"}]}]
    attributes = {
        "session.id": session,
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.input.messages": json.dumps(messages),
        "gen_ai.output.messages": answer,
    }
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:016x}",
        "name": "invoke_agent market_trends_agent",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }


def test_a_session_whose_stored_span_no_longer_reads_gets_error_results_and_later_ones_are_evaluated(
    tmp_path,
):
    custom = tmp_path / "custom-evaluators"
    (custom / "check").mkdir(parents=True)
    (custom / "check" / "check.py").write_text(CHECK)
    store = tmp_path / "store"
    server = serve(
        store, evaluators=["check"], custom_dir=custom, port=0, session_timeout=0.3, poll_interval=0.02
    ).start()
    try:
        assert _post_json(server.port, [_span("poisoned", 1, 1, ok="yes")])[0] == 200
        with server.store.lock:  # the row as a damaged store (or text redaction gone wrong) leaves it
            server.store.db.execute("UPDATE spans SET document = '{\"name\": ' WHERE session_id = 'poisoned'")
        time.sleep(0.1)
        assert _post_json(server.port, [_span("later", 2, 2, ok="yes")])[0] == 200
        results = _wait(lambda: len(_lines(store / "results.jsonl")) == 2 and _lines(store / "results.jsonl"))
        time.sleep(0.3)  # more passes: the poisoned session is not tried again
        assert len(_lines(store / "results.jsonl")) == 2
        assert _states(store) == {"poisoned": "evaluated", "later": "evaluated"}
    finally:
        server.stop()
    by_session = {r["attributes"]["session.id"]: r["attributes"] for r in results}
    assert by_session["later"]["gen_ai.evaluation.score.label"] == "PASS"
    failed = by_session["poisoned"]
    assert failed["error.type"] == SESSION_FAILED == "SessionEvaluationFailed"
    # JSONDecodeError today; JsonInputError once store rows are read through evalkit's one JSON parser
    assert re.fullmatch(
        r"the session could not be evaluated: (JSONDecodeError|JsonInputError): .+; evalkit recorded this "
        r"error result and moved on to the next session",
        failed["gen_ai.evaluation.error.message"],
    )
    metrics = {m["session.id"]: m for m in _lines(store / "metrics.jsonl")}
    assert metrics["poisoned"]["label"] == SESSION_FAILED and metrics["poisoned"]["check"] == 0.0


def test_an_llm_judge_over_an_answer_nested_3000_deep_does_not_stop_the_loop(judge_env, tmp_path):
    store = tmp_path / "store"
    server = serve(
        store, evaluators=["Builtin.Helpfulness"], port=0, session_timeout=0.3, poll_interval=0.02
    ).start()
    try:
        assert _post_json(server.port, [_llm_span("hostile", 1, DEEP)])[0] == 200  # valid OTLP: stored
        time.sleep(0.1)
        answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "$182.45"}]}])
        assert _post_json(server.port, [_llm_span("later", 2, answer)])[0] == 200
        results = _wait(lambda: len(_lines(store / "results.jsonl")) == 2 and _lines(store / "results.jsonl"))
        assert _states(store) == {"hostile": "evaluated", "later": "evaluated"}
    finally:
        server.stop()
    later = next(r["attributes"] for r in results if r["attributes"]["session.id"] == "later")
    assert later["gen_ai.evaluation.name"] == "Builtin.Helpfulness" and "error.type" not in later
    assert later["gen_ai.evaluation.score.label"]


def test_a_numeric_filter_compares_a_4000_digit_integer_without_overflow():
    huge = int("9" * 4000)
    assert Filter("tokens>10").matches({"attributes": {"tokens": huge}})
    assert not Filter("tokens<=10").matches({"attributes": {"tokens": huge}})
    assert not Filter("tokens>10").matches({"attributes": {"tokens": "1e999999x"}})


def test_an_exception_is_described_by_type_and_cut_to_500_characters():
    assert describe(RecursionError("maximum recursion depth exceeded")) == (
        "RecursionError: maximum recursion depth exceeded"
    )
    assert describe(KeyError()) == "KeyError"
    long = describe(ValueError("x" * 1000))
    assert len(long) == 500 and long.endswith("...")
