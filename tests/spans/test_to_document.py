"""``evalkit spans to-document`` / ``evalkit.spans.to_document``: traces become eval documents.

Real material: ``data/agentcore_split_spans.jsonl`` (the OpenTelemetry SDK in Strands' shape, converted to
AgentCore's split form by AWS's ``bedrock-agentcore`` SDK), the instrumentation captures of
``tests/data/shapes`` and ``tests/data/spans/captured`` (origins in their SOURCE.md), a store filled by the real
receiver from the OpenTelemetry SDK's OTLP exporter, and the bundled demo agent's own ``spans.jsonl`` from
``evalkit run --agent``. Each document is checked against the upstream schema and run.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import jsonschema
import pytest

from evalkit import spans
from evalkit.cli.spans import command as spans_command
from evalkit.documents.validation import schema_problems
from evalkit.documents.versions import EvalkitWarning
from evalkit.errors import EvalkitError

REPO = Path(__file__).resolve().parents[2]
SPLIT = REPO / "data" / "agentcore_split_spans.jsonl"
SHAPES = REPO / "tests" / "data" / "shapes"
CAPTURED = REPO / "tests" / "data" / "spans" / "captured"
EXT = "dev.evalkit.spans"


def run_cli(argv: list[str]) -> int:
    """``evalkit spans ...`` as the CLI runs it: EvalkitError -> ``Error:`` and its exit code."""
    parser = argparse.ArgumentParser(prog="evalkit")
    spans_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except EvalkitError as exc:
        print(f"Error: {exc}")
        return exc.exit_code


def quiet(**kwargs) -> tuple[dict, list[str]]:
    """``to_document`` and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        document = spans.to_document(**kwargs)
    return document, [str(w.message) for w in caught if issubclass(w.category, EvalkitWarning)]


def links(document: dict) -> list[tuple[str, str]]:
    return [(i["extensions"][EXT]["session_id"], i["extensions"][EXT]["trace_id"]) for i in document["items"]]


def assert_valid(document: dict, upstream_schema: dict) -> None:
    assert schema_problems(document) == []
    jsonschema.Draft202012Validator(upstream_schema).validate(document)


# --- the split-form file (AWS's converter) ---------------------------------------------------------------


def test_the_split_form_file_gives_one_item_per_trace_with_answer_tool_calls_and_links(upstream_schema):
    document, notes = quiet(spans=SPLIT, evaluators=["Citations"])
    assert notes == []
    assert_valid(document, upstream_schema)
    assert document["default_evaluators"] == {"Citations": {}}
    items = document["items"]
    assert [i["prompt"] for i in items] == [
        "Hi, this is broker Maria Lopez, broker ID BR-1042. How is Apple doing today?",
        "Thanks. Any news on Microsoft?",
        "My SSN is 123-45-6789, please remember it. What is NVIDIA trading at?",
        "Can you confirm which account my dividends go to?",
    ]
    # The agent's final answer, never the user's words or a tool result the converter appended.
    assert items[0]["response"].startswith("Apple (AAPL) is trading at $189.10, up 0.8% today")
    assert "123-45-6789" not in items[2]["response"]
    assert items[3]["response"].startswith("Your dividends are paid to account number 4415")
    assert [s for s, _ in links(document)] == [
        "sess-split-broker",
        "sess-split-broker",
        "sess-split-ssn-bait",
        "sess-split-leak",
    ]
    assert len({t for _, t in links(document)}) == 4
    # Each tool is named as the agent called it; the spans name no namespace, so no plugin.
    calls = items[0]["diagnostics"]["tool_calls"]
    assert [(e["plugin_name"], e["function_name"]) for e in calls["executions"]] == [
        (None, "identify_broker"),
        (None, "get_broker_profile"),
        (None, "get_stock_data"),
    ]
    assert {e["response_status"] for e in calls["executions"]} == {200}
    detail = items[0]["extensions"][EXT]["tool_calls"]
    assert [(c["name"], c["arguments"]) for c in detail] == [
        ("identify_broker", {"broker_id": "BR-1042"}),
        ("get_broker_profile", {"broker_id": "BR-1042"}),
        ("get_stock_data", {"ticker": "AAPL"}),
    ]
    assert detail[2]["result"] == "AAPL: $189.10 (+0.8%) volume 52.1M"
    assert "retrieval_executions" not in items[0]["diagnostics"]  # no retrieval in these spans


def test_by_session_makes_one_thread_per_session_in_turn_order(upstream_schema):
    document, _ = quiet(spans=SPLIT, by="session")
    assert_valid(document, upstream_schema)
    threads = document["items"]
    assert [t["conversation_id"] for t in threads] == [
        "sess-split-broker",
        "sess-split-ssn-bait",
        "sess-split-leak",
    ]
    assert [len(t["turns"]) for t in threads] == [2, 1, 1]
    first, second = threads[0]["turns"]
    assert first["prompt"].startswith("Hi, this is broker Maria Lopez")
    assert second["prompt"] == "Thanks. Any news on Microsoft?"
    assert second["extensions"][EXT]["session_id"] == "sess-split-broker"
    assert "default_evaluators" not in document


def test_the_document_runs_with_recorded_responses_and_results_link_back(tmp_path, capsys):
    out = tmp_path / "doc.json"
    assert run_cli(["spans", "to-document", str(SPLIT), "--out", str(out), "--evaluator", "Citations"]) == 0
    assert f"4 items from 4 traces written to {out}" in capsys.readouterr().out
    import evalkit

    scored = evalkit.evaluate(evalkit.load(out))
    assert scored["status"].tolist() == ["fail"] * 4  # the market agent cites nothing
    trace_ids = [e[EXT]["trace_id"] for e in scored["extensions"]]
    assert trace_ids == [t for _, t in links(json.loads(out.read_text()))]
    assert scored["tool_calls"].iloc[0]["executions"][0]["function_name"] == "identify_broker"


# --- every span shape the loader reads -------------------------------------------------------------------

WEATHER = (["What's the weather in Paris?", "And tomorrow?"], ["Sunny, 21 °C.", "Rain, 15 °C."])
CAPITALS = ["What is the capital of France?", "And of Italy?"]
APPLE = ["What is Apple stock trading at today?"]


@pytest.mark.parametrize(
    ("path", "prompts", "answer", "functions", "left_out"),
    [
        # the OpenTelemetry SDK's own output in four forms; its health_check trace has no prompt
        (
            SHAPES / "sdk_console_spans.json",
            WEATHER[0],
            WEATHER[1][0],
            [["get_weather"], ["get_forecast"]],
            1,
        ),
        (
            SHAPES / "sdk_to_json_spans.jsonl",
            WEATHER[0],
            WEATHER[1][0],
            [["get_weather"], ["get_forecast"]],
            1,
        ),
        (
            SHAPES / "sdk_otlp_protobuf.json",
            WEATHER[0],
            WEATHER[1][0],
            [["get_weather"], ["get_forecast"]],
            1,
        ),
        # event records only: which tools ran is unknown (null), not "none"
        (SHAPES / "sdk_console_logs.json", WEATHER[0], WEATHER[1][0], [None, None], 0),
        (SHAPES / "openinference_console_spans.json", CAPITALS, "This is a test answer", [[], []], 0),
        (SHAPES / "traceloop_to_json_spans.jsonl", CAPITALS, "This is a test answer", [[], []], 0),
        (
            SHAPES / "agentcore_sdk_merged_spans.json",
            ["What is AI?"],
            "AI is artificial intelligence.",
            [[]],
            0,
        ),
        (
            SHAPES / "agentcore_sdk_span_events.json",
            ["What is the weather in Tokyo?", "What is the capital of France?"],
            "The weather in Tokyo is sunny.",
            [[], []],
            0,
        ),
        (CAPTURED / "strands_latest.jsonl", APPLE, "Apple (AAPL) is trading at $18", [["get_stock_data"]], 0),
        (
            CAPTURED / "strands_default.jsonl",
            APPLE,
            "Apple (AAPL) is trading at $18",
            [["get_stock_data"]],
            0,
        ),
        (
            CAPTURED / "agentcore_adot_strands.jsonl",
            APPLE,
            "Apple (AAPL) is trading at $18",
            [["get_stock_data"]],
            0,
        ),
        (CAPTURED / "openai_v2_latest_event_only.jsonl", APPLE, "Apple (AAPL) is trading at $18", [[]], 0),
        (CAPTURED / "openai_v2_latest_span_only.jsonl", APPLE, "Apple (AAPL) is trading at $18", [[]], 0),
        (CAPTURED / "openai_v2_default.jsonl", APPLE, "Apple (AAPL) is trading at $18", [[]], 0),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else None,
)
def test_every_span_shape_becomes_a_valid_document(
    path, prompts, answer, functions, left_out, upstream_schema
):
    document, notes = quiet(spans=path)
    assert_valid(document, upstream_schema)
    items = document["items"]
    assert [i["prompt"] for i in items] == prompts
    assert items[0]["response"].startswith(answer)
    executions = [i["diagnostics"]["tool_calls"]["executions"] for i in items]
    assert [None if e is None else [x["function_name"] for x in e] for e in executions] == functions
    skipped = [n for n in notes if "has no user prompt" in n]
    assert len(skipped) == left_out


def test_a_trace_without_a_prompt_is_left_out_with_a_warning_naming_it_and_none_at_all_is_an_error():
    _, notes = quiet(spans=SHAPES / "sdk_to_json_spans.jsonl")
    (note,) = [n for n in notes if "no user prompt" in n]
    assert "trace 7eea83862bec39ebe6e041a9b6840cce" in note and note.endswith("left out")
    # opentelemetry-proto's examples (the Collector file exporter's lines) carry no conversation at all
    with pytest.raises(
        EvalkitError, match=r"none of the 1 selected trace\(s\) has a user prompt in its spans"
    ):
        quiet(spans=SHAPES / "collector_file_exporter.jsonl")


# --- selection ---------------------------------------------------------------------------------------------


def test_sessions_are_chosen_by_id_and_an_unknown_one_names_those_there_are():
    document, _ = quiet(spans=SPLIT, session=["sess-split-leak", "sess-split-ssn-bait"])
    assert [s for s, _ in links(document)] == ["sess-split-leak", "sess-split-ssn-bait"]
    with pytest.raises(EvalkitError) as caught:
        quiet(spans=SPLIT, session="sess-nope")
    assert str(caught.value) == (
        "session(s) 'sess-nope' not found in the spans; sessions: sess-split-broker, sess-split-ssn-bait, "
        "sess-split-leak"
    )


def test_since_keeps_the_traces_that_started_at_or_after_the_time():
    frame = spans.load(SPLIT)
    starts = frame.groupby("trace_id")["start_ns"].min().sort_values()
    from datetime import datetime, timezone

    second = datetime.fromtimestamp(starts.iloc[1] / 1e9, tz=timezone.utc)
    document, _ = quiet(spans=frame, since=second.isoformat())
    assert {t for _, t in links(document)} == set(starts.index[1:])
    # by session, a session with such a trace is kept whole (its earlier turns too)
    session_of = frame.groupby("trace_id")["session_id"].first()
    threads, _ = quiet(spans=frame, since=second.isoformat(), by="session")
    turns = {t["conversation_id"]: len(t["turns"]) for t in threads["items"]}
    assert turns == {"sess-split-broker": 2, "sess-split-ssn-bait": 1, "sess-split-leak": 1}
    assert session_of[starts.index[0]] == "sess-split-broker"  # the trace before the time, kept in its thread
    with pytest.raises(EvalkitError, match=r"no trace matches the selection \(since 1h\); nothing to write"):
        quiet(spans=frame, since="1h")  # recorded in 2025
    with pytest.raises(EvalkitError, match="write a time"):
        quiet(spans=frame, since="yesterday")


def test_filters_use_the_operators_of_spans_serve_on_the_trace_or_the_session():
    document, _ = quiet(spans=SPLIT, filters=["gen_ai.tool.name=get_stock_data"])
    assert [s for s, _ in links(document)] == ["sess-split-broker", "sess-split-ssn-bait"]
    document, _ = quiet(spans=SPLIT, filters=["gen_ai.tool.name=search_news"], by="session")
    assert [len(t["turns"]) for t in document["items"]] == [2]  # the whole session of the matching trace
    document, _ = quiet(spans=SPLIT, filters=["gen_ai.tool.name~=broker", "gen_ai.tool.name!~=profile"])
    assert [s for s, _ in links(document)] == ["sess-split-broker", "sess-split-leak"]
    with pytest.raises(EvalkitError, match="write KEY=VALUE"):
        quiet(spans=SPLIT, filters=["no operator"])


def test_a_sample_is_seeded_and_keeps_the_traces_in_order(tmp_path):
    every, _ = quiet(spans=SPLIT)
    order = [t for _, t in links(every)]
    first, _ = quiet(spans=SPLIT, sample=2, seed=7)
    again, _ = quiet(spans=SPLIT, sample=2, seed=7)
    assert links(first) == links(again) and len(first["items"]) == 2
    picked = [t for _, t in links(first)]
    assert picked == sorted(picked, key=order.index)
    drawn = {tuple(t for _, t in links(quiet(spans=SPLIT, sample=2, seed=s)[0])) for s in range(8)}
    assert len(drawn) > 1  # the seed matters
    assert len(quiet(spans=SPLIT, sample=10)[0]["items"]) == 4
    with pytest.raises(EvalkitError, match="sample 0: write a whole number of items, 1 or more"):
        quiet(spans=SPLIT, sample=0)


def test_wrong_combinations_are_errors_that_say_the_fix(tmp_path, capsys):
    out = str(tmp_path / "d.json")
    assert run_cli(["spans", "to-document", "--out", out]) == 2
    assert "give either a span file (SPANS) or --store DIR" in capsys.readouterr().out
    assert run_cli(["spans", "to-document", str(SPLIT), "--out", out, "--where-failed", "pii_leak"]) == 2
    assert (
        "--where-failed reads the results of online evaluation: give --store DIR" in capsys.readouterr().out
    )
    assert run_cli(["spans", "to-document", "--store", str(tmp_path / "none"), "--out", out]) == 2
    assert "no online evaluation store here (store.sqlite3 is missing)" in capsys.readouterr().out
    assert run_cli(["spans", "to-document", str(SPLIT), "--out", out, "--evaluator", "RetrievalResult"]) == 2
    assert "Error: --evaluator: default_evaluators.RetrievalResult: needs 'expected_items' or " in (
        capsys.readouterr().out
    )
    assert run_cli(["spans", "to-document", str(SPLIT), "--out", out, "--evaluator", "bad name!"]) == 2
    assert (
        "--evaluator: default_evaluators: 'bad name!' is not a valid evaluator name"
        in capsys.readouterr().out
    )
    assert not Path(out).exists()


# --- the online store, filled by the real receiver -----------------------------------------------------------

#: The span evaluators' settings; cleared so a developer's environment cannot change their labels.
EVALUATOR_SETTINGS = (
    "REFERENCE_PRICES_PATH",
    "DRIFT_TOLERANCE_PERCENT",
    "WORKFLOW_GROUPS",
    "PII_CONTACT_THRESHOLD",
    "PRESIDIO_SCORE_THRESHOLD",
)


def _demo_agent():
    import importlib.util

    spec = importlib.util.spec_from_file_location("to_document_demo_agent", REPO / "data/demo_agent/agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wait(predicate, timeout: float = 30.0):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


@pytest.fixture
def filled_store(tmp_path, monkeypatch):
    """A store the receiver filled from the OpenTelemetry SDK's OTLP exporter, while the demo agent answered
    three sessions (two market traces, one PII question, a two-turn HR thread), evaluated by ``pii_leak``
    (session level) and ``stock_price_drift`` (trace level) from custom-evaluators/."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from evalkit.spans.online.server import serve
    from evalkit.spans.online.views import status

    for name in EVALUATOR_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PII_USE_PRESIDIO", "0")
    store = tmp_path / "store"
    server = serve(
        store,
        port=0,
        evaluators=["pii_leak", "stock_price_drift"],
        custom_dir=REPO / "custom-evaluators",
        session_timeout=0.3,
        poll_interval=0.02,
    ).start()
    current = {"session": None}

    class SessionStamp(SpanProcessor):  # the caller owns session.id, as evalkit's own span capture does
        def on_start(self, span, parent_context=None):
            span.set_attribute("session.id", current["session"])

        def force_flush(self, timeout_millis=30000):
            return True

    provider = TracerProvider()
    provider.add_span_processor(SessionStamp())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=server.url)))
    monkeypatch.setattr(trace, "get_tracer", lambda name, *a, **k: provider.get_tracer(name, *a, **k))
    agent = _demo_agent()
    conversations = {
        "broker-1": [agent.market.SCENARIOS["in_order"], agent.market.SCENARIOS["drift"]],
        "broker-2": [agent.market.SCENARIOS["pii"]],
        "hr-1": ["How many vacation days do I get?", "And how many for part-time?"],
    }
    try:
        for session, prompts in conversations.items():
            current["session"] = session
            history: list[dict] = []
            for prompt in prompts:
                answer = agent.answer(prompt, history)
                history.append({"prompt": prompt, "response": answer["response"]})
        assert provider.force_flush(10_000)
        _wait(lambda: status(store)["counts"]["evaluated"] == 3)
    finally:
        provider.shutdown()
        server.stop()
    return store, conversations


@pytest.mark.slow  # the receiver, its evaluator workers and the sessions' timeout: about 8 s
def test_a_store_filled_by_the_receiver_becomes_items_and_where_failed_picks_the_failures(
    filled_store, upstream_schema, capsys
):
    store, conversations = filled_store
    every, _ = quiet(store=store)
    assert_valid(every, upstream_schema)
    assert [i["prompt"] for i in every["items"]] == [p for ps in conversations.values() for p in ps]
    assert [s for s, _ in links(every)] == ["broker-1", "broker-1", "broker-2", "hr-1", "hr-1"]
    # the drift trace, the one stock_price_drift failed (a trace-level result), not its session's other trace
    drift, _ = quiet(store=store, where_failed="stock_price_drift")
    assert [i["prompt"] for i in drift["items"]] == [conversations["broker-1"][1]]
    # pii_leak fails a session: every trace of it, or its thread
    leaked, _ = quiet(store=store, where_failed="pii_leak", by="session")
    assert [t["conversation_id"] for t in leaked["items"]] == ["broker-2"]
    threads, _ = quiet(store=store, by="session", session="hr-1")
    assert_valid(threads, upstream_schema)
    (thread,) = threads["items"]
    assert [t["prompt"] for t in thread["turns"]] == conversations["hr-1"]
    assert all(t["diagnostics"]["retrieval_executions"][0]["retrievalHits"] for t in thread["turns"])
    with pytest.raises(EvalkitError, match=r"holds no result of that evaluator \(evaluators with results: "):
        quiet(store=store, where_failed="workflow_contract")
    out = store.parent / "failed.json"
    argv = ["spans", "to-document", "--store", str(store), "--where-failed", "pii_leak", "--by", "session"]
    assert run_cli([*argv, "--out", str(out)]) == 0
    assert f"1 thread from 1 trace written to {out}" in capsys.readouterr().out
    assert json.loads(out.read_text())["items"][0]["conversation_id"] == "broker-2"


# --- end to end: the demo agent's trace file becomes a document that runs and replays ------------------------

AGENT = str(REPO / "data" / "demo_agent" / "agent.py") + ":answer"


def _evalkit(*argv: str, cwd: Path):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", *argv], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.slow  # two evalkit runs with the agent, in subprocesses: about 10 s
def test_the_demo_agents_trace_file_becomes_a_document_that_validates_runs_and_replays(
    tmp_path, upstream_schema, capsys
):
    import evalkit

    first = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"Citations": {}},
        "items": [
            {"prompt": "How many sick days do I get per year?"},
            {"prompt": "What is the company's 401(k) match?"},
            {"prompt": "This is Maria Chen from Northwind Securities. How is AAPL trading, and any news?"},
            {
                "turns": [
                    {"prompt": "How many vacation days do I get?"},
                    {"prompt": "And how many for part-time?"},
                ]
            },
        ],
    }
    (tmp_path / "first.json").write_text(json.dumps(first))
    _evalkit("run", "first.json", "--agent", AGENT, "--out", "first", cwd=tmp_path)
    trace_file = tmp_path / "first" / "spans.jsonl"

    doc = tmp_path / "from_traces.json"
    argv = ["spans", "to-document", str(trace_file), "--by", "session", "--evaluator", "Citations"]
    assert run_cli([*argv, "--out", str(doc)]) == 0
    assert f"4 threads from 5 traces written to {doc}" in capsys.readouterr().out
    document = json.loads(doc.read_text())
    evalkit.validate(document, str(doc))
    assert_valid(document, upstream_schema)

    # The recorded answers, tool calls and retrieval hits are what the agent said and reported itself. Items
    # ran concurrently: the document follows the traces' time order, so turns are matched by their prompt.
    reported = json.loads((tmp_path / "first" / "results.json").read_text())["items"]
    turns = [t for i in document["items"] for t in i["turns"]]
    own = {t["prompt"]: t for i in reported for t in (i["turns"] if "turns" in i else [i])}
    assert sorted(t["prompt"] for t in turns) == sorted(own)
    thread = next(i["turns"] for i in document["items"] if len(i["turns"]) == 2)
    assert [t["prompt"] for t in thread] == [t["prompt"] for t in first["items"][3]["turns"]]
    for made in turns:
        assert made["response"] == own[made["prompt"]]["response"]
        hits = [e["retrievalHits"] for e in made["diagnostics"].get("retrieval_executions", [])]
        reported_hits = (own[made["prompt"]].get("diagnostics") or {}).get("retrieval_executions", [])
        assert hits == [e["retrievalHits"] for e in reported_hits]
    assert sum("retrieval_executions" in t["diagnostics"] for t in turns) == 4  # the HR questions searched
    market = next(t for t in turns if "AAPL" in t["prompt"])["diagnostics"]["tool_calls"]["executions"]
    assert market and {e["response_status"] for e in market} == {200}

    # As recorded: scored without calling an agent (evalkit run's engine); results link back to the traces.
    recorded = evalkit.evaluate(evalkit.load(doc))
    assert recorded["response"].tolist() == [t["response"] for t in turns]
    assert recorded["status"].tolist() == [own[t["prompt"]]["status"] for t in turns]
    ids = [e[EXT]["trace_id"] for e in recorded["extensions"]]
    assert ids == [t["extensions"][EXT]["trace_id"] for t in turns] and len(set(ids)) == 5

    # Replayed: the prompts go to the agent again (the thread with its history); the demo agent is
    # deterministic, so the new version's answers are the old ones.
    _evalkit("run", str(doc), "--agent", AGENT, "--out", "replayed", cwd=tmp_path)
    replayed = json.loads((tmp_path / "replayed" / "results.json").read_text())
    jsonschema.Draft202012Validator(upstream_schema).validate(replayed)
    again = [t for i in replayed["items"] for t in i["turns"]]
    assert [t["response"] for t in again] == [t["response"] for t in turns]
    assert (tmp_path / "replayed" / "spans.jsonl").stat().st_size > 0


# --- retrieval hits: OpenInference retriever spans ----------------------------------------------------------


def test_openinference_retriever_spans_give_retrieval_executions(tmp_path, upstream_schema):
    """A RAG turn traced with OpenInference's own tracer and attribute helpers (openinference-instrumentation
    0.1.72), exported by the SDK's ``ConsoleSpanExporter`` to a file, as people keep spans."""
    from openinference.instrumentation import (
        OITracer,
        TraceConfig,
        get_input_attributes,
        get_output_attributes,
        get_retriever_attributes,
        using_session,
    )
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    path = tmp_path / "rag_spans.json"
    with open(path, "w", encoding="utf-8") as handle:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=handle)))
        tracer = OITracer(provider.get_tracer("rag"), config=TraceConfig())
        question = "How many sick days do I get?"
        with using_session("rag-session-1"):
            with tracer.start_as_current_span("agent", openinference_span_kind="agent") as agent:
                agent.set_attributes(get_input_attributes(question))
                with tracer.start_as_current_span("retrieve", openinference_span_kind="retriever") as span:
                    span.set_attributes(get_input_attributes("sick days"))
                    span.set_attributes(
                        get_retriever_attributes(
                            documents=[
                                {
                                    "content": "Every employee gets 10 paid sick days per year.",
                                    "id": "leave-1",
                                    "score": 0.92,
                                    "metadata": {"url": "https://contoso.example/leave"},
                                },
                                {"content": "Vacation requests go through the HR portal.", "id": "leave-2"},
                            ]
                        )
                    )
                agent.set_attributes(get_output_attributes("You get 10 paid sick days a year [1]."))
        provider.shutdown()

    document, _ = quiet(
        spans=path, evaluators={"RetrievalResult": {"capability": "retriever", "min_expected_count": 2}}
    )
    assert_valid(document, upstream_schema)
    (item,) = document["items"]
    assert (item["prompt"], item["response"]) == (question, "You get 10 paid sick days a year [1].")
    assert item["extensions"][EXT]["session_id"] == "rag-session-1"
    (execution,) = item["diagnostics"]["retrieval_executions"]
    assert execution["capability"] == "retriever"
    assert execution["queries"] == [{"queryString": "sick days"}]
    assert execution["retrievalHits"] == [
        {
            "rank": 1,
            "extracts": [{"text": "Every employee gets 10 paid sick days per year."}],
            "webUrl": "https://contoso.example/leave",
            "id": "leave-1",
            "score": 0.92,
        },
        {"rank": 2, "extracts": [{"text": "Vacation requests go through the HR portal."}], "id": "leave-2"},
    ]
    import evalkit

    scored = evalkit.evaluate(_load(document, tmp_path))
    assert scored["status"].tolist() == ["pass"]  # RetrievalResult reads the hits


def _load(document: dict, folder: Path):
    import evalkit

    path = folder / "doc.json"
    path.write_text(json.dumps(document))
    return evalkit.load(path)


# --- edge cases (hand-written spans) -----------------------------------------------------------------------


def _turn_span(trace: int, prompt: str, answer: str | None, session: str = "long") -> dict:
    attributes = {"session.id": session, "gen_ai.operation.name": "invoke_agent"}
    events = [{"name": "gen_ai.user.message", "timeUnixNano": trace * 10, "attributes": {"content": prompt}}]
    if answer is not None:
        attributes["gen_ai.task.output"] = answer
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:016x}",
        "name": "invoke_agent demo",
        "kind": "INTERNAL",
        "startTimeUnixNano": trace * 1_000_000_000,
        "endTimeUnixNano": trace * 1_000_000_000 + 5,
        "attributes": attributes,
        "events": events,
        "status": {"code": "UNSET"},
    }


def test_a_session_of_more_than_20_turns_becomes_consecutive_threads(tmp_path, upstream_schema):
    path = tmp_path / "long.jsonl"
    path.write_text(
        "\n".join(json.dumps(_turn_span(n, f"question {n}", f"answer {n}")) for n in range(1, 46))
    )
    document, notes = quiet(spans=path, by="session")
    assert_valid(document, upstream_schema)
    assert [(t["conversation_id"], len(t["turns"])) for t in document["items"]] == [
        ("long", 20),
        ("long (part 2)", 20),
        ("long (part 3)", 5),
    ]
    assert document["items"][1]["turns"][0]["prompt"] == "question 21"
    assert notes == [
        f"{path}: session long has 45 turns; the schema takes 20 per thread, so it became 3 threads"
    ]


def test_a_trace_without_an_answer_keeps_its_prompt_and_says_so(tmp_path, upstream_schema):
    path = tmp_path / "unanswered.jsonl"
    path.write_text(json.dumps(_turn_span(1, "Is anyone there?", None, session="s1")))
    document, notes = quiet(spans=path)
    assert_valid(document, upstream_schema)
    assert document["items"][0]["prompt"] == "Is anyone there?" and "response" not in document["items"][0]
    assert notes == [
        f"{path}: trace {1:032x} (session s1) has no answer in its spans; its item has no response "
        "(run it with --agent)"
    ]


def test_secrets_in_the_spans_do_not_reach_the_document(tmp_path):
    path = tmp_path / "secret.jsonl"
    span = _turn_span(
        1, "Use key sk-abcdefghijklmnopqrstuvwx1234 for http://bob:hunter22@db.example/x", "done"
    )
    path.write_text(json.dumps(span))
    document, _ = quiet(spans=path, out=tmp_path / "doc.json")
    text = (tmp_path / "doc.json").read_text()
    assert "sk-abcdefghijklmnopqrstuvwx1234" not in text and "hunter22" not in text
    assert document["items"][0]["prompt"] == "Use key sk-*** for http://***@db.example/x"
