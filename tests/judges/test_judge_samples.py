"""Noise where the verdict is made (issue 17 item 5): ``--samples K`` judges each row K times (each its own
cache entry), reports pass share and flips per item, and decides by ``--pass-rule`` (``all`` by default,
``majority``), which is what ``--fail-under`` counts. Against ``ModelServer`` through azure-ai-evaluation's
Relevance prompt and evalkit's shipped ``professional_tone`` ``.prompty`` judge (promptflow).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import jsonschema
import pytest

import evalkit
from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.judges.cache import JudgeCache

REPO = Path(__file__).resolve().parents[2]
DOC = {
    "schemaVersion": "1.11.0",
    "default_evaluators": {"Relevance": {}, "professional_tone": {}},
    "items": [
        {"prompt": "Question steady?", "response": "A steady answer."},
        {"prompt": "Question flaky?", "response": "A flaky answer."},
    ],
}
#: The scores a judge gives the flaky item, judgment after judgment (the steady one always gets 5).
FLAKY = [5, 1, 5, 5]


class Judge:
    """A judge whose answers for the flaky item follow ``FLAKY``, per evaluator, in the order they are asked."""

    def __init__(self):
        self.asked: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, request) -> dict:
        text = json.dumps(request["body"]["messages"])
        if "flaky" not in text:
            return {"score": 5, "reason": "steady"}
        which = "tone" if "tone" in text.lower() else "relevance"
        with self.lock:
            n = self.asked.get(which, 0)
            self.asked[which] = n + 1
        return {"score": FLAKY[n % len(FLAKY)], "reason": f"judgment {n}"}


@pytest.fixture
def judged(project, model_server, monkeypatch):
    shutil.copytree(REPO / "custom-evaluators" / "professional_tone", project.custom / "professional_tone")
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    model_server.script = Judge()
    doc = project.root / "doc.json"
    doc.write_text(json.dumps(DOC))
    return doc


def test_samples_report_pass_share_flips_and_gate_by_the_pass_rule(
    judged, model_server, project, capsys, upstream_schema
):
    out = project.root / "all"
    code = main(
        ["run", str(judged), "--out", str(out), "--samples", "3", "--fail-under", "1", "--concurrency", "1"]
    )
    printed = capsys.readouterr().out
    assert code == 1, printed  # the flaky item fails under the default rule (all), so the gate fails
    assert (
        "Flaky: 1 of 2 rows flipped between pass and fail over 3 samples (pass rule: all): Relevance 1, "
        "professional_tone 1\n" in printed
    )
    assert model_server.request_count == 2 * 2 * 3  # rows x judges x samples
    document = json.loads((out / "results.json").read_text())
    jsonschema.Draft202012Validator(upstream_schema).validate(document)  # the judgments' lists included
    items = document["items"]
    steady, flaky = items[0]["scores"], items[1]["scores"]
    assert steady["relevance"]["passShare"] == 1.0 and steady["relevance"]["flipped"] is False
    for key in ("relevance", "professional_tone"):
        entry = flaky[key]
        assert entry["scores"] == [5.0, 1.0, 5.0] and entry["samples"] == 3, entry
        assert entry["passShare"] == round(2 / 3, 6) and entry["flipped"] is True
        assert entry["result"] == "fail" and entry["passRule"] == "all"
        assert entry["verdicts"] == ["pass", "fail", "pass"]  # each judgment's, beside its score
        assert len(entry["reasons"]) == 3 and all(isinstance(r, str) for r in entry["reasons"])
        assert entry["score" if key == "relevance" else key] == 5.0  # the median judgment's score
    assert "1 flaky row over 3 samples" in (out / "report.html").read_text()

    majority = project.root / "majority"
    code = main(
        [
            "run",
            str(judged),
            "--out",
            str(majority),
            "--samples",
            "3",
            "--pass-rule",
            "majority",
            "--fail-under",
            "1",
        ]
    )
    assert code == 0, capsys.readouterr().out  # 2 of 3 passed: a majority; every judgment came from the cache
    flaky = json.loads((majority / "results.json").read_text())["items"][1]["scores"]
    assert flaky["relevance"]["result"] == "pass" and flaky["relevance"]["passRule"] == "majority"
    assert model_server.request_count == 12


def test_samples_in_python_are_independent_cache_entries(project, model_server):
    shutil.copytree(REPO / "custom-evaluators" / "professional_tone", project.custom / "professional_tone")
    model_server.script = Judge()
    config = {"base_url": model_server.openai_base_url, "model": "judge", "api_key": "k"}
    cache = JudgeCache(project.root / "cache.sqlite3")
    run = {"model_config": config, "cache": cache, "progress": False, "concurrency": 1}
    plain = evalkit.evaluate(evalkit.load(DOC), **run)
    assert model_server.request_count == 4 and "samples" not in plain.attrs["evalkit"]
    four = evalkit.evaluate(evalkit.load(DOC), samples=4, pass_rule="majority", **run)
    assert model_server.request_count == 4 + 4 * 3  # sample 0 is the plain run's judgment, from the cache
    judge = four.attrs["evalkit"]["judge"]
    assert judge["calls"] == 12 and judge["cache_hits"] == 4
    details = four.loc[1, "relevance_details"]
    assert details["scores"] == [5.0, 1.0, 5.0, 5.0] and details["passShare"] == 0.75
    assert four.loc[1, "relevance_result"] == "pass" and four.attrs["evalkit"]["samples"]["flaky_rows"] == 1
    flaky = evalkit.flaky_items(four)
    assert flaky[["item", "evaluator", "result", "pass_share"]].values.tolist() == [
        [1, "Relevance", "pass", 0.75],
        [1, "professional_tone", "pass", 0.75],
    ]
    assert flaky["scores"].tolist() == [[5.0, 1.0, 5.0, 5.0]] * 2 and set(flaky["pass_rule"]) == {"majority"}
    assert evalkit.flaky_items(plain).empty and list(evalkit.flaky_items(plain).columns)[:3] == [
        "item",
        "turn",
        "prompt",
    ]
    with pytest.raises(EvalkitError, match="pass_rule='most'"):
        evalkit.evaluate(evalkit.load(DOC), samples=2, pass_rule="most", **run)
    with pytest.raises(EvalkitError, match="samples=0"):
        evalkit.evaluate(evalkit.load(DOC), samples=0, **run)
    with pytest.raises(EvalkitError, match=r"samples=101: .* a whole number from 1 to 100 \(each sample"):
        evalkit.evaluate(evalkit.load(DOC), samples=101, **run)


def test_runs_compare_and_a_reread_run_know_how_the_verdicts_were_made(judged, project, capsys):
    from evalkit.analysis.history import runs
    from evalkit.documents.run_reader import read_run

    results = project.root / "results"
    assert main(["run", str(judged), "--out", str(results / "once"), "--concurrency", "1"]) == 0
    assert main(["run", str(judged), "--out", str(results / "three"), "--samples", "3"]) == 0
    capsys.readouterr()
    reread = read_run(results / "three" / "results.json")
    assert reread.attrs["evalkit"]["samples"] == {"k": 3, "pass_rule": "all", "flaky_rows": 1}
    from evalkit.reporting.notebook_report.run_facts import header

    assert "1 flaky row over 3 samples (pass rule all)" in header(reread).html  # evalkit report's facts line
    assert "samples" not in header(read_run(results / "once" / "results.json")).html
    table = runs(results)
    assert table["samples"].tolist() == [1, 3] and table["pass_rule"].tolist() == [None, "all"]
    assert table["flaky_rows"].isna().tolist() == [True, False] and table["flaky_rows"].iloc[1] == 1

    assert main(["runs", str(results)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-2:] == ["samples", "flaky_rows"]
    assert lines[1].split()[-1] == "1" and lines[2].split()[-3:] == ["3", "(all)", "1"]

    main(["compare", str(results / "once"), str(results / "three")])
    out = capsys.readouterr().err
    assert (
        "Warning: Verdicts made differently. once judged each row once; three judged each row 3 times, pass rule "
        "all, 1 row flipped." in out
    )
    changed = evalkit.compare(read_run(results / "once"), read_run(results / "three")).regressed
    assert changed["item"].tolist() == [1]  # the flaky item: passed judged once, fails by the rule all
    assert (
        "Relevance: pass \u2192 fail (5 \u2192 5) [B flaky: 2 of 3 judgments passed]" in changed["changes"][0]
    )
    main(["compare", str(results / "three"), str(results / "three")])
    assert "Verdicts made differently" not in capsys.readouterr().err


def test_samples_without_an_llm_judge_warn_and_record_nothing(project, capsys):
    from evalkit.documents.versions import EvalkitWarning

    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"prompt": "p", "response": "yes", "expected_response": "yes"}],
    }
    with pytest.warns(EvalkitWarning, match="3 samples asked for, but no LLM judge is in this run"):
        scored = evalkit.evaluate(evalkit.load(doc), samples=3, progress=False)
    assert "samples" not in scored.attrs["evalkit"]
    (project.root / "doc.json").write_text(json.dumps(doc))
    assert main(["run", "doc.json", "--out", "out", "--samples", "3"]) == 0
    out, err = capsys.readouterr()
    assert "Flaky:" not in out and "Warning: 3 samples asked for, but no LLM judge" in err
