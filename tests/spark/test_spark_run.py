"""``evalkit run --engine spark``: the pandas engine's files from a document, results.parquet from a Parquet
case table, the same summary, gate and exit codes."""

from __future__ import annotations

import json
import os
import re
import sys

import pandas as pd
from conftest import CUSTOM, DEMO, REPO
from pages import assert_same_page

import evalkit
from evalkit.cli import main as cli


def results_json(path):
    document = json.loads(path.read_text(encoding="utf-8"))
    document["metadata"].pop("evaluatedAt")
    return document


def results_bytes(path) -> bytes:
    """results.json as written, its one timestamp (``metadata.evaluatedAt``) blanked."""
    return re.sub(rb'"evaluatedAt": "[^"]*"', b'"evaluatedAt": ""', path.read_bytes(), count=1)


def assert_same_files(pandas_out, spark_out):
    # byte for byte, key order too (the document root came back from Spark's metadata reordered)
    assert results_bytes(spark_out / "results.json") == results_bytes(pandas_out / "results.json")
    assert (spark_out / "results.csv").read_bytes() == (pandas_out / "results.csv").read_bytes()
    # the same page; a streamed column may be embedded uncompacted where the pandas page compacts it
    assert_same_page(spark_out / "report.html", pandas_out / "report.html")


def test_demo_run_writes_the_files_of_the_pandas_engine(spark, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    assert cli(["run", str(DEMO), "--out", str(tmp_path / "pandas")]) == 0
    expected = capsys.readouterr().out
    assert cli(["run", str(DEMO), "--engine", "spark", "--out", str(tmp_path / "spark")]) == 0
    printed = capsys.readouterr().out
    assert_same_files(tmp_path / "pandas", tmp_path / "spark")
    head = "12 rows: 5 pass, 5 fail, 1 partial, 1 error (pass rate 41.7%)"
    assert printed.startswith(head) and expected.startswith(head)
    evaluator_lines = [line for line in expected.splitlines() if line.startswith("  ")]
    assert evaluator_lines == [line for line in printed.splitlines() if line.startswith("  ")]
    assert f"Parquet: {tmp_path / 'spark' / 'results.parquet'}" in printed
    parquet = pd.read_parquet(tmp_path / "spark" / "results.parquet")
    assert len(parquet) == 12 and list(parquet["status"][:3]) == ["pass", "fail", "fail"]


def test_generated_document_streams_the_same_files_in_small_chunks(
    spark, tmp_path, generated_path, monkeypatch, capsys
):
    """20,000 items with threads; chunks of 777 rows on the driver, so threads straddle chunk ends."""
    monkeypatch.setattr("evalkit.spark.run_files.CHUNK_ROWS", 777)
    out = tmp_path / "spark"
    assert (
        cli(["run", str(generated_path), "--engine", "spark", "--custom-dir", str(CUSTOM), "--out", str(out)])
        == 0
    )
    assert len(list((out / "results.parquet").glob("part-*.parquet"))) >= 2  # several files, read in order
    assert (
        cli(["run", str(generated_path), "--custom-dir", str(CUSTOM), "--out", str(tmp_path / "pandas")]) == 0
    )
    assert_same_files(tmp_path / "pandas", out)
    items = json.loads((out / "results.json").read_text())["items"]
    assert len(items) == 20_000 and all("summary" in item for item in items if "turns" in item)


def test_parquet_case_table_gives_results_parquet_and_the_gate(spark, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    from evalkit.spark.batch import frame_meta, load

    table = tmp_path / "cases.parquet"
    load(spark, DEMO).write.parquet(str(table))
    out = tmp_path / "out"
    assert cli(["run", str(table), "--engine", "spark", "--out", str(out), "--fail-under", "0.4"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("12 rows: 5 pass, 5 fail, 1 partial, 1 error (pass rate 41.7%)")
    assert sorted(p.name for p in out.iterdir()) == ["results.parquet"]
    got = pd.read_parquet(out / "results.parquet").sort_values(["item", "turn"], na_position="first")
    expected = evalkit.evaluate(evalkit.load(DEMO))
    assert list(got["status"]) == list(expected["status"])
    assert list(got["partialMatch"].fillna(-1)) == list(expected["partialMatch"].fillna(-1))
    back = spark.read.parquet(str(out / "results.parquet"))  # the run describes itself in the Parquet schema
    assert [s["key"] for s in frame_meta(back)["scored"]][:2] == [
        "forbidden_terms",
        "answer_length",
    ]
    assert cli(["run", str(table), "--engine", "spark", "--out", str(out), "--fail-under", "50%"]) == 1
    assert "Gate failed: pass rate 41.7% is below --fail-under 50.0%" in capsys.readouterr().err


def test_mistakes_keep_their_exit_codes(spark, tmp_path, capsys):
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"schemaVersion": "1.11.0", "items": [
        {"prompt": "p", "response": "r", "evaluators": {"nope": {}}}]}))  # fmt: skip
    assert (
        cli(
            [
                "run",
                str(unknown),
                "--engine",
                "spark",
                "--custom-dir",
                str(tmp_path),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "Error: Unknown evaluator 'nope' (items[0])" in capsys.readouterr().err
    judged = tmp_path / "judged.json"
    judged.write_text(json.dumps({"schemaVersion": "1.11.0", "items": [{"prompt": "p", "response": "r"}]}))
    assert cli(["run", str(judged), "--engine", "spark", "--out", str(tmp_path / "o")]) == 3
    assert "needs a judge model" in capsys.readouterr().err
    assert (
        cli(["run", str(tmp_path / "missing.parquet"), "--engine", "spark", "--out", str(tmp_path / "o")])
        == 2
    )
    assert "missing.parquet: no such file or folder" in capsys.readouterr().err
    bad = tmp_path / "bad.parquet"
    spark.createDataFrame(
        [(1, "p", "r", "{not json")], "item long, prompt string, response string, evaluators string"
    ).write.parquet(str(bad))
    assert cli(["run", str(bad), "--engine", "spark", "--out", str(tmp_path / "o")]) == 2
    assert "Error: column 'evaluators' must hold JSON text" in capsys.readouterr().err
    assert (
        cli(["run", str(DEMO), "--engine", "spark", "--agent", "x.py:f", "--out", str(tmp_path / "o")]) == 2
    )
    assert cli(["run", str(DEMO), "--master", "local[2]", "--out", str(tmp_path / "o")]) == 2


def test_a_missing_pyspark_is_exit_3_with_the_pip_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    assert cli(["run", str(DEMO), "--engine", "spark", "--out", str(tmp_path)]) == 3
    assert "pip install 'evalkit[spark]'" in capsys.readouterr().err


def test_a_judged_document_records_the_judge_like_the_pandas_engine(
    spark, tmp_path, model_server, monkeypatch, capsys
):
    secret = "sk-test-CLI-SPARK-1234"
    model_server.require_key = secret
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    doc = tmp_path / "judged.json"
    doc.write_text(json.dumps({"schemaVersion": "1.11.0", "default_evaluators": {"Relevance": {}}, "items": [
        {"prompt": f"How many vacation days in year {i}?", "response": "20 vacation days per year."}
        for i in range(4)]}))  # fmt: skip
    args = ["run", str(doc), "--no-cache", "--custom-dir", str(tmp_path)]
    assert cli([*args, "--out", str(tmp_path / "pandas")]) == 0
    capsys.readouterr()
    assert cli([*args, "--engine", "spark", "--out", str(tmp_path / "spark")]) == 0
    printed = capsys.readouterr().out
    assert "Judge: OpenAI-compatible" in printed and "4 calls, 0 from cache" in printed
    assert secret not in printed
    pandas_doc, spark_doc = (results_json(tmp_path / k / "results.json") for k in ("pandas", "spark"))
    assert [i["scores"] for i in spark_doc["items"]] == [i["scores"] for i in pandas_doc["items"]]
    judge = spark_doc["metadata"]["extensions"]["dev.evalkit.judge"]
    expected = pandas_doc["metadata"]["extensions"]["dev.evalkit.judge"]
    for field in ("model", "model_name", "prompt_hashes", "parameters", "calls", "cache_hits", "tokens"):
        assert judge[field] == expected[field], field
    assert secret not in (tmp_path / "spark" / "results.json").read_text()


def test_a_killed_run_leaves_the_old_set_and_the_next_run_cleans_up(spark, tmp_path):
    """Killed once every file is written but before the swap: OUT still holds the previous run's complete set
    (and a file of the user's); the next run replaces the set and removes the killed run's staging folder."""
    import subprocess

    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "results.json").write_text('{"old": true}')
    command = [sys.executable, "-m", "evalkit", "run", str(DEMO), "--engine", "spark", "--out", str(out)]
    env = {**os.environ, "EVALKIT_TEST_KILL_AT": "staged", "PYSPARK_PYTHON": sys.executable}
    killed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "results.json"]
    assert json.loads((out / "results.json").read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.evalkit-")]  # the killed staging
    env.pop("EVALKIT_TEST_KILL_AT")
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == [
        "notes.txt", "report.html", "results.csv", "results.json", "results.parquet",
    ]  # fmt: skip
    assert len(json.loads((out / "results.json").read_text())["items"]) == 10  # 12 rows
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging, moved-aside or spool folder
