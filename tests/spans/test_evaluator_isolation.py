"""Code-based span evaluators run in worker processes: a hang is killed at the timeout, a crash costs one result.

Covers ``evaluate_spans``, ``evalkit spans eval`` and the online receiver (whose intake must stay fast while
evaluators hang). The evaluators are real files under a temporary ``custom-evaluators`` folder.
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.spans.online.server import serve

MARKET = Path(__file__).resolve().parents[1] / "data" / "spans" / "market.jsonl"

HANG = """
EVALUATION_LEVEL = "SESSION"
import time
def lambda_handler(event, context):
    time.sleep(3600)
"""

# Busy in Python, holding the GIL: on a thread this slows every other thread of the process.
SPIN = """
EVALUATION_LEVEL = "SESSION"
import os
def lambda_handler(event, context):
    with open(os.environ["EVALKIT_TEST_PIDS"], "a") as handle:
        handle.write(f"{os.getpid()}\\n")
    while True:
        pass
"""

# Crashes its process on session sess-a only; counts the calls its process has answered.
CRASH = """
EVALUATION_LEVEL = "SESSION"
import ctypes, os
CALLS = 0
def lambda_handler(event, context):
    global CALLS
    CALLS += 1
    session = event["evaluationInput"]["sessionSpans"][0]["attributes"].get("session.id")
    if session == "sess-a":
        {how}
    return {{"label": "PASS", "value": 1.0, "explanation": f"call {{CALLS}} of this process"}}
"""

COUNT = """
EVALUATION_LEVEL = "SESSION"
import os
CALLS = 0
def lambda_handler(event, context):
    global CALLS
    CALLS += 1
    return {"label": "PASS", "value": 1.0, "explanation": f"{os.getpid()} call {CALLS}"}
"""


def write(custom: Path, name: str, source: str) -> None:
    (custom / name).mkdir(parents=True, exist_ok=True)
    (custom / name / f"{name}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def custom(tmp_path, monkeypatch):
    root = tmp_path / "custom-evaluators"
    write(root, "hang", HANG)
    write(root, "spin", SPIN)
    write(root, "exits", CRASH.format(how="os._exit(0)"))
    write(root, "segfault", CRASH.format(how="ctypes.string_at(0)"))
    write(root, "count", COUNT)
    monkeypatch.setenv("EVALKIT_TEST_PIDS", str(tmp_path / "pids.txt"))
    return root


def outcome(results):
    return [
        (r["evaluatorName"], r["context"]["spanContext"]["sessionId"], r.get("errorCode")) for r in results
    ]


def test_a_hanging_handler_times_out_and_the_run_goes_on(custom):
    started = time.monotonic()
    results = spans.evaluate_spans(MARKET, ["hang", "count"], custom_dir=custom, timeout=1)
    elapsed = time.monotonic() - started
    assert outcome(results) == [
        ("hang", "sess-a", "Timeout"),
        ("hang", "sess-b", "Timeout"),
        ("count", "sess-a", None),
        ("count", "sess-b", None),
    ]
    assert results[0]["errorMessage"] == (
        "lambda_handler did not return within 1 s (the Lambda time limit); its worker process was killed"
    )
    assert elapsed < 10  # two timeouts of 1 s, plus starting the workers


def test_a_timed_out_call_is_really_stopped(custom, tmp_path):
    results = spans.evaluate_spans(MARKET, ["spin"], custom_dir=custom, timeout=0.5, session="sess-a")
    assert outcome(results) == [("spin", "sess-a", "Timeout")]
    (pid,) = [int(line) for line in (tmp_path / "pids.txt").read_text().split()]
    assert pid != os.getpid()
    with pytest.raises(ProcessLookupError):  # killed and reaped: not spinning on in the background
        os.kill(pid, 0)


@pytest.mark.parametrize(
    ("name", "how"), [("exits", "exited with code 0"), ("segfault", "was killed by SIGSEGV")]
)
def test_a_crashing_handler_gives_evaluator_crashed_and_the_next_session_is_evaluated(custom, name, how):
    results = spans.evaluate_spans(MARKET, [name, "count"], custom_dir=custom, timeout=30)
    assert outcome(results) == [
        (name, "sess-a", "EvaluatorCrashed"),
        (name, "sess-b", None),
        ("count", "sess-a", None),
        ("count", "sess-b", None),
    ]
    assert results[0]["errorMessage"].startswith(
        f"evaluator process {how} while evaluating session sess-a; the next call starts a new process"
    )
    assert results[1]["explanation"] == "call 1 of this process"  # a new worker took over


def test_a_worker_imports_its_evaluator_once_and_answers_every_call(custom):
    results = spans.evaluate_spans(MARKET, ["count"], custom_dir=custom)
    pids = {r["explanation"].split()[0] for r in results}
    assert [r["explanation"].split(" ", 1)[1] for r in results] == ["call 1", "call 2"]
    assert len(pids) == 1 and str(os.getpid()) not in pids


def test_what_a_handler_prints_does_not_disturb_its_answers(custom, capfd):
    write(
        custom,
        "chatty",
        r"""
        EVALUATION_LEVEL = "SESSION"
        import sys
        print("loading chatty")
        def lambda_handler(event, context):
            print("x" * 100000)
            sys.stdout.flush()
            text = "caf\u00e9 \ud83d\ude00 \ud800"  # a lone surrogate passes through JSON, as in-process
            return {"label": "PASS", "value": 1.0, "explanation": text}
        """,
    )
    results = spans.evaluate_spans(MARKET, ["chatty"], custom_dir=custom)
    in_process = spans.evaluate_spans(MARKET, ["chatty"], custom_dir=custom, isolate=False)
    assert [r.get("errorCode") for r in results] == [None, None]
    assert results == in_process
    assert results[0]["explanation"] == "caf\u00e9 \ud83d\ude00 \ud800"
    assert "loading chatty" in capfd.readouterr().err  # the worker's prints go to standard error


def test_isolate_false_calls_the_handler_in_this_process(custom):
    results = spans.evaluate_spans(MARKET, ["count"], custom_dir=custom, isolate=False)
    assert {r["explanation"].split()[0] for r in results} == {str(os.getpid())}


def test_spans_eval_writes_timeout_and_crash_results_and_exits(custom, tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "evalkit", "spans", "eval", str(MARKET), "--custom-dir", str(custom)]
    command += ["--evaluator", "hang", "--evaluator", "segfault", "--timeout", "1", "--out", str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())["evaluationResults"]
    assert outcome(results) == [
        ("hang", "sess-a", "Timeout"),
        ("hang", "sess-b", "Timeout"),
        ("segfault", "sess-a", "EvaluatorCrashed"),
        ("segfault", "sess-b", None),
    ]
    gated = subprocess.run([*command, "--fail-under", "0.5"], capture_output=True, text=True, timeout=120)
    assert gated.returncode == 1


# --- the online receiver ---------------------------------------------------------------------------------


def _body(session: str, index: int) -> bytes:
    span = {
        "traceId": f"{index + 1:032x}",
        "spanId": f"{index + 1:016x}",
        "name": "invoke_agent",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": "session.id", "value": {"stringValue": session}}],
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]}
    request = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {}, "spans": [span]}]}]}
    return json.dumps(request).encode()


def _post(port: int, body: bytes) -> float:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        assert response.status == 200
    finally:
        connection.close()
    return time.perf_counter() - started


def _results(store: Path) -> list[dict]:
    path = store / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _wait(predicate, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def _result_codes(store: Path) -> list[tuple[str, str]]:
    return sorted(
        (r["attributes"]["session.id"], r["attributes"].get("error.type", "")) for r in _results(store)
    )


def test_intake_stays_fast_while_three_evaluators_hang(custom, tmp_path):
    """Twelve calls that spin in Python time out first: as abandoned threads they would share the GIL with
    intake from then on (each request waiting seconds); as killed processes they cost intake nothing."""
    for name in ("spin2", "spin3"):
        write(custom, name, SPIN)
    store = tmp_path / "store"
    server = serve(
        store, evaluators=["spin", "spin2", "spin3"], custom_dir=custom, port=0, session_timeout=0.2,
        poll_interval=0.02, evaluator_timeout=0.5,
    ).start()  # fmt: skip
    try:
        for index in range(4):
            _post(server.port, _body(f"first-{index}", index))
        _wait(lambda: len(_results(store)) == 12, 60)
        time.sleep(0.5)  # the next session's evaluators are starting, or spinning
        latencies = []
        for index in range(50):
            latencies.append(_post(server.port, _body("later", index + 10)))
            time.sleep(0.02)
    finally:
        server.stop()
    latencies.sort()
    assert statistics.median(latencies) < 0.1, latencies
    assert latencies[int(len(latencies) * 0.95)] < 0.5, latencies
    assert {r["attributes"].get("error.type") for r in _results(store)} == {"Timeout"}


def test_the_receiver_survives_an_evaluator_that_exits(custom, tmp_path):
    store = tmp_path / "store"
    server = serve(
        store, evaluators=["exits"], custom_dir=custom, port=0, session_timeout=0.2, poll_interval=0.02
    ).start()
    try:
        _post(server.port, _body("sess-a", 0))
        _wait(lambda: len(_results(store)) == 1, 30)
        _post(server.port, _body("sess-b", 1))
        _wait(lambda: len(_results(store)) == 2, 30)
    finally:
        server.stop()
    assert _result_codes(store) == [("sess-a", "EvaluatorCrashed"), ("sess-b", "")]
