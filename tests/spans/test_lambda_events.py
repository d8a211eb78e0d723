"""``evalkit spans event`` and ``evalkit new NAME --span``: the AgentCore Lambda event ``spans eval`` sends, written
to a file so that ``spans invoke`` can be tried on one's own telemetry, and a span evaluator scaffold that comes
with such an event (issue 31, item 11).

"The exact event" is checked against the event a handler really receives from ``spans eval``: a recording
handler writes what it was given to a file, and the two are compared as JSON text and as values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from evalkit.cli import main as cli_main

REPO = Path(__file__).resolve().parents[2]
SPLIT_SPANS = REPO / "data" / "agentcore_split_spans.jsonl"
SAMPLE_SPANS = REPO / "evalkit" / "evaluators" / "scaffold" / "sample_spans.jsonl"
MIXED_SPANS = REPO / "data" / "agentcore_spans.jsonl"
BROKER = "sess-split-broker"


def evalkit(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


RECORDER = textwrap.dedent(
    """
    import json, os

    EVALUATION_LEVEL = "TRACE"

    def lambda_handler(event, context):
        target = event["evaluationTarget"]["traceIds"][0]
        with open(os.path.join(os.environ["RECORD_DIR"], target + ".json"), "w", encoding="utf-8") as f:
            json.dump(event, f)
        return {"label": "PASS", "value": 1.0, "explanation": "recorded"}
    """
)


@pytest.mark.slow  # several evalkit processes
def test_the_written_event_is_the_one_spans_eval_sends(tmp_path):
    (tmp_path / "custom-evaluators" / "recorder").mkdir(parents=True)
    (tmp_path / "custom-evaluators" / "recorder" / "recorder.py").write_text(RECORDER)
    (tmp_path / "seen").mkdir()
    ran = evalkit(
        tmp_path, "spans", "eval", str(SPLIT_SPANS), "--evaluator", "recorder", "--session", BROKER,
        "--out", "res", env={"RECORD_DIR": str(tmp_path / "seen")},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    seen = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "seen").iterdir()}
    assert len(seen) == 2  # the broker session has two traces: one TRACE call each

    for trace_id, received in seen.items():
        done = evalkit(
            tmp_path, "spans", "event", str(SPLIT_SPANS), "--session", BROKER, "--level", "TRACE",
            "--trace", trace_id, "--evaluator", "recorder", "--out", f"{trace_id}.json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads((tmp_path / f"{trace_id}.json").read_text()) == received

    # without --trace: the first target, and a note naming how many there are and how to choose
    done = evalkit(tmp_path, "spans", "event", str(SPLIT_SPANS), "--session", BROKER, "--level", "TRACE")
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)
    assert first["evaluationTarget"]["traceIds"][0] in seen
    assert "has 2 traces; this event targets the first" in done.stderr
    assert "--trace" in done.stderr


@pytest.mark.slow  # several evalkit processes
def test_a_session_event_replays_through_spans_invoke(tmp_path):
    event = tmp_path / "event.json"
    done = evalkit(REPO, "spans", "event", str(SPLIT_SPANS), "--session", BROKER, "--out", str(event))
    assert done.returncode == 0, done.stderr
    data = json.loads(event.read_text())
    assert data["evaluationLevel"] == "SESSION"
    assert data["evaluationTarget"] is None
    assert data["evaluatorName"] == "my_evaluator"
    # every span and event record of the session, records without a session id joined by their trace
    assert len(data["evaluationInput"]["sessionSpans"]) == 24
    invoked = evalkit(REPO, "spans", "invoke", "workflow_contract", "--event", str(event))
    assert invoked.returncode in (0, 1), invoked.stderr
    assert "Traceback" not in invoked.stderr
    assert json.loads(invoked.stdout)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--session", "nope"], "session(s) 'nope' not found in the spans; sessions: "),
        (
            ["--session", BROKER, "--span", "abc"],
            "--span names a tool-call span: use it with --level TOOL_CALL",
        ),
        (["--session", BROKER, "--trace", "abc"], "--trace names a target trace: use it with --level TRACE"),
        (
            ["--session", BROKER, "--level", "TRACE", "--trace", "f" * 32],
            f"trace {'f' * 32} is not a TRACE target of session '{BROKER}'; its targets: ",
        ),
        (
            ["--session", "sess-openinference", "--level", "TOOL_CALL"],
            "session 'sess-openinference' has no tool-call span, so a TOOL_CALL evaluator is not called for it",
        ),
    ],
)
def test_mistakes_are_refused_with_the_fix(capsys, args, message):
    spans = MIXED_SPANS if "sess-openinference" in args else SPLIT_SPANS
    assert cli_main(["spans", "event", str(spans), *args]) == 2
    out, err = capsys.readouterr()
    assert message in err
    assert "Traceback" not in err
    assert out == ""


def test_the_scaffold_sample_spans_are_the_bundled_demo_session():
    """sample_spans.jsonl is the broker session's traces of data/agentcore_split_spans.jsonl, line for line."""
    wanted = set()
    lines = SPLIT_SPANS.read_text().splitlines()
    for line in lines:
        doc = json.loads(line)
        if (doc.get("attributes") or {}).get("session.id") == BROKER:
            wanted.add(doc["traceId"])
    assert SAMPLE_SPANS.read_text().splitlines() == [
        ln for ln in lines if json.loads(ln)["traceId"] in wanted
    ]


@pytest.mark.slow  # several evalkit processes
@pytest.mark.parametrize("level", ["SESSION", "TRACE", "TOOL_CALL"])
def test_a_scaffolded_span_evaluator_runs_on_its_sample_event(tmp_path, level):
    done = evalkit(tmp_path, "new", "tool_errors", "--span", level)
    assert done.returncode == 0, done.stderr
    home = tmp_path / "custom-evaluators" / "tool_errors"
    sample = home / "events" / "sample.json"
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()) == [
        "events/sample.json",
        "tool_errors.py",
    ]
    assert f"evalkit spans invoke tool_errors --event {sample.relative_to(tmp_path)}" in done.stdout
    # the sample is the event spans eval would send this evaluator for the demo session, at its level
    event = evalkit(
        tmp_path, "spans", "event", str(SPLIT_SPANS), "--session", BROKER, "--level", level,
        "--evaluator", "tool_errors",
    )  # fmt: skip
    assert event.returncode == 0, event.stderr
    assert sample.read_text() == event.stdout

    invoked = evalkit(tmp_path, "spans", "invoke", "tool_errors", "--event", str(sample))
    assert invoked.returncode == 0, invoked.stderr
    assert json.loads(invoked.stdout)["label"] == "PASS"
    assert "valid AgentCore evaluator response" in invoked.stderr

    ran = evalkit(tmp_path, "spans", "eval", str(SPLIT_SPANS), "--evaluator", "tool_errors", "--out", "res")
    assert ran.returncode == 0, ran.stderr
    assert f"tool_errors ({level})" in ran.stdout

    packaged = evalkit(tmp_path, "spans", "package", "tool_errors", "--out", "t.zip")
    assert packaged.returncode == 0, packaged.stderr
    assert zipfile.ZipFile(tmp_path / "t.zip").namelist() == ["tool_errors.py"]  # events/ stays home


@pytest.mark.slow  # several evalkit processes
def test_the_scaffolded_evaluator_fails_a_span_that_ended_in_error(tmp_path):
    assert evalkit(tmp_path, "new", "tool_errors", "--span", "TRACE").returncode == 0
    sample = tmp_path / "custom-evaluators" / "tool_errors" / "events" / "sample.json"
    event = json.loads(sample.read_text())
    spans = [s for s in event["evaluationInput"]["sessionSpans"] if "name" in s]
    spans[1]["status"] = {"code": "STATUS_CODE_ERROR"}
    sample.write_text(json.dumps(event))
    invoked = evalkit(tmp_path, "spans", "invoke", "tool_errors", "--event", str(sample))
    assert invoked.returncode == 0, invoked.stderr
    response = json.loads(invoked.stdout)
    assert response["label"] == "FAIL"
    assert f"({spans[1]['spanId']})" in response["explanation"]


def test_llm_and_span_are_one_or_the_other(tmp_path, capsys):
    assert cli_main(["new", "x_judge", "--llm", "--span", "--custom-dir", str(tmp_path)]) == 2
    assert "choose --llm or --span" in capsys.readouterr().err
    assert not (tmp_path / "x_judge").exists()
