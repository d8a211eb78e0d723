"""Tests for evalkit.testing: the loopback OpenAI / Azure OpenAI model server and its heuristic judge.

Everything goes through the real ``openai``, ``promptflow`` and ``azure-ai-evaluation`` code against the real
server; nothing is mocked. A ``socket.connect`` audit hook checks that those libraries contact only loopback.
azure-ai-evaluation is imported once, by a module-scoped fixture (the import takes seconds).
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from evalkit.testing import ModelServer, Reply, heuristic_judge
from evalkit.testing.answers import extract_fields, judge_score
from evalkit.testing.protocol import estimate_tokens

pytest_plugins = ["evalkit.testing.pytest_plugin"]

API_VERSION = "2024-12-01-preview"
USER = [{"role": "user", "content": "What is the capital of France?"}]


# Helpers -------------------------------------------------------------------------------------------------
_connects: list | None = None
_hook_installed = False


def _audit(event: str, args: tuple) -> None:
    if _connects is not None and event == "socket.connect":
        _connects.append(args[1])


@pytest.fixture
def network():
    """Addresses of every ``socket.connect`` made during the test (an audit hook; hooks cannot be removed,
    so one hook is installed once and only records while a test asks for it)."""
    global _connects, _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)
        _hook_installed = True
    _connects = []
    try:
        yield _connects
    finally:
        _connects = None


def assert_loopback_only(addresses: list) -> None:
    assert addresses, "expected the client to connect to the model server"
    for address in addresses:
        assert isinstance(address, tuple) and address[0] in ("127.0.0.1", "::1", "localhost"), address


@pytest.fixture(scope="module")
def aie():
    import azure.ai.evaluation

    return azure.ai.evaluation


def configs(server: ModelServer) -> dict[str, dict]:
    return {
        "azure": {
            "azure_endpoint": server.azure_endpoint,
            "azure_deployment": "judge",
            "api_key": "test-key",
            "api_version": API_VERSION,
        },
        "openai": {"type": "openai", "base_url": server.openai_base_url, "api_key": "k", "model": "judge"},
    }


def oai(server: ModelServer, **options) -> openai.OpenAI:
    options.setdefault("max_retries", 0)
    return openai.OpenAI(base_url=server.openai_base_url, api_key="sk-test-secret", **options)


def post(server: ModelServer, path: str, payload, headers=None, method="POST"):
    """(status, headers, parsed body) of a raw request, without any client library."""
    data = payload if isinstance(payload, bytes) or payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method, headers=headers or {})
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read())


# Protocols -----------------------------------------------------------------------------------------------
def test_openai_client_gets_a_real_shaped_completion(model_server):
    reply = oai(model_server).chat.completions.create(model="gpt-test", messages=USER, temperature=0)
    assert reply.object == "chat.completion"
    assert reply.model == "gpt-test"
    assert reply.choices[0].message.role == "assistant"
    assert reply.choices[0].finish_reason == "stop"
    content = reply.choices[0].message.content
    assert "What is the capital of France?" in content
    # round(words / 0.75): 6 prompt words -> 8 tokens.
    assert reply.usage.prompt_tokens == 8 == estimate_tokens(USER[0]["content"])
    assert reply.usage.completion_tokens == estimate_tokens(content)
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    (record,) = model_server.requests
    assert record["path"] == "/v1/chat/completions" and record["api"] == "openai"
    assert record["body"]["messages"] == USER and record["body"]["temperature"] == 0
    assert record["headers"]["authorization"] == "[redacted]"
    assert "sk-test-secret" not in json.dumps(model_server.requests)
    assert model_server.request_count == 1


def test_azure_client_uses_the_deployment_path_and_name(model_server):
    client = openai.AzureOpenAI(
        azure_endpoint=model_server.azure_endpoint,
        azure_deployment="judge",
        api_key="azure-secret",
        api_version=API_VERSION,
        max_retries=0,
    )
    reply = client.chat.completions.create(model="ignored", messages=USER)
    assert reply.model == "judge"
    (record,) = model_server.requests
    assert record["path"] == "/openai/deployments/judge/chat/completions"
    assert record["api"] == "azure" and record["deployment"] == "judge"
    assert record["query"] == {"api-version": API_VERSION}
    assert record["headers"]["api-key"] == "[redacted]"
    assert "azure-secret" not in json.dumps(model_server.requests)


def test_require_key_gives_401_on_a_wrong_key_and_accepts_both_header_styles():
    with ModelServer(require_key="secret") as server:
        with pytest.raises(openai.AuthenticationError) as caught:
            oai(server).chat.completions.create(model="m", messages=USER)
        assert caught.value.status_code == 401 and caught.value.code == "invalid_api_key"
        ok = openai.OpenAI(base_url=server.openai_base_url, api_key="secret", max_retries=0)
        assert ok.chat.completions.create(model="m", messages=USER).choices  # Authorization: Bearer
        azure = openai.AzureOpenAI(
            azure_endpoint=server.azure_endpoint, api_key="secret", api_version=API_VERSION, max_retries=0
        )
        assert azure.chat.completions.create(model="d", messages=USER).choices  # api-key header
        assert "secret" not in json.dumps(server.requests)


def test_other_paths_and_bad_requests_answer_in_the_error_shape(model_server):
    status, _, body = post(model_server, "/v1/models", None, method="GET")
    assert status == 200 and body["object"] == "list" and body["data"][0]["object"] == "model"
    assert [m.id for m in oai(model_server).models.list()]
    status, _, body = post(model_server, "/v1/embeddings", {"input": "x"})
    assert status == 404 and set(body["error"]) == {"message", "type", "param", "code"}
    status, _, body = post(model_server, "/openai/deployments/d/chat/completions", {"messages": USER})
    assert status == 400 and "api-version" in body["error"]["message"]
    status, _, body = post(model_server, "/v1/chat/completions", b"{not json")
    assert status == 400 and body["error"]["type"] == "invalid_request_error"
    status, _, body = post(model_server, "/v1/chat/completions", None, method="GET")
    assert status == 405


def test_http11_keep_alive_reuses_one_connection(model_server):
    connection = http.client.HTTPConnection("127.0.0.1", model_server.port, timeout=10)
    payload = json.dumps({"model": "m", "messages": USER})
    sockets = []
    for _ in range(3):
        connection.request("POST", "/v1/chat/completions", payload, {"Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.status == 200 and response.version == 11
        assert json.loads(response.read())["object"] == "chat.completion"
        assert not response.will_close
        sockets.append(connection.sock)
    assert sockets[0] is sockets[1] is sockets[2]
    connection.close()


def test_streaming_n_and_tool_calls(model_server):
    client = oai(model_server)
    plain = client.chat.completions.create(model="m", messages=USER).choices[0].message.content
    stream = client.chat.completions.create(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    pieces, usage = [], None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        usage = chunk.usage or usage
    assert "".join(pieces) == plain and usage.total_tokens > 0
    assert [c.index for c in client.chat.completions.create(model="m", messages=USER, n=2).choices] == [0, 1]
    model_server.script = [Reply(tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}])]
    choice = client.chat.completions.create(model="m", messages=USER).choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls[0].function.name == "get_weather"
    assert json.loads(choice.message.tool_calls[0].function.arguments) == {"city": "Paris"}


# Scripts --------------------------------------------------------------------------------------------------
def test_script_list_is_consumed_in_order_then_the_heuristic_answers(model_server):
    model_server.script = [
        "first",
        {"score": 4},
        Reply(content="third", prompt_tokens=7, completion_tokens=2),
    ]
    client = oai(model_server)
    answers = [client.chat.completions.create(model="m", messages=USER) for _ in range(4)]
    assert [a.choices[0].message.content for a in answers[:3]] == ["first", '{"score": 4}', "third"]
    assert (answers[2].usage.prompt_tokens, answers[2].usage.completion_tokens) == (7, 2)
    assert answers[3].choices[0].message.content == heuristic_judge(model_server.requests[3])


def test_script_callable_sees_the_request_and_its_errors_reach_the_client(model_server):
    model_server.script = lambda request: f"echo {request['body']['messages'][-1]['content']}"
    assert oai(model_server).chat.completions.create(model="m", messages=USER).choices[0].message.content == (
        "echo What is the capital of France?"
    )
    model_server.script = lambda request: Reply(status=403, content={"message": "nope", "code": "denied"})
    with pytest.raises(openai.PermissionDeniedError) as caught:
        oai(model_server).chat.completions.create(model="m", messages=USER)
    assert caught.value.code == "denied" and caught.value.message.endswith("nope")

    def broken(request):
        raise KeyError("missing")

    model_server.script = broken
    with pytest.raises(openai.InternalServerError):
        oai(model_server).chat.completions.create(model="m", messages=USER)
    assert model_server.errors == ["KeyError: 'missing'"]


# Faults -----------------------------------------------------------------------------------------------------
def test_429_with_retry_after_reaches_the_client(model_server):
    model_server.fail_next(1, status=429, retry_after=1.5)
    with pytest.raises(openai.RateLimitError) as caught:
        oai(model_server).chat.completions.create(model="m", messages=USER)
    error = caught.value
    assert error.status_code == 429 and error.code == "rate_limit_exceeded"
    assert error.response.headers["retry-after"] == "1.5"
    assert error.response.headers["retry-after-ms"] == "1500"
    assert oai(model_server).chat.completions.create(model="m", messages=USER).choices  # only the next one


def test_client_retries_honour_retry_after(model_server):
    model_server.fail_next(2, status=429, retry_after=0.1)
    started = time.perf_counter()
    reply = oai(model_server, max_retries=2).chat.completions.create(model="m", messages=USER)
    assert reply.choices and time.perf_counter() - started >= 0.2
    assert model_server.request_count == 3


def test_500_malformed_and_raw_body_faults(model_server):
    client = oai(model_server)
    model_server.fail_next(1, status=500)
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="m", messages=USER)
    assert caught.value.body["type"] == "server_error"
    model_server.fail_next(1, malformed=True)
    content = client.chat.completions.create(model="m", messages=USER).choices[0].message.content
    with pytest.raises(ValueError):
        json.loads(content)
    model_server.fail_next(1, raw_body=b"not json")
    with pytest.raises(json.JSONDecodeError):  # openai lets the decode error through for a 200 body
        client.chat.completions.create(model="m", messages=USER)
    assert client.chat.completions.create(model="m", messages=USER).choices


def test_hang_makes_the_client_time_out(model_server):
    model_server.fail_next(1, hang=5)
    started = time.perf_counter()
    with pytest.raises(openai.APITimeoutError):
        oai(model_server, timeout=0.3).chat.completions.create(model="m", messages=USER)
    assert time.perf_counter() - started < 3


def test_random_faults_follow_the_seed():
    def pattern(seed):
        with ModelServer(seed=seed) as server:
            server.fail_randomly(0.5, status=503)
            client = oai(server)
            outcomes = []
            for _ in range(20):
                try:
                    client.chat.completions.create(model="m", messages=USER)
                    outcomes.append("ok")
                except openai.InternalServerError:
                    outcomes.append("503")
            return outcomes

    first = pattern(7)
    assert first == pattern(7) and {"ok", "503"} <= set(first)


def test_latency_is_added(model_server):
    model_server.latency = 0.2
    started = time.perf_counter()
    oai(model_server).chat.completions.create(model="m", messages=USER)
    assert 0.2 <= time.perf_counter() - started < 2.0


# Concurrency and lifecycle ----------------------------------------------------------------------------------
def test_counts_50_concurrent_requests(model_server):
    client = oai(model_server)

    def ask(i):
        return client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": f"question {i}"}]
        )

    with ThreadPoolExecutor(50) as pool:
        replies = list(pool.map(ask, range(50)))
    assert len(replies) == 50 and model_server.request_count == 50 == len(model_server.requests)
    assert sorted(r["index"] for r in model_server.requests) == list(range(50))


def test_64_requests_are_in_flight_at_once(model_server):
    barrier = threading.Barrier(64, timeout=10)  # breaks unless 64 requests are inside the server together
    model_server.script = lambda request: f"passed {barrier.wait()}"
    client = oai(model_server, timeout=20)
    with ThreadPoolExecutor(64) as pool:
        replies = list(
            pool.map(lambda _: client.chat.completions.create(model="m", messages=USER), range(64))
        )
    assert sorted(int(r.choices[0].message.content.split()[1]) for r in replies) == list(range(64))
    assert model_server.errors == []


def test_stop_is_prompt_with_a_hanging_request_and_idempotent():
    server = ModelServer().start()
    server.fail_next(1, hang=30)
    outcome = []

    def call():
        try:
            oai(server, timeout=20).chat.completions.create(model="m", messages=USER)
        except openai.APIConnectionError as error:
            outcome.append(type(error).__name__)

    worker = threading.Thread(target=call)
    worker.start()
    while server.request_count == 0:
        time.sleep(0.01)
    started = time.perf_counter()
    server.stop()
    server.stop()
    worker.join(10)
    assert time.perf_counter() - started < 5 and outcome == ["APIConnectionError"]
    with pytest.raises(RuntimeError):
        _ = server.url


# End to end through azure-ai-evaluation and promptflow ----------------------------------------------------------
TOOL_DEFINITIONS = [
    {
        "name": "fetch_weather",
        "description": "Fetches the weather information for the specified location.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    }
]
EVALUATOR_CASES = [
    # (class, inputs, expected heuristic score, why)
    (
        "Relevance",
        {"query": "What is the capital of France?", "response": "Paris is the capital of France."},
        5,
    ),
    ("Relevance", {"query": "What is the capital of France?", "response": "Bananas grow on trees."}, 1),
    ("Coherence", {"query": "What is the capital of France?", "response": "The capital is Paris."}, 3),
    ("Groundedness", {"context": "Paris is the capital of France.", "response": "Paris is the capital."}, 5),
    (
        "Groundedness",
        {
            "query": "What is the capital?",
            "context": "Paris is the capital and largest city of France.",
            "response": "Paris is the capital of France, with 40 million people.",
        },
        3,
    ),
    (
        "Similarity",
        {
            "query": "What is the capital of France?",
            "response": "Paris is the capital of France.",
            "ground_truth": "The capital of France is Paris.",
        },
        5,
    ),
    (
        "ToolCallAccuracy",
        {
            "query": "How is the weather in Seattle?",
            "tool_calls": [
                {
                    "type": "tool_call",
                    "tool_call_id": "call_1",
                    "name": "fetch_weather",
                    "arguments": {"location": "Seattle"},
                }
            ],
            "tool_definitions": TOOL_DEFINITIONS,
        },
        5,
    ),
]
# The expected scores: Relevance 2/2 and 0/2 query words in the response -> 5, 1; Coherence "capital" only
# (1/2 = 0.5 -> 1 + floor(2.5) = 3); Groundedness 3/3 response words in the context -> 5, then paris, capital,
# france of (paris, capital, france, 40, million, people) = 0.5 -> 3; Similarity identical word sets -> 5;
# ToolCallAccuracy "weather" and "seattle" both in the tool call -> 5.


@pytest.mark.parametrize("kind", ["azure", "openai"])
@pytest.mark.parametrize(("name", "inputs", "expected"), EVALUATOR_CASES)
def test_azure_ai_evaluation_evaluators_get_a_score(aie, model_server, network, kind, name, inputs, expected):
    evaluator = getattr(aie, f"{name}Evaluator")(configs(model_server)[kind])
    result = evaluator(**inputs)
    key = "tool_call_accuracy" if name == "ToolCallAccuracy" else name.lower()
    assert result[f"{key}_score"] == expected
    assert result[f"{key}_reason"].startswith("Let's think step by step: Heuristic judge:")
    (record,) = model_server.requests
    assert record["model"] == "judge" and record["api"] == kind
    assert record["body"]["response_format"] == {"type": "json_object"}
    assert_loopback_only(network)


PROMPTY = """---
name: judge
description: Scores how well the response answers the user's request, 1-5.
model:
  api: chat
  parameters:
    temperature: 0.0
    max_tokens: 300
    response_format:
      type: json_object
inputs:
  user_prompt:
    type: string
  response:
    type: string
---
system:
You grade an assistant's answer from 1 (does not answer the request) to 5 (answers it fully and precisely).
Reply with JSON only: {"score": <integer 1-5>, "reason": "<one sentence>"}

user:
# Request
{{user_prompt}}

# Answer
{{response}}
"""


@pytest.mark.parametrize("kind", ["azure", "openai"])
def test_promptflow_prompty_gets_the_json_score(model_server, network, tmp_path, kind):
    from promptflow.client import load_flow

    (tmp_path / "judge.prompty").write_text(PROMPTY)
    configuration = configs(model_server)[kind]
    if kind == "azure":
        configuration["type"] = "azure_openai"
    flow = load_flow(source=str(tmp_path / "judge.prompty"), model={"configuration": configuration})
    answer = flow(user_prompt="What is the capital of France?", response="Paris, the capital of France.")
    assert answer == {
        "score": 5,
        "reason": judge_score({"query": "capital France", "response": "capital France"})[1],
    }
    partial = flow(user_prompt="What is the capital of France?", response="It is in Europe, like France.")
    assert partial["score"] == 3  # 1 of 2 query words
    assert_loopback_only(network)


APOLOGY = """---
name: apology
description: Did the assistant apologise? (promptflow's eval-apology sample, in short)
model:
  api: chat
  parameters:
    temperature: 0.2
    response_format: { "type": "json_object" }
inputs:
  question:
    type: string
  answer:
    type: string
outputs:
  apology:
    type: int
---
system:
You are an AI tool that determines if, in a chat conversation, the assistant apologized, like say sorry.
Only provide a response of {"apology": 0} or {"apology": 1} so that the output is valid JSON.

user: {{question}}
assistant: {{answer}}
output:
"""


def test_a_prompty_gets_the_shape_its_instructions_and_outputs_declare(model_server, tmp_path):
    # promptflow takes the declared outputs from the answer: {"answer": ...} made it refuse the call.
    from promptflow.client import load_flow

    (tmp_path / "apology.prompty").write_text(APOLOGY)
    configuration = {**configs(model_server)["openai"], "type": "openai"}
    flow = load_flow(source=str(tmp_path / "apology.prompty"), model={"configuration": configuration})
    assert flow(question="Where is my order?", answer="Sorry, I cannot find it.") == {"apology": 0}


def test_declared_shape_from_a_json_schema_or_the_prompts_own_example():
    schema = {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "schema": {
                "type": "object",
                "properties": {
                    "verdict": {"type": "string", "enum": ["yes", "no"]},
                    "confidence": {"type": "number"},
                    "count": {"type": ["integer", "null"]},
                    "flagged": {"type": "boolean"},
                    "note": {"type": "string"},
                },
            },
        },
    }
    answer = json.loads(
        heuristic_judge(body("Judge it.", "Question: a?\nAnswer: b.", response_format=schema))
    )
    assert answer == {
        "verdict": "yes",
        "confidence": 0.0,
        "count": 0,
        "flagged": False,
        "note": "Test answer",
    }
    example = 'Reply in JSON, as {"label": "safe", "flags": []} or {"label": "unsafe", "flags": ["x"]}.'
    assert json.loads(heuristic_judge(body(example, "Question: a?\nAnswer: b."))) == {
        "label": "safe",
        "flags": [],
    }


def test_evaluator_surfaces_server_faults(aie, model_server):
    evaluator = aie.RelevanceEvaluator(configs(model_server)["azure"])
    model_server.fail_next(1, malformed=True)
    with pytest.raises(ValueError):  # the JSON-mode answer does not decode
        evaluator(query="q", response="r")
    model_server.fail_next(1, status=401)
    with pytest.raises(Exception, match="AuthenticationError"):
        evaluator(query="q", response="r")


# The heuristic judge -----------------------------------------------------------------------------------------
def body(system: str, user: str, **extra) -> dict:
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}], **extra}


def test_heuristic_formats():
    data = "Question: What is the capital of France?\nAnswer: Paris is the capital of France."
    assert json.loads(heuristic_judge(body('Return JSON: {"score": <int 1-5>, "reason": "..."}', data))) == {
        "score": 5,
        "reason": judge_score({"query": "capital france", "response": "capital france"})[1],
    }
    assert heuristic_judge(body("Rate it. Return a single integer from 1 to 5.", data)) == "5"
    tags = heuristic_judge(body("Answer as <S0>thoughts</S0><S1>reason</S1><S2>score</S2>.", data))
    from azure.ai.evaluation._common.utils import parse_quality_evaluator_reason_score

    assert parse_quality_evaluator_reason_score(tags)[0] == 5.0
    assert json.loads(heuristic_judge(body("Reply in JSON.", data)))["answer"].startswith("Test answer")
    text = heuristic_judge({"messages": USER})
    assert "What is the capital of France?" in text and not text.startswith("{")
    # the data's own words do not change the format: a response that mentions JSON is still scored as asked
    assert heuristic_judge(body("Return only the score.", "Question: json?\nAnswer: Use JSON.")) == "5"


def test_heuristic_is_deterministic_and_reads_labelled_fields():
    request = {
        "body": body("Say JSON with a score.", "# Request\nHow do plants make food?\n\n# Answer\nBy eating.")
    }
    assert heuristic_judge(request) == heuristic_judge(json.loads(json.dumps(request)))
    assert extract_fields("# Request\nHow do plants make food?\n\n# Answer\nBy eating.") == {
        "query": "How do plants make food?",
        "response": "By eating.",
    }
    # few-shot examples before the data do not count; output instructions end the last field
    prompt = (
        "question: a?\ncorrect answer: b\npredicted answer: c\nstars: 3\n\n"
        "question: Why is the sky blue?\ncorrect answer:Rayleigh scattering\npredicted answer: scattering\n\n"
        "Your output must be a valid JSON object with a score."
    )
    assert extract_fields(prompt) == {
        "query": "Why is the sky blue?",
        "ground_truth": "Rayleigh scattering",
        "response": "scattering",
    }
    assert judge_score({"query": "q", "response": ""})[0] == 1
    assert judge_score({})[0] == 3
    assert judge_score({"ground_truth": "rayleigh scattering", "response": "scattering"})[0] == 4  # F1 2/3
