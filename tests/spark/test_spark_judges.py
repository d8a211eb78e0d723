"""LLM judges on the executors, through evalkit.testing.ModelServer: same verdicts as the pandas engine, the
key only in the workers' environment, 429 back-off and the judge cache working per executor."""

from __future__ import annotations

import logging

from conftest import CUSTOM
from test_spark_batch import assert_same_results

import evalkit
from evalkit import spark as es
from evalkit.spark.batch import plan_evaluation

SECRET = "sk-test-SPARK-SECRET-7731"


def document(n: int = 8) -> dict:
    return {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"Relevance": {}, "Coherence": {}, "professional_tone": {}, "ExactMatch": {}},
        "items": [
            {
                "prompt": f"How many vacation days do employees get in year {i}?",
                "expected_response": "Employees get 20 vacation days per year.",
                "response": "Employees get 20 vacation days per year."
                if i % 2
                else "The cafeteria opens at noon.",
            }
            for i in range(n)
        ],
    }


def python_functions(sdf) -> list:
    """The Python functions of the mapInPandas nodes of ``sdf``'s plan (JVM objects)."""
    found = []

    def walk(node):
        if "MapInPandas" in node.getClass().getName():
            found.append(node.functionExpr().func())
        children = node.children()
        for index in range(children.size()):
            walk(children.apply(index))

    walk(sdf._jdf.queryExecution().analyzed())
    return found


def test_judges_on_executors_match_the_pandas_engine_and_keep_the_key_out(
    spark, model_server, tmp_path, caplog
):
    model_server.require_key = SECRET  # a call without the key would be a 401 and an error result
    config = {"base_url": model_server.openai_base_url, "model": "judge", "api_key": SECRET}
    expected = evalkit.evaluate(evalkit.load(document()), model_config=config, cache=False, custom_dir=CUSTOM)
    pandas_calls = model_server.request_count
    assert pandas_calls == 24 and set(expected["relevance_result"]) == {"pass", "fail"}

    model_server.fail_next(3, status=429, retry_after=0.05)  # back-off on the executors, then answers
    cache = tmp_path / "shared-judge-cache.sqlite3"
    # evalkit's own debug log, everything else at INFO (py4j's DEBUG log is a wire dump of every value sent
    # to the JVM, spark.executorEnv values included, and is never on in production)
    with caplog.at_level(logging.INFO), caplog.at_level(logging.DEBUG, logger="evalkit"):
        run = plan_evaluation(  # professional_tone: a custom .prompty judge, shipped with the job
            es.load(spark, document()), model_config=config, cache=cache, concurrency=4, custom_dir=CUSTOM
        )
        scored = run.frame
        got = es.to_pandas(scored)
    assert_same_results(expected, got)
    assert model_server.request_count - pandas_calls == 24 + 3
    assert run.worker_concurrency == 2  # concurrency=4 per executor, local[2]: 2 workers of 2 calls each
    judge = run.judge_summary()  # the executors' counters, summed by an accumulator
    assert judge["calls"] >= 24 and judge["model_name"] == "judge"
    assert set(judge["prompt_hashes"]) == {"Relevance", "Coherence", "professional_tone"}
    assert judge["tokens"]["Relevance"]["prompt"] > 0 and judge["prompt_tokens"] > 0
    assert SECRET not in str(judge)

    plan = scored._jdf.queryExecution().toString() + scored._jdf.queryExecution().executedPlan().toString()
    assert SECRET not in plan
    assert SECRET not in caplog.text
    assert SECRET not in got.astype(str).to_string()
    assert SECRET not in str(scored.schema.jsonValue())
    functions = python_functions(scored)
    assert functions, "no mapInPandas function in the plan"
    for function in functions:  # the pickled closure has no key; the workers' environment has it
        assert SECRET.encode() not in bytes(function.command().unsafeArray())
        assert function.envVars().get("EVALKIT_JUDGE_SECRET") == SECRET
    assert SECRET not in spark.sparkContext.environment.values()  # restored after the job's functions

    # A second run on the same cache file makes no model call: the executors found every judgment there.
    before = model_server.request_count
    again = es.to_pandas(
        es.evaluate(es.load(spark, document()), model_config=config, cache=cache, custom_dir=CUSTOM)
    )
    assert model_server.request_count == before
    assert_same_results(expected, again)
