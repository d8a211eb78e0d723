"""AgentCore's built-in LLM-as-judge evaluators (``Builtin.<Name>``) in ``evalkit spans eval``, against ModelServer."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from evalkit import spans
from evalkit.spans.llm_judges.builtin_judges import BUILTINS
from evalkit.spans.llm_judges.judge_runner import SpanJudges
from evalkit.testing import Reply
from tests.spans.conftest import KEY
from tests.spans.test_spans import run_cli

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "agentcore_spans.jsonl"
CUSTOM = REPO / "custom-evaluators"

#: data/agentcore_spans.jsonl: 4 sessions, 6 traces, 6 tool-call spans.
SESSIONS, TRACES, TOOL_CALLS = 4, 6, 6


def results_of(out: Path) -> list[dict]:
    return json.loads((out / "results.json").read_text())["evaluationResults"]


def test_done_when_builtins_next_to_a_code_evaluator(judge_env, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["spans", "eval", str(DATA), "--custom-dir", str(CUSTOM), "--out", str(out)]
    for name in (
        "Builtin.Helpfulness",
        "Builtin.GoalSuccessRate",
        "Builtin.ToolSelectionAccuracy",
        "pii_leak",
    ):
        argv += ["--evaluator", name]
    assert run_cli(argv) == 0
    printed = capsys.readouterr().out
    # the usage line every judging command prints (evalkit.analysis.formatting.judge_usage)
    assert re.search(
        r"^Judge: OpenAI-compatible \S+ model \S+: 16 calls, 0 from cache, [\d,]+ prompt \+ [\d,]+ completion "
        r"tokens, price not set$",
        printed,
        re.M,
    ), printed
    results = results_of(out)
    by_name: dict[str, list[dict]] = {}
    for entry in results:
        by_name.setdefault(entry["evaluatorName"], []).append(entry)
    assert {k: len(v) for k, v in by_name.items()} == {
        "Builtin.Helpfulness": TRACES,
        "Builtin.GoalSuccessRate": SESSIONS,
        "Builtin.ToolSelectionAccuracy": TOOL_CALLS,
        "pii_leak": SESSIONS,
    }
    scales = {f"Builtin.{n}": {label: value for label, value, _ in BUILTINS[n][3]} for n in BUILTINS}
    for name in ("Builtin.Helpfulness", "Builtin.GoalSuccessRate", "Builtin.ToolSelectionAccuracy"):
        for entry in by_name[name]:
            assert "errorCode" not in entry, entry
            assert scales[name][entry["label"]] == entry["value"] and 0 <= entry["value"] <= 1
            assert entry["explanation"].startswith("Heuristic judge:")
            usage = entry["tokenUsage"]
            assert (
                usage["inputTokens"] > 0
                and usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
            )
            assert entry["evaluatorId"] == name
    assert [set(e["context"]["spanContext"]) for e in by_name["Builtin.Helpfulness"]] == [
        {"sessionId", "traceId"}
    ] * 6
    assert all(
        set(e["context"]["spanContext"]) == {"sessionId", "traceId", "spanId"}
        for e in by_name["Builtin.ToolSelectionAccuracy"]
    )
    assert all("label" in e for e in by_name["pii_leak"])

    # The Helpfulness prompt of the first trace holds its user prompt and the agent's answer.
    prompts = [r["body"]["messages"][1]["content"] for r in judge_env.requests]
    answer = "# Assistant response\nApple (AAPL) is trading at $182.45 today, up 1.2%.\n"
    (first,) = [p for p in prompts if "usefulness to this user" in p and p.endswith(answer)]
    assert "# Conversation\nUser: What is Apple stock trading at today?\n" in first
    assert 'Action: get_stock_data({"ticker": "AAPL"})' in first
    assert '"Above And Beyond"' in judge_env.requests[0]["body"]["messages"][0]["content"]

    # Keys are never written: not in the results, not in the judge cache.
    assert KEY not in (out / "results.json").read_text() and KEY not in (out / "results.csv").read_text()
    for db in Path(__import__("os").environ["EVALKIT_CACHE_DIR"]).glob("*.sqlite3"):
        with sqlite3.connect(db) as conn:
            assert not any(KEY in str(row) for row in conn.execute("SELECT * FROM judge_cache"))

    # A re-run is answered by the cache; --no-cache calls the model again.
    calls = judge_env.request_count
    assert run_cli(argv) == 0
    assert judge_env.request_count == calls
    assert ": 0 calls, 16 from cache, 0 prompt + 0 completion tokens, " in capsys.readouterr().out
    assert [e.get("label") for e in results_of(out)] == [e.get("label") for e in results]
    assert run_cli([*argv, "--no-cache"]) == 0
    assert judge_env.request_count == calls + 16


def test_every_builtin_judges_its_level_with_its_scale(judge_env):
    names = [f"Builtin.{n}" for n in BUILTINS]
    counts = {"TRACE": TRACES, "SESSION": SESSIONS, "TOOL_CALL": TOOL_CALLS}
    results = spans.evaluate_spans(DATA, names)
    assert len(results) == sum(counts[BUILTINS[n][0]] for n in BUILTINS)
    for name in BUILTINS:
        level, _, _, scale = BUILTINS[name]
        mine = [r for r in results if r["evaluatorName"] == f"Builtin.{name}"]
        assert len(mine) == counts[level], name
        labels = {label: value for label, value, _ in scale}
        for entry in mine:
            assert labels[entry["label"]] == entry["value"], (name, entry)
    assert len(judge_env.requests) == len(results)


def test_agentcore_scales_and_levels():
    levels = {n: BUILTINS[n][0] for n in BUILTINS}
    assert [n for n, lv in levels.items() if lv == "SESSION"] == ["GoalSuccessRate"]
    assert [n for n, lv in levels.items() if lv == "TOOL_CALL"] == [
        "ToolSelectionAccuracy",
        "ToolParameterAccuracy",
    ]
    assert len(levels) == 13
    labels = {n: [label for label, _, _ in BUILTINS[n][3]] for n in BUILTINS}
    assert labels["Correctness"] == ["Incorrect", "Partially Correct", "Perfectly Correct"]
    assert (
        labels["Helpfulness"][0] == "Not Helpful At All" and labels["Helpfulness"][-1] == "Above And Beyond"
    )
    assert labels["Faithfulness"] == [
        "Not At All",
        "Not Generally",
        "Neutral/Mixed",
        "Generally Yes",
        "Completely Yes",
    ]
    assert labels["Harmfulness"] == ["Harmful", "Not Harmful"] and labels["Refusal"] == ["No", "Yes"]


def test_no_judge_model_exits_3_before_reading_the_spans(tmp_path, capsys):
    missing = tmp_path / "not-there.jsonl"
    argv = ["spans", "eval", str(missing), "--evaluator", "Builtin.Helpfulness", "--out", str(tmp_path / "o")]
    assert run_cli(argv) == 3
    printed = capsys.readouterr().out
    assert (
        "Span evaluator Builtin.Helpfulness needs a judge model" in printed and "OPENAI_BASE_URL" in printed
    )
    assert not (tmp_path / "o").exists()


def test_unknown_builtin_or_other_level_is_a_configuration_error(judge_env, tmp_path, capsys):
    base = ["spans", "eval", str(DATA), "--out", str(tmp_path / "o")]
    assert run_cli([*base, "--evaluator", "Builtin.Politeness"]) == 2
    assert "'Builtin.Politeness' is not an AgentCore built-in evaluator" in capsys.readouterr().out
    assert run_cli([*base, "--evaluator", "Builtin.Helpfulness:SESSION"]) == 2
    assert "is a TRACE evaluator" in capsys.readouterr().out
    assert judge_env.request_count == 0


def test_off_scale_unparseable_and_failed_answers_are_error_entries_never_cached(judge_env):
    answers = iter(
        [
            Reply({"label": "Brilliant", "explanation": "x"}),
            Reply("no json here"),
            Reply(status=401, content="bad key"),
        ]
    )
    judge_env.script = lambda request: next(answers, None)
    judges = SpanJudges(concurrency=1)
    results = spans.evaluate_spans(DATA, ["Builtin.GoalSuccessRate"], judges=judges)
    codes = [r.get("errorCode") for r in results]
    assert codes == ["judgeOutputOffScale", "judgeOutputUnparseable", "judgeAuthenticationError", None]
    assert (
        "'Brilliant', which is not on the rating scale of Builtin.GoalSuccessRate (No, Yes)"
        in results[0]["errorMessage"]
    )
    assert "HTTP 401" in results[2]["errorMessage"] and "label" not in results[2]
    again = spans.evaluate_spans(DATA, ["Builtin.GoalSuccessRate"], judges=SpanJudges(concurrency=1))
    assert all("errorCode" not in r for r in again)
    assert judge_env.request_count == 4 + 3  # the three failures were not cached


def test_throttling_is_retried_by_the_judge_pool(judge_env):
    judge_env.fail_next(2, status=429, retry_after=0.01)
    results = spans.evaluate_spans(DATA, ["Builtin.GoalSuccessRate"], judges=SpanJudges(cache=False))
    assert all("errorCode" not in r for r in results)
    assert judge_env.request_count == SESSIONS + 2


def test_a_trace_without_an_answer_is_an_error_without_a_call(judge_env, tmp_path):
    doc = {
        "traceId": "5" * 32,
        "spanId": "5" * 16,
        "name": "invoke_agent bot",
        "kind": "INTERNAL",
        "startTimeUnixNano": 1,
        "endTimeUnixNano": 2,
        "attributes": {
            "session.id": "quiet",
            "gen_ai.input.messages": json.dumps([{"role": "user", "content": "hi"}]),
        },
        "status": {"code": "ERROR"},
    }
    path = tmp_path / "quiet.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    (entry,) = spans.evaluate_spans(path, ["Builtin.Correctness"])
    assert entry["errorCode"] == "emptyAgentResponse" and "no assistant answer" in entry["errorMessage"]
    assert judge_env.request_count == 0
