"""evalkit.spark.load / evaluate: the pandas engine per partition, identical results row for row."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pandas as pd
import pytest
from conftest import CUSTOM, DEMO, REPO

import evalkit
from evalkit import spark as es
from evalkit.errors import DocumentError, EnvironmentConfigError, EvaluatorConfigError


def same(a, b) -> bool:
    """Equal values, NaN equal to NaN (and to None: both are 'no value' in an object column)."""

    def missing(v) -> bool:
        return v is None or (isinstance(v, float) and math.isnan(v))

    if missing(a) or missing(b):
        return missing(a) and missing(b)
    return type(a) is type(b) and a == b


def assert_same_results(expected: pd.DataFrame, got: pd.DataFrame) -> None:
    """Every result column of the pandas engine, row for row, with the same values and types."""
    expected = expected.sort_values(["item", "turn"], na_position="first").reset_index(drop=True)
    got = got.reset_index(drop=True)
    assert list(got["item"]) == list(expected["item"])
    assert list(got["turn"].fillna(-1)) == list(expected["turn"].fillna(-1))
    specs = expected.attrs["evalkit"]["scored"]
    assert [s["key"] for s in got.attrs["evalkit"]["scored"]] == [s["key"] for s in specs]
    columns = ["status", "error_code", "error_message"]
    for spec in specs:
        key = spec["key"]
        columns += [c for c in expected.columns if c == key or c.startswith(key + "_")]
        columns = [c for c in columns if c != "citations"]
    for column in columns:
        wrong = [
            (row, a, b)
            for row, (a, b) in enumerate(zip(expected[column].tolist(), got[column].tolist()))
            if not same(_plain(a), _plain(b))
        ]
        assert not wrong, f"{column}: {wrong[:3]}"


def _plain(value):
    import numpy as np

    return value.item() if isinstance(value, np.generic) else value


def test_import_evalkit_never_imports_pyspark():
    code = (
        "import sys, evalkit, evalkit.spark\n"
        "df = evalkit.evaluate(evalkit.load('data/demo.json'))\n"
        "evalkit.summary(df)\n"
        "from evalkit.cli import build_parser; build_parser()\n"
        "assert 'pyspark' not in sys.modules, 'pyspark imported'\n"
        "assert 'py4j' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_a_missing_pyspark_names_the_pip_command(monkeypatch):
    from evalkit.spark.requirements import require_pyspark

    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark now raises ImportError
    with pytest.raises(EnvironmentConfigError, match=r"pip install 'evalkit\[spark\]'") as info:
        require_pyspark()
    assert info.value.exit_code == 3


def test_load_gives_the_case_table_of_evalkit_load(spark):
    sdf = es.load(spark, DEMO)
    table = evalkit.load(DEMO)
    rows = sdf.orderBy("item", "turn").collect()
    assert len(rows) == len(table) == 12
    assert sdf.columns[:7] == ["item", "turn", "thread", "prompt", "expected_response", "context", "response"]
    for row, (_, expected) in zip(rows, table.iterrows()):
        assert row["item"] == expected["item"]
        assert row["turn"] == (None if expected["turn"] is pd.NA else expected["turn"])
        assert row["prompt"] == expected["prompt"] and row["response"] == expected["response"]
        assert json.loads(row["citations"]) == expected["citations"]
        assert json.loads(row["evaluators"]) == expected["evaluators"]
        # an item the columns rebuild keeps no dict (None, read back as {}: written the same)
        assert (None if row["source"] is None else json.loads(row["source"])) == expected["source"]
    described = json.loads(sdf.schema["item"].metadata["evalkit"])  # JSON text: a map would lose key order
    assert described["document"]["metadata"]["name"].startswith("Contoso")


def test_demo_document_gives_the_pandas_engine_results(spark, monkeypatch):
    monkeypatch.chdir(REPO)  # the demo's custom evaluators are found in ./custom-evaluators
    expected = evalkit.evaluate(evalkit.load(DEMO))
    got = es.to_pandas(es.evaluate(es.load(spark, DEMO)))
    assert_same_results(expected, got)
    assert list(got["status"][:9]) == [
        "pass",
        "fail",
        "fail",
        "pass",
        "pass",
        "fail",
        "fail",
        "partial",
        "error",
    ]
    # the documents written back are the same too: scores, statuses, thread summaries
    got.attrs["evalkit"]["document"] = expected.attrs["evalkit"]["document"]
    assert evalkit.to_document(got) == evalkit.to_document(expected)


def test_generated_20000_items_with_threads_give_the_pandas_engine_results(spark, generated_path):
    table = evalkit.load(generated_path)
    assert table["item"].nunique() == 20_000 and table["turn"].notna().sum() > 5_000
    expected = evalkit.evaluate(table, custom_dir=CUSTOM)
    got = es.to_pandas(es.evaluate(es.load(spark, generated_path), custom_dir=CUSTOM))
    assert_same_results(expected, got)
    assert set(got["status"]) == {"pass", "fail", "partial", "error"}
    got.attrs["evalkit"]["document"] = expected.attrs["evalkit"]["document"]
    assert evalkit.to_document(got)["items"] == evalkit.to_document(expected)["items"]


def test_single_turn_items_are_not_shuffled_and_threads_are(spark):
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": [
        {"prompt": f"p{i}", "response": "a", "expected_response": "a"} for i in range(5)
    ]}  # fmt: skip
    flat = es.evaluate(es.load(spark, doc))
    assert "Exchange" not in flat._jdf.queryExecution().executedPlan().toString()
    doc["items"].append({"turns": [{"prompt": "t0", "response": "a", "expected_response": "a"}]})
    threaded = es.evaluate(es.load(spark, doc))
    assert "Exchange hashpartitioning(item" in threaded._jdf.queryExecution().executedPlan().toString()


def test_a_thread_split_across_arrow_batches_reaches_one_engine_call_in_order():
    from evalkit.spark.executor import score_partition
    from evalkit.spark.frames import result_fields, spark_frame

    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": [
        {"prompt": "single", "response": "a", "expected_response": "a"},
        {"turns": [{"prompt": f"t{t}", "response": "a", "expected_response": "b"} for t in range(5)]},
        {"prompt": "last", "response": "a", "expected_response": "a"},
    ]}  # fmt: skip
    rows = spark_frame(evalkit.load(doc))
    cuts = [rows.iloc[:3], rows.iloc[3:4], rows.iloc[4:]]  # the thread (rows 1-5) is cut twice
    specs = [{"name": "ExactMatch", "key": "exactMatch", "score_field": "match", "has_threshold": False}]
    settings = {
        "token": "t", "custom": {"path": str(CUSTOM)}, "judge": None, "cache": False, "concurrency": 2,
        "judge_timeout": 5.0, "evaluators": None, "fields": result_fields(specs), "inputs": list(rows.columns),
        "passthrough": list(rows.columns), "threads": True,
    }  # fmt: skip
    calls = list(score_partition(settings, iter(cuts)))  # one engine call per re-cut frame
    assert [list(c["item"]) for c in calls] == [[0], [1, 1, 1, 1, 1, 2]]
    assert list(calls[1]["turn"][:5]) == [0, 1, 2, 3, 4]
    assert list(calls[1]["status"]) == ["fail"] * 5 + ["pass"]


def test_parquet_case_table_with_nested_columns(spark, tmp_path):
    """A table that is not a document: nested citations as arrays of structs, no turn column."""
    rows = [
        (1, "q1", "Paris [1]", "Paris [1]", [{"index": 1, "text": "t"}], '{"ExactMatch": {}, "Citations": {"citation_format": "bracket"}}'),
        (2, "q2", None, "x", [], '{"ExactMatch": {}}'),
    ]  # fmt: skip
    schema = "item long, prompt string, response string, expected_response string, "
    schema += "citations array<struct<index:int,text:string>>, evaluators string"
    spark.createDataFrame(rows, schema).write.parquet(str(tmp_path / "cases.parquet"))
    got = es.to_pandas(es.evaluate(spark.read.parquet(str(tmp_path / "cases.parquet"))))
    assert list(got["status"]) == ["pass", "error"]
    assert got["exactMatch"].tolist()[0] is True and got["citations_score"].tolist()[0] == 1.0
    assert got["citations"].tolist()[0] == [{"index": 1, "text": "t"}]  # the struct array, as JSON text


def test_configuration_mistakes_stop_before_scoring(spark, tmp_path):
    doc = {"schemaVersion": "1.11.0", "items": [{"prompt": "p", "response": "r", "evaluators": {"nope": {}}}]}
    with pytest.raises(EvaluatorConfigError, match=r"Unknown evaluator 'nope' \(items\[0\]\)"):
        es.evaluate(es.load(spark, doc), custom_dir=tmp_path)
    judged = {"schemaVersion": "1.11.0", "items": [{"prompt": "p", "response": "r"}]}  # Relevance+Coherence
    with pytest.raises(EnvironmentConfigError, match="needs a judge model"):
        es.evaluate(es.load(spark, judged))
    with pytest.raises(DocumentError, match="'response'"):
        es.evaluate(spark.createDataFrame([("p",)], "prompt string"))


def test_custom_evaluators_are_shipped_by_content_and_reloaded_when_edited(spark, project):
    source = """
        class Longer:
            def __init__(self, *, threshold=1, options=None, **_):
                pass
            def __call__(self, *, response="", **_):
                return {"score": int(len(response) {op} 3), "reason": "length"}
    """
    project.evaluator("longer", source.replace("{op}", ">"))
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"longer": {}},
           "items": [{"prompt": "p", "response": "abcd"}, {"prompt": "p", "response": "ab"}]}  # fmt: skip
    first = es.to_pandas(es.evaluate(es.load(spark, doc)))
    assert list(first["longer_result"]) == ["pass", "fail"]
    project.evaluator("longer", source.replace("{op}", "<"))
    second = es.to_pandas(es.evaluate(es.load(spark, doc)))
    assert list(second["longer_result"]) == ["fail", "pass"]
    shared = es.to_pandas(es.evaluate(es.load(spark, doc), custom_dir=project.custom, ship=False))
    assert list(shared["longer_result"]) == ["fail", "pass"]


def test_engine_reuse_imports_a_custom_evaluator_once_per_process(project):
    """What each executor process relies on: evalkit.engine.evaluate(..., reuse=state) resolves once."""
    log = project.root / "imports.log"
    project.evaluator(
        "counted",
        f"""
        with open({str(log)!r}, "a") as handle:
            handle.write("imported\\n")

        class Counted:
            def __init__(self, *, threshold=1, options=None, **_):
                pass
            def __call__(self, *, response="", **_):
                return {{"score": 1, "reason": "ok"}}
        """,
    )
    table = evalkit.load({"schemaVersion": "1.11.0", "default_evaluators": {"counted": {}},
                          "items": [{"prompt": "p", "response": "r"}]})  # fmt: skip
    state: dict = {}
    for _ in range(3):
        assert list(evalkit.evaluate(table, reuse=state)["status"]) == ["pass"]
    assert log.read_text().count("imported") == 1
    evalkit.evaluate(table)
    evalkit.evaluate(table)
    assert log.read_text().count("imported") == 3  # without reuse: once per call


def test_extra_evaluators_and_adhoc_callables_travel_to_the_executors(spark, monkeypatch):
    monkeypatch.chdir(REPO)
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": [
        {"prompt": "p", "response": "short", "expected_response": "short"},
        {"prompt": "p", "response": "a much longer answer than that", "expected_response": "x"},
    ]}  # fmt: skip

    def short(*, response="", **_):
        return {"score": int(len(response) < 10), "reason": f"{len(response)} characters"}

    extra = {"short": short, "PartialMatch": {"threshold": 0.9}}
    expected = evalkit.evaluate(evalkit.load(doc), evaluators=extra)
    got = es.to_pandas(es.evaluate(es.load(spark, doc), evaluators=extra))
    assert_same_results(expected, got)
    assert list(got["short_result"]) == ["pass", "fail"] and list(got["partialMatch_threshold"]) == [0.9, 0.9]


def test_judge_concurrency_is_per_executor_shared_by_its_workers(spark):
    from evalkit.spark.judge_keys import executor_slots, worker_share

    assert executor_slots(spark) == 2  # local[2]: one executor, two Python workers
    assert [worker_share(spark, n) for n in (1, 2, 8, 9)] == [1, 1, 4, 4]
