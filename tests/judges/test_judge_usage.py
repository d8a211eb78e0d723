"""Judge calls are the requests the model server received, retries included, and tokens are what it reported,
for every judge kind (issue 17 item 4).

Through the real code: azure-ai-evaluation's prompts for the built-ins, promptflow for custom ``.prompty``
judges (evalkit's shipped ``professional_tone`` and ``consistency_check``, which samples its prompty
``options.samples`` times per row, and promptflow's own ``eval-apology`` example as shipped), and AgentCore span
judges, all against ``ModelServer``, which records the usage it reports (``tokens_reported``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import evalkit
from evalkit.judges.cache import JudgeCache
from evalkit.spans import evaluate_spans
from evalkit.spans.llm_judges.judge_runner import SpanJudges

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "custom-evaluators"
APOLOGY = REPO / "tests" / "evaluators" / "data" / "prompty" / "eval_apology"
SPANS = REPO / "data" / "agentcore_spans.jsonl"

APOLOGY_WRAPPER = """
from pathlib import Path


class Judge:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        self._flow = load_flow(source=str(Path(__file__).with_suffix(".prompty")), model={"configuration": model_config})

    def __call__(self, *, prompt="", response="", **_):
        data = self._flow(question=prompt, answer=response, messages=[])
        return {"score": 1 if int(data["apology"]) else 5, "reason": "apology=%s" % data["apology"]}
"""


def answers(request):
    """promptflow's apology prompt gets its ``{"apology": 0|1}``; every other judge the heuristic judge's answer."""
    text = request["body"]["messages"][-1]["content"]
    if "apolog" not in json.dumps(request["body"]["messages"]).lower():
        return None
    return {"apology": int("sorry" in text.rsplit("assistant:", 1)[-1].lower())}


def config(server) -> dict:
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


def install(project) -> None:
    for name in ("professional_tone", "consistency_check"):
        shutil.copytree(SHIPPED / name, project.custom / name)
    home = project.custom / "apology"
    shutil.copytree(APOLOGY, home)  # apology.prompty (promptflow's, as shipped) and its sample.json
    (home / "apology.py").write_text(APOLOGY_WRAPPER)


def document(samples: int = 5) -> dict:
    return {
        "schemaVersion": "1.11.0",
        "default_evaluators": {
            "Relevance": {},
            "professional_tone": {},
            "consistency_check": {"options": {"samples": samples}},
            "apology": {},
        },
        "items": [
            {"prompt": "Where is my order?", "response": "Sorry, I cannot find your order."},
            {"prompt": "What is the capital of France?", "response": "Paris is the capital of France."},
            {"prompt": "How many days in a leap year?", "response": "A leap year has 366 days."},
            {"prompt": "Who wrote Hamlet?", "response": "William Shakespeare wrote Hamlet."},
        ],
    }


def per_evaluator(server) -> dict[str, dict]:
    """The server's reported usage grouped by which judge sent it (read from each request's prompt)."""
    out: dict[str, dict] = {}
    for request in server.requests:
        text = json.dumps(request["body"]["messages"])
        name = (
            "consistency_check"
            if "contradictions" in text
            else "professional_tone"
            if "tone" in text.lower()
            else "apology"
            if "apolog" in text.lower()
            else "Relevance"
        )
        usage = request.get("usage") or {}
        spent = out.setdefault(name, {"requests": 0, "prompt": 0, "completion": 0})
        spent["requests"] += 1
        spent["prompt"] += usage.get("prompt_tokens", 0)
        spent["completion"] += usage.get("completion_tokens", 0)
    return out


def test_calls_and_tokens_are_what_the_server_saw_for_builtin_and_prompty_judges(project, model_server):
    install(project)
    model_server.script = answers
    scored = evalkit.evaluate(
        evalkit.load(document()), model_config=config(model_server), cache=False, progress=False
    )
    assert scored.filter(like="_error").isna().all().all(), scored.filter(like="_error").to_dict("records")
    judge = scored.attrs["evalkit"]["judge"]
    # 4 rows: Relevance 4, professional_tone 4, consistency_check 4 x 5 samples, apology 4.
    assert model_server.request_count == judge["calls"] == 4 + 4 + 20 + 4
    reported = model_server.tokens_reported
    assert reported["prompt"] > 1000
    assert (judge["prompt_tokens"], judge["completion_tokens"]) == (
        reported["prompt"],
        reported["completion"],
    )
    seen = per_evaluator(model_server)
    for name in ("Relevance", "professional_tone", "consistency_check", "apology"):
        assert judge["tokens"][name] == {
            "prompt": seen[name]["prompt"],
            "completion": seen[name]["completion"],
        }
        assert judge["tokens"][name]["prompt"] > 0, name


def test_retries_are_calls_and_a_cached_rerun_makes_none(project, model_server, tmp_path):
    install(project)
    model_server.script = answers
    model_server.fail_next(3, status=500, message="upstream overloaded")
    model_server.fail_next(2, status=429, retry_after=0, message="slow down")
    cache = JudgeCache(tmp_path / "cache.sqlite3")
    run = {"model_config": config(model_server), "cache": cache, "progress": False, "judge_attempts": 6}
    scored = evalkit.evaluate(evalkit.load(document(samples=2)), **run)
    assert scored.filter(like="_error").isna().all().all(), scored.filter(like="_error").to_dict("records")
    judge = scored.attrs["evalkit"]["judge"]
    assert model_server.request_count == judge["calls"] == 4 + 4 + 8 + 4 + 5  # five failed requests retried
    assert judge["prompt_tokens"] == model_server.tokens_reported["prompt"]
    again = evalkit.evaluate(evalkit.load(document(samples=2)), **run).attrs["evalkit"]["judge"]
    assert again["calls"] == 0 and again["prompt_tokens"] == 0 and again["cache_hits"] == 16
    assert model_server.request_count == 25


def test_a_refused_answer_still_counts_its_request_and_tokens(project, model_server):
    shutil.copytree(SHIPPED / "professional_tone", project.custom / "professional_tone")
    model_server.script = lambda request: {"score": 3.5, "reason": "between"}
    doc = document()
    doc["default_evaluators"] = {"Relevance": {}, "professional_tone": {}}
    scored = evalkit.evaluate(
        evalkit.load(doc), model_config=config(model_server), cache=False, progress=False
    )
    assert (scored["relevance_code"] == "judgeOutputUnparseable").all()
    assert (scored["professional_tone_code"] == "invalidEvaluatorResult").all()
    judge = scored.attrs["evalkit"]["judge"]
    assert judge["calls"] == model_server.request_count == 8
    assert judge["prompt_tokens"] == model_server.tokens_reported["prompt"] > 0


def test_span_judges_count_every_request_and_token(model_server):
    judges = SpanJudges(config(model_server), cache=False)
    model_server.fail_next(2, status=503, message="busy")
    results = evaluate_spans(SPANS, ["Builtin.Helpfulness", "Builtin.GoalSuccessRate"], judges=judges)
    assert results and not [r for r in results if r.get("errorCode")], results
    assert judges.pool.usage.requests == model_server.request_count == len(results) + 2
    spent = judges.pool.usage.by_evaluator
    assert sum(s.prompt for s in spent.values()) == model_server.tokens_reported["prompt"]
    assert judges.tokens == model_server.tokens_reported
    model_server.script = lambda request: '{"explanation": "x", "label": "Off The Scale"}'
    refused = evaluate_spans(SPANS, ["Builtin.Helpfulness"], judges=judges)
    assert {r["errorCode"] for r in refused} == {"judgeOutputOffScale"}
    assert judges.tokens == model_server.tokens_reported  # refused answers were billed: counted
