"""LLM span judges in ``evalkit spans stream``: the specs of ``spans serve``, checked with its messages; the
judges run on the executors against ``evalkit.testing.ModelServer`` and give the entries ``spans eval`` gives,
with the key only in the executors' environment (never in the sink, the checkpoint or the output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from evalkit.cli import main as cli
from evalkit.errors import EvalkitError
from evalkit.spans.evaluation import evaluate_spans
from evalkit.spans.llm_judges.custom_llm_judges import llm_judge_from_config
from evalkit.spans.llm_judges.judge_runner import SpanJudges
from evalkit.spans.online.exports import result_event
from evalkit.spans.online.server import OnlineEvaluation
from evalkit.spans.online.session_evaluation import passed, service_name
from evalkit.spans.reading.loading import from_documents
from evalkit.spark.stream_sink import read_parts
from tests.spans.test_custom_llm_span_judges import CONFIG, write_config

SECRET = "sk-test-STREAM-SECRET-4417"
REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "agentcore_spans.jsonl"  # 4 sessions, 6 traces, 6 tool-call spans
CHECK = 'EVALUATION_LEVEL = "SESSION"\ndef lambda_handler(event, context):\n    return {"label": "PASS", "value": 1.0}\n'
#: A TRACE-level built-in, a SESSION-level built-in, a custom .json judge (SESSION) and a code-based one.
EVALUATORS = ["Builtin.Helpfulness", "Builtin.GoalSuccessRate", "polite", "check"]
#: polite's scale is categorical: its label-only results pass by its passing label (the scale's last, Polite).
#: The evaluators whose rules the expected entries are judged by (the categorical judge passes by label).
LABELS = [llm_judge_from_config("polite", CONFIG, "polite.json")]


@pytest.fixture
def custom(tmp_path) -> Path:
    folder = tmp_path / "custom-evaluators"
    write_config(folder, "polite", CONFIG)
    (folder / "check").mkdir()
    (folder / "check" / "check.py").write_text(CHECK)
    return folder


def judge_model(monkeypatch, model_server) -> None:
    """The ModelServer as the judge model of the driver's environment; it answers only calls with the key."""
    model_server.require_key = SECRET
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def stream_args(source: Path, custom: Path, sink: Path, evaluators, *extra) -> list[str]:
    args = ["spans", "stream", "--source", str(source), "--sink", str(sink), "--custom-dir", str(custom),
            "--session-timeout", "30s", "--watermark", "5s", "--once", "--max-files-per-trigger", "1", *extra]  # fmt: skip
    for name in evaluators:
        args += ["--evaluator", name]
    return args


def serve_error(tmp_path: Path, custom: Path, evaluators: list[str]) -> str:
    """The message ``spans serve`` refuses ``evaluators`` with."""
    with pytest.raises(EvalkitError) as refused:
        OnlineEvaluation(tmp_path / "store", evaluators=evaluators, custom_dir=custom, port=0)
    return str(refused.value)


def test_specs_are_checked_as_spans_serve_checks_them(
    spark, custom, tmp_path, monkeypatch, capsys, model_server
):
    monkeypatch.chdir(tmp_path)  # no .env with a judge model
    source, sink = tmp_path / "spans", tmp_path / "sink"
    source.mkdir()
    (custom / "both").mkdir()
    (custom / "both" / "both.py").write_text(CHECK)
    (custom / "both" / "both.json").write_text(json.dumps(CONFIG))

    # No judge model: exit 3 before the query starts, with spans serve's message (built-in and .json judge).
    for evaluators in (["check", "Builtin.Helpfulness"], ["polite"]):
        message = serve_error(tmp_path, custom, evaluators)
        assert "needs a judge model" in message
        assert cli(stream_args(source, custom, sink, evaluators)) == 3
        assert f"Error: {message}" in capsys.readouterr().err
    assert not sink.exists()

    judge_model(monkeypatch, model_server)
    mistakes = (["Builtin.Nope"], ["Builtin.Helpfulness:SESSION"], ["both"], ["polite:TRACE"], ["absent"])
    for evaluators in mistakes:
        message = serve_error(tmp_path, custom, evaluators)
        assert cli(stream_args(source, custom, sink, evaluators)) == 2
        assert f"Error: {message}" in capsys.readouterr().err
    assert cli(stream_args(source, custom, sink, ["check"] * 11)) == 2
    assert "11 evaluators: an online evaluation takes at most 10" in capsys.readouterr().err
    assert not sink.exists() and model_server.request_count == 0


def _clock(hours: float) -> dict:
    """A span far later than the data: event time passes every session's timeout, so they all close."""
    start = 1764547500000000000 + int(hours * 3600e9)
    return {"traceId": "ff" * 16, "spanId": "ee" * 8, "name": "clock", "startTimeUnixNano": start,
            "endTimeUnixNano": start + 1, "attributes": {"session.id": "clock"}}  # fmt: skip


def service(entry: dict) -> str:
    """The ``service.name`` of the session of a result entry, in DATA."""
    session = entry["context"]["spanContext"]["sessionId"]
    for line in DATA.read_text().splitlines():
        doc = json.loads(line)
        if doc["attributes"].get("session.id") == session:
            return doc["resource"]["attributes"]["service.name"]
    raise AssertionError(session)


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_llm_judges_on_executors_give_the_entries_of_spans_eval_and_keep_the_key_out(
    spark, custom, model_server, tmp_path, monkeypatch, capfd
):
    monkeypatch.chdir(tmp_path)
    judge_model(monkeypatch, model_server)
    # spans eval's entries for the same spans (the receiver's evaluate_spans), no cache
    expected = evaluate_spans(DATA, EVALUATORS, custom_dir=custom, judges=SpanJudges(cache=False))
    reference_calls = model_server.request_count
    assert reference_calls == 6 + 4 + 4  # Helpfulness per trace, GoalSuccessRate and polite per session
    assert not any("errorCode" in e for e in expected)

    source = tmp_path / "spans"
    source.mkdir()
    (source / "spans-a.jsonl").write_text(DATA.read_text())  # flat span documents, one per line
    (source / "spans-b.jsonl").write_text(json.dumps(_clock(2)) + "\n")
    model_server.fail_next(2, status=429, retry_after=0.05)  # the executors back off and retry
    sink = tmp_path / "sink"
    assert cli(stream_args(source, custom, sink, EVALUATORS, "--concurrency", "4")) == 0
    # The JVM started without any judge variable: the calls carry the key only through the executor env.
    assert model_server.request_count - reference_calls == 14 + 2

    # The events of the JSONL sink: those of spans eval's entries, but for `timestamp` (the session's end
    # here, the export time in spans serve) and `sequence` (the sink's numbering).
    events = read_parts(sink)

    def comparable(event: dict) -> tuple:
        return json.dumps(
            {k: v for k, v in event.items() if k not in ("timestamp", "sequence")}, sort_keys=True
        )

    wanted = [result_event(0, 0, {**entry, "service": service(entry)}) for entry in expected]
    assert sorted(map(comparable, events)) == sorted(map(comparable, wanted))
    names = [e["attributes"]["gen_ai.evaluation.name"] for e in events]
    assert {n: names.count(n) for n in EVALUATORS} == {
        "Builtin.Helpfulness": 6,
        "Builtin.GoalSuccessRate": 4,
        "polite": 4,
        "check": 4,
    }

    # The whole entries (token usage included) from the Parquet sink: the same, with `passed` and `service`
    # added as spans serve adds them. This run is the command as a user starts it, in its own process with
    # its own Spark (so its output includes the JVM's log lines), and each executor's own judge cache.
    before = model_server.request_count
    parquet, cache = tmp_path / "sink-parquet", tmp_path / "executor-cache"
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", *stream_args(source, custom, parquet, EVALUATORS, "--format", "parquet",
                                                       "--master", "local[2]")],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable, "EVALKIT_CACHE_DIR": str(cache)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert model_server.request_count - before == 14
    assert list(cache.glob("*.sqlite3")), "no judge cache on the executor"
    entries = [json.loads(text) for text in pd.read_parquet(parquet / "results.parquet")["entry"]]
    for entry in expected:
        entry.update(passed=passed(entry, LABELS), service=service(entry))

    def key(entry: dict) -> str:
        return json.dumps(entry, sort_keys=True)

    assert sorted(map(key, entries)) == sorted(map(key, expected))
    helpful = [e for e in entries if e["evaluatorName"] == "Builtin.Helpfulness"]
    assert all(
        e["tokenUsage"]["inputTokens"] > 0 and "traceId" in e["context"]["spanContext"] for e in helpful
    )

    # The key: nowhere in the sinks (results, metrics, Parquet), their checkpoints, or the CLI's output.
    captured = capfd.readouterr()
    assert "results for 4 sessions" in captured.out and "Streaming spans from" in proc.stdout
    files = _files(sink) + _files(parquet)
    assert any("_checkpoint" in p.parts for p in files) and any(p.suffix == ".parquet" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in captured.out + captured.err + proc.stdout + proc.stderr
    assert SECRET not in spark.sparkContext.environment.values()  # restored after the query's functions
    assert os.environ["OPENAI_API_KEY"] == SECRET


def test_a_worker_makes_one_span_judges_per_query_from_its_environment(monkeypatch, tmp_path):
    from evalkit.spark.judge_keys import KEY_VARIABLE
    from evalkit.spark.stream_executor import _judges

    monkeypatch.setenv(KEY_VARIABLE, SECRET)  # what PySpark puts in the worker's environment
    judge = {"base_url": "http://127.0.0.1:9/v1", "model": "judge"}  # the settings: no key
    settings = {"token": "t-1", "judge": judge, "cache": True, "concurrency": 3, "judge_timeout": 7.0}
    judges = _judges(settings)
    assert judges is _judges(settings)  # kept for the query's later batches (and its pool's back-off state)
    assert judges.model_config == {**judge, "api_key": SECRET}
    assert judges.pool.limit.ceiling == 3 and judges.pool.timeout == 7.0
    assert str(judges.pool.cache.path).startswith(os.environ["EVALKIT_CACHE_DIR"])  # this machine's cache
    other = _judges({**settings, "token": "t-2", "cache": str(tmp_path / "judge.sqlite3")})
    assert other is not judges and other.pool.cache.path == tmp_path / "judge.sqlite3"
    assert _judges({**settings, "token": "t-3", "cache": False}).pool.cache is None
    assert _judges({**settings, "token": "t-4", "judge": None}) is None  # code-based evaluators only


def copies_of_data(count: int) -> dict[str, list[dict]]:
    """``count`` copies of DATA's sessions (and traces) under new ids: session id -> its span documents."""
    sessions: dict[str, list[dict]] = {}
    for copy in range(count):
        for line in DATA.read_text().splitlines():
            doc = json.loads(line)
            doc["attributes"]["session.id"] = session = f"{doc['attributes']['session.id']}-{copy}"
            doc["traceId"] = f"{copy:04x}" + doc["traceId"][4:]
            sessions.setdefault(session, []).append(doc)
    return sessions


def test_a_batch_of_sessions_is_judged_concurrently_with_each_session_s_own_entries(
    custom, model_server, monkeypatch, tmp_path
):
    from evalkit.spark.judge_keys import KEY_VARIABLE
    from evalkit.spark.stream_executor import evaluate_sessions

    judge_model(monkeypatch, model_server)
    sessions = copies_of_data(3)  # 12 sessions, 18 traces
    each = {
        session: evaluate_spans(
            from_documents(docs), EVALUATORS, custom_dir=custom, judges=SpanJudges(cache=False)
        )
        for session, docs in sessions.items()
    }
    model_server.latency = 0.5
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv(KEY_VARIABLE, SECRET)
    settings = {"token": "batch", "custom": {"path": str(custom)}, "evaluators": EVALUATORS, "filters": [],
                "timeout": 30.0, "judge": {"base_url": model_server.openai_base_url, "model": "judge"},
                "cache": False, "concurrency": 8, "judge_timeout": 30.0}  # fmt: skip
    batch = pd.DataFrame(
        {
            "session_id": list(sessions),
            "session_end": pd.Timestamp("2025-12-01", tz="UTC"),
            "documents": [[json.dumps(d) for d in docs] for docs in sessions.values()],
        }
    )
    before = model_server.request_count
    started = time.perf_counter()
    [rows] = list(evaluate_sessions(settings, iter([batch])))
    elapsed = time.perf_counter() - started
    assert model_server.request_count - before == 18 + 12 + 12
    # 42 calls of 0.5 s, 8 at a time: 3.8 s measured; one session after the other (only each session's own
    # calls together) it took 18.6 s.
    assert elapsed < 8, elapsed
    for session, entries in each.items():
        got = rows[rows["session_id"] == session].sort_values("position")
        assert list(got["position"]) == list(range(len(entries)))
        for entry in entries:
            entry.update(passed=passed(entry, LABELS), service=service_name(sessions[session]))
        assert [json.loads(text) for text in got["entry"]] == entries
