"""Agents under test (``evalkit.agents``): Python callables, imported targets and OpenAI-compatible HTTP
endpoints (the real ``ModelServer``), threads in order, agent error codes, concurrency, tool allowlists and
the capture of the OpenTelemetry spans an agent emits into its row."""

from __future__ import annotations

import asyncio
import textwrap
import threading
import time

import pandas as pd
import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace

from evalkit.agents.run import TURN_SKIPPED_MESSAGE, run_agent
from evalkit.agents.span_capture import write_spans_jsonl
from evalkit.documents.case_table import load
from evalkit.errors import EnvironmentConfigError, EvalkitError
from evalkit.testing import Reply

tracer = trace.get_tracer(__name__)

EXECUTIONS = [
    {
        "capability": "OneDriveAndSharePoint",
        "status": "success",
        "queries": [{"queryString": "stock price"}],
        "retrievalHits": [{"rank": 1, "webUrl": "https://example.com/a", "extracts": [{"text": "AMZN"}]}],
    }
]


def table(*items: dict) -> pd.DataFrame:
    return load({"schemaVersion": "1.11.0", "items": list(items)})


def singles(*prompts: str) -> pd.DataFrame:
    return table(*({"prompt": p} for p in prompts))


def thread(*prompts: str, name: str = "conv") -> dict:
    return {"conversation_id": name, "turns": [{"prompt": p} for p in prompts]}


# --- Python callables -----------------------------------------------------------------------------------


def test_sync_callable_fills_response_citations_and_retrieval_and_replaces_recorded_answers():
    df = table({"prompt": "What is AMZN at?", "response": "recorded answer", "citations": [{"index": 9}]})

    def agent(prompt, history):
        return {
            "response": f"Answer to: {prompt}",
            "citations": [{"index": 1, "text": "AMZN $178", "source": "https://example.com/a"}],
            "retrieval_executions": EXECUTIONS,
        }

    out = run_agent(df, agent)
    row = out.iloc[0]
    assert row["response"] == "Answer to: What is AMZN at?"
    assert row["citations"] == [{"index": 1, "text": "AMZN $178", "source": "https://example.com/a"}]
    assert row["retrieval_executions"] == EXECUTIONS
    assert row["error_code"] is None and row["error_message"] is None
    assert df.iloc[0]["response"] == "recorded answer"  # the input table is not changed


def test_async_callable_and_plain_string_answers():
    async def agent(prompt, history):
        await asyncio.sleep(0.01)
        if prompt == "plain":
            return "just text"
        return {
            "response": prompt.upper(),
            "citations": ["https://example.com/doc"],
            "retrieval_executions": [],
        }

    out = run_agent(singles("hello", "plain"), agent)
    assert out["response"].tolist() == ["HELLO", "just text"]
    assert out["citations"].tolist() == [[{"index": 1, "source": "https://example.com/doc"}], []]
    assert out["error_code"].isna().all()


def test_unparseable_answers_are_not_retried():
    calls = []

    def agent(prompt, history):
        calls.append(prompt)
        return {"int": 42, "no-response": {"text": "hi"}, "bad-citations": {"response": "x", "citations": 3}}[
            prompt
        ]

    out = run_agent(singles("int", "no-response", "bad-citations"), agent, attempts=3, backoff=0.01)
    assert out["error_code"].tolist() == ["agentResponseUnparseable"] * 3
    assert out["response"].isna().all()
    assert "got int" in out.iloc[0]["error_message"]
    assert "no 'response'" in out.iloc[1]["error_message"]
    assert "'citations' must be a list" in out.iloc[2]["error_message"]
    assert sorted(calls) == ["bad-citations", "int", "no-response"]  # once each


def test_file_path_target(tmp_path):
    agent = tmp_path / "agents" / "my_agent.py"
    agent.parent.mkdir()
    (agent.parent / "helper.py").write_text("PREFIX = 'from file'\n")
    agent.write_text(
        textwrap.dedent(
            """
            from helper import PREFIX

            def answer(prompt, history):
                return f"{PREFIX}: {prompt}"
            """
        )
    )
    out = run_agent(singles("hi"), f"{agent}:answer")
    assert out.iloc[0]["response"] == "from file: hi"

    with pytest.raises(
        EvalkitError, match="my_agent.py:answr.*has no function 'answr'.*Did you mean 'answer'"
    ):
        run_agent(singles("hi"), f"{agent}:answr")
    with pytest.raises(
        EvalkitError, match=r"Agent target '.*missing\.py:answer': file .*missing\.py not found"
    ):
        run_agent(singles("hi"), f"{tmp_path / 'missing.py'}:answer")
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('no config')\n")
    with pytest.raises(EvalkitError, match="broken.py failed to import: RuntimeError: no config"):
        run_agent(singles("hi"), f"{broken}:answer")


def test_module_target(tmp_path, monkeypatch):
    package = tmp_path / "shop_agents"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "support.py").write_text(
        "async def reply(prompt, history):\n    return {'response': 'module says ' + prompt}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = run_agent(singles("hello"), "shop_agents.support:reply")
    assert out.iloc[0]["response"] == "module says hello"

    with pytest.raises(
        EvalkitError, match="Agent target 'shop_agents.nothing:reply': module 'shop_agents.nothing' not found"
    ):
        run_agent(singles("hello"), "shop_agents.nothing:reply")
    with pytest.raises(EvalkitError, match="module 'shop_agents.support' has no function 'missing'"):
        run_agent(singles("hello"), "shop_agents.support:missing")
    with pytest.raises(EvalkitError, match="expected 'path/to/agent.py:function'"):
        run_agent(singles("hello"), "shop_agents.support")


def test_thread_turns_run_in_order_with_growing_history():
    seen: dict[str, list] = {}

    def agent(prompt, history):
        seen[prompt] = [dict(m) for m in history]
        time.sleep(0.02 if prompt.endswith("1") else 0.0)  # an early turn that is slow must still come first
        return f"reply to {prompt}"

    df = table(thread("a1", "a2", "a3", name="A"), {"prompt": "single"}, thread("b1", "b2", name="B"))
    out = run_agent(df, agent, concurrency=4)
    assert out["response"].tolist() == [f"reply to {p}" for p in ("a1", "a2", "a3", "single", "b1", "b2")]
    assert seen["a1"] == [] and seen["single"] == [] and seen["b1"] == []
    assert seen["a3"] == [
        {"role": "user", "content": "a1"},
        {"role": "assistant", "content": "reply to a1"},
        {"role": "user", "content": "a2"},
        {"role": "assistant", "content": "reply to a2"},
    ]
    assert seen["b2"] == [{"role": "user", "content": "b1"}, {"role": "assistant", "content": "reply to b1"}]


def test_failed_turn_skips_the_rest_of_its_thread_only():
    calls = []

    def agent(prompt, history):
        calls.append(prompt)
        if prompt == "t2":
            raise ValueError("the knowledge base is down")
        return "ok " + prompt

    df = table(thread("t1", "t2", "t3"), thread("u1", "u2", name="other"))
    out = run_agent(df, agent, attempts=2, backoff=0.01)
    assert out["response"].tolist() == ["ok t1", None, None, "ok u1", "ok u2"]
    assert out["error_code"].tolist() == [None, "agentRequestFailed", "turnSkipped", None, None]
    assert out.iloc[1]["error_message"] == (
        "Agent request failed: ValueError: the knowledge base is down (after 2 attempts)"
    )
    assert out.iloc[2]["error_message"] == TURN_SKIPPED_MESSAGE == "Turn not attempted: preceding turn failed"
    assert calls.count("t2") == 2 and "t3" not in calls


def test_concurrency_is_used_and_bounded():
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def agent(prompt, history):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return prompt

    done = []
    out = run_agent(
        singles(*(f"q{i}" for i in range(12))), agent, concurrency=4, on_done=lambda i, r: done.append(i)
    )
    assert out["response"].tolist() == [f"q{i}" for i in range(12)]
    assert state["max"] == 4
    assert sorted(done) == list(range(12))


def test_allowed_tools_passed_only_to_functions_that_accept_it():
    df = singles("first", "second")
    df["allowed_tools"] = [["get_stock_data", "search"], None]
    got = []

    def with_tools(prompt, history, allowed_tools=None):
        got.append((prompt, allowed_tools))
        return "ok"

    def with_kwargs(prompt, history, **options):
        got.append((prompt, options.get("allowed_tools")))
        return "ok"

    def without(prompt, history):
        return "ok"

    assert run_agent(df, with_tools)["response"].tolist() == ["ok", "ok"]
    assert sorted(got) == [("first", ["get_stock_data", "search"]), ("second", [])]
    got.clear()
    run_agent(df, with_kwargs)
    assert sorted(got) == [("first", ["get_stock_data", "search"]), ("second", [])]
    out = run_agent(df, without)  # would raise TypeError (agentRequestFailed) if given allowed_tools
    assert out["response"].tolist() == ["ok", "ok"] and out["error_code"].isna().all()
    got.clear()
    run_agent(singles("no column"), with_tools)
    assert got == [("no column", [])]


def test_timeout_of_a_python_agent():
    def agent(prompt, history):
        time.sleep(1.0)
        return "late"

    start = time.monotonic()
    out = run_agent(singles("slow"), agent, timeout=0.2, attempts=1)
    assert time.monotonic() - start < 0.9
    assert out.iloc[0]["error_code"] == "agentTimeout"
    assert out.iloc[0]["error_message"] == "Agent timed out: no answer within 0.2 s"


# --- HTTP agents (the real local model server) ----------------------------------------------------------


@pytest.fixture
def agent_env(monkeypatch):
    monkeypatch.setenv("AGENT_API_KEY", "agent-key")
    monkeypatch.delenv("AGENT_MODEL", raising=False)


def test_http_agent_answers_with_thread_history(model_server, agent_env):
    model_server.require_key = "agent-key"
    model_server.script = lambda request: f"answer {len(request['body']['messages'])}"
    df = table({"prompt": "single"}, thread("h1", "h2"))
    out = run_agent(df, model_server.openai_base_url + "#shop-agent")
    assert out["response"].tolist() == ["answer 1", "answer 1", "answer 3"]
    assert out["error_code"].isna().all()
    bodies = {r["body"]["messages"][-1]["content"]: r["body"] for r in model_server.requests}
    assert bodies["h2"]["messages"] == [
        {"role": "user", "content": "h1"},
        {"role": "assistant", "content": "answer 1"},
        {"role": "user", "content": "h2"},
    ]
    assert {b["model"] for b in bodies.values()} == {"shop-agent"}


def test_http_agent_model_from_environment_and_required(model_server, agent_env, monkeypatch):
    with pytest.raises(EnvironmentConfigError, match="Set AGENT_MODEL or add it to the URL"):
        run_agent(singles("hi"), model_server.openai_base_url)
    monkeypatch.setenv("AGENT_MODEL", "env-model")
    model_server.script = [Reply(content="fine", prompt_tokens=1)]
    out = run_agent(singles("hi"), model_server.openai_base_url + "/chat/completions")
    assert out.iloc[0]["response"] == "fine"
    assert model_server.requests[-1]["model"] == "env-model"


def test_http_rate_limited_after_retries(model_server, agent_env):
    model_server.fail_next(3, status=429, retry_after=0.01)
    out = run_agent(singles("hi"), model_server.openai_base_url + "#m", attempts=3, backoff=0.01)
    assert model_server.request_count == 3
    assert out.iloc[0]["error_code"] == "agentRateLimited"
    assert out.iloc[0]["error_message"].startswith("Agent rate limited: HTTP 429: Rate limit reached")
    assert out.iloc[0]["error_message"].endswith("(after 3 attempts)")
    assert out.iloc[0]["response"] is None


def test_http_rate_limit_then_success(model_server, agent_env):
    model_server.fail_next(2, status=429, retry_after=0.01)
    model_server.script = lambda request: "finally"
    out = run_agent(singles("hi"), model_server.openai_base_url + "#m", attempts=3, backoff=0.01)
    assert out.iloc[0]["response"] == "finally" and out.iloc[0]["error_code"] is None
    assert model_server.request_count == 3


def test_http_authentication_error_is_not_retried(model_server, monkeypatch):
    monkeypatch.delenv("AGENT_API_KEY", raising=False)
    model_server.require_key = "secret"
    out = run_agent(singles("hi"), model_server.openai_base_url + "#m", attempts=3, backoff=0.01)
    assert model_server.request_count == 1
    assert out.iloc[0]["error_code"] == "agentAuthenticationError"
    assert out.iloc[0]["error_message"] == (
        "Agent authentication failed: HTTP 401: Incorrect API key provided. (AGENT_API_KEY is not set)"
    )


def test_http_server_error_message_is_kept(model_server, agent_env):
    model_server.fail_next(2, status=503, message="Agent backend is in a maintenance window")
    out = run_agent(singles("hi"), model_server.openai_base_url + "#m", attempts=2, backoff=0.01)
    assert out.iloc[0]["error_code"] == "agentRequestFailed"
    assert out.iloc[0]["error_message"] == (
        "Agent request failed: HTTP 503: Agent backend is in a maintenance window (after 2 attempts)"
    )
    assert model_server.request_count == 2


def test_http_hang_is_a_timeout(model_server, agent_env):
    model_server.fail_next(2, hang=3.0)
    start = time.monotonic()
    out = run_agent(singles("hi"), model_server.openai_base_url + "#m", timeout=0.3, attempts=2, backoff=0.01)
    assert time.monotonic() - start < 2.0
    assert out.iloc[0]["error_code"] == "agentTimeout"
    assert out.iloc[0]["error_message"].startswith("Agent timed out: no answer within 0.3 s")


@pytest.mark.parametrize(
    ("body", "detail"),
    [(b"not json", "the body is not JSON"), (b'{"choices": 5}', "no choices[0].message.content")],
)
def test_http_malformed_body_is_unparseable(model_server, agent_env, body, detail):
    model_server.fail_next(1, raw_body=body)
    out = run_agent(singles("hi"), model_server.openai_base_url + "#m", attempts=3, backoff=0.01)
    assert out.iloc[0]["error_code"] == "agentResponseUnparseable"
    assert detail in out.iloc[0]["error_message"]
    assert model_server.request_count == 1


# --- spans ------------------------------------------------------------------------------------------------


def stock_agent(barrier: threading.Barrier | None = None):
    """An agent instrumented the usual way: a root span and a child tool span per call."""

    def agent(prompt, history):
        with tracer.start_as_current_span("invoke_agent market_agent", attributes={"prompt": prompt}) as root:
            if barrier is not None:
                barrier.wait(timeout=5)  # both items are now inside their spans at once
            with tracer.start_as_current_span(
                "execute_tool get_stock_data",
                attributes={"gen_ai.tool.name": "get_stock_data", "gen_ai.tool.call.result": f"{prompt} $1"},
            ) as tool:
                tool.add_event("tool.call", {"ticker": prompt})
            root.set_status(trace.Status(trace.StatusCode.OK))
            return f"{prompt} is at $1"

    return agent


def test_spans_land_in_their_own_row_with_its_session_id():
    out = run_agent(singles("AMZN", "MSFT"), stock_agent(threading.Barrier(2)), concurrency=2)
    sessions = []
    for prompt, spans in zip(out["prompt"], out["spans"]):
        assert [s["name"] for s in spans] == ["invoke_agent market_agent", "execute_tool get_stock_data"]
        root, tool = spans
        assert root["attributes"]["prompt"] == prompt
        assert tool["attributes"]["gen_ai.tool.call.result"] == f"{prompt} $1"
        assert tool["parentSpanId"] == root["spanId"] and "parentSpanId" not in root
        assert tool["traceId"] == root["traceId"]
        assert root["attributes"]["session.id"] == tool["attributes"]["session.id"]
        assert root["status"] == {"code": "OK"} and tool["status"] == {"code": "UNSET"}
        assert root["kind"] == "INTERNAL"
        assert tool["events"][0]["name"] == "tool.call" and tool["events"][0]["attributes"] == {
            "ticker": prompt
        }
        assert root["scope"]["name"] == __name__
        sessions.append(root["attributes"]["session.id"])
    assert len(set(sessions)) == 2
    assert out.iloc[0]["spans"][0]["traceId"] != out.iloc[1]["spans"][0]["traceId"]


def test_thread_turns_share_a_session_and_spans_follow_their_trace_into_other_threads():
    def agent(prompt, history):
        with tracer.start_as_current_span("invoke_agent " + prompt):
            captured = otel_context.get_current()

            def worker():  # a plain thread: no context variables, only the OTel context it attaches
                token = otel_context.attach(captured)
                try:
                    with tracer.start_as_current_span("background " + prompt):
                        pass
                finally:
                    otel_context.detach(token)

            helper = threading.Thread(target=worker)
            helper.start()
            helper.join()
        return "ok"

    out = run_agent(table(thread("t1", "t2")), agent)
    names = [[s["name"] for s in spans] for spans in out["spans"]]
    assert names == [["invoke_agent t1", "background t1"], ["invoke_agent t2", "background t2"]]
    session_ids = {s["attributes"]["session.id"] for spans in out["spans"] for s in spans}
    assert len(session_ids) == 1


def test_spans_outside_an_item_are_not_captured_and_capture_can_be_off():
    with tracer.start_as_current_span("outside"):
        out = run_agent(singles("AMZN"), stock_agent())
    assert [s["name"] for s in out.iloc[0]["spans"]] == [
        "invoke_agent market_agent",
        "execute_tool get_stock_data",
    ]
    assert "parentSpanId" not in out.iloc[0]["spans"][0]  # each item starts its own trace
    assert run_agent(singles("AMZN"), stock_agent(), capture_spans=False).iloc[0]["spans"] == []


def test_write_spans_jsonl_is_read_by_spans_load(tmp_path):
    from evalkit.spans import load as load_spans
    from evalkit.spans import sessions

    out = run_agent(singles("AMZN", "MSFT"), stock_agent(threading.Barrier(2)), concurrency=2)
    path = tmp_path / "spans" / "agent.jsonl"
    assert write_spans_jsonl(out, path) == 4
    frame = load_spans(path, warn=False)
    assert frame.attrs["problems"] == []
    written = sorted((s for spans in out["spans"] for s in spans), key=lambda s: s["startTimeUnixNano"])
    assert frame["document"].tolist() == written  # the canonical form, unchanged by loading
    tools = frame[frame["is_tool"]]
    assert tools["tool_name"].tolist() == ["get_stock_data", "get_stock_data"]
    by_session = sessions(frame).set_index("session_id")
    for spans in out["spans"]:
        session = spans[0]["attributes"]["session.id"]
        assert by_session.loc[session, "spans"] == 2 and by_session.loc[session, "tool_calls"] == 1
