"""Juries (issue 17 item 2): several jurors judge one LLM judge's rows and their scores are combined, with
Krippendorff's alpha and the per-row spread. Against ``ModelServer`` (jurors that disagree by model name,
``evalkit.testing.panel``) through azure-ai-evaluation's own Relevance prompt (openai client) and the repository's
``professional_tone`` ``.prompty`` judge (promptflow).
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import krippendorff
import numpy as np
import pytest

import evalkit
from evalkit.cli import main
from evalkit.errors import EvaluatorConfigError
from evalkit.evaluators.jury.alpha import krippendorff_alpha
from evalkit.judges.cache import JudgeCache

REPO = Path(__file__).resolve().parents[2]
JURORS = ["judge", "judge~+1", "judge~-2"]


@pytest.fixture
def judge_env(model_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    return model_server


def _demo():
    """The bundled demo's answered prompts and responses, with no evaluators of their own."""
    table = evalkit.load(REPO / "data" / "demo.json")
    answered = table[table["response"].map(lambda r: isinstance(r, str) and r.strip() != "")]
    return answered[["prompt", "response"]].reset_index(drop=True)


def _heuristic_scores(model_server, cache) -> list[float]:
    """The plain judge's Relevance scores (the juror ``judge``), from a run without a jury."""
    plain = evalkit.evaluate(_demo(), evaluators={"Relevance": {}}, cache=cache)
    return plain["relevance"].tolist()


@pytest.mark.slow
def test_a_jury_of_models_combines_by_median_with_spread_alpha_and_metered_jurors(judge_env, tmp_path):
    cache = JudgeCache(tmp_path / "cache.sqlite")
    base = _heuristic_scores(judge_env, cache)
    judge_env.reset()
    jury = {"Relevance": {"jury": {"jurors": JURORS, "combine": "median"}}}
    scored = evalkit.evaluate(_demo(), evaluators=jury, cache=cache)

    expected = [[b, min(5, b + 1), max(1, b - 2)] for b in base]  # what each juror's model answers
    details = scored["relevance_details"].tolist()
    for row, scores in enumerate(expected):
        assert details[row]["jury"]["scores"] == scores
        assert scored["relevance"][row] == statistics.median_low(scores)
        assert scored["relevance_jury_spread"][row] == max(scores) - min(scores)
        assert scored["relevance_result"][row] == ("pass" if statistics.median_low(scores) >= 3 else "fail")
        votes = ", ".join(f"{j} {s:g}" for j, s in zip(JURORS, scores))
        assert scored["relevance_reason"][row].startswith(f"Jury (median): {votes}; spread ")
    # juror "judge" is the plain run's judge: its judgments are the cached ones; the others' are new entries
    by_model = [r["model"] for r in judge_env.requests]
    assert sorted(set(by_model)) == ["judge~+1", "judge~-2"] and len(by_model) == 2 * len(base)
    meta = scored.attrs["evalkit"]["judge"]
    assert meta["calls"] == judge_env.request_count
    (summary,) = meta["juries"]["Relevance"]
    calls = {j["label"]: (j["calls"], j["cache_hits"]) for j in summary["jurors"]}
    assert calls == {"judge": (0, len(base)), "judge~+1": (len(base), 0), "judge~-2": (len(base), 0)}
    reported = judge_env.tokens_reported
    assert sum(j["prompt_tokens"] for j in summary["jurors"]) == reported["prompt"] > 0
    assert meta["tokens"]["Relevance"]["prompt"] == reported["prompt"]
    matrix = np.array(expected, dtype=float).T
    assert summary["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=matrix), abs=1e-6)
    assert summary["mean_spread"] == pytest.approx(np.mean([max(s) - min(s) for s in expected]), abs=1e-6)

    judge_env.reset()  # a re-run is free: every juror's judgment is in the cache
    again = evalkit.evaluate(_demo(), evaluators=jury, cache=cache)
    assert judge_env.request_count == 0
    assert again["relevance"].tolist() == scored["relevance"].tolist()


def test_mean_and_majority_and_prices_per_juror(judge_env, monkeypatch, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"judge~+1": {"input": 1.0, "output": 2.0}}))
    monkeypatch.setenv("EVALKIT_PRICES", str(prices))
    for rule in ("mean", "majority"):
        jury = {"Relevance": {"jury": {"jurors": JURORS, "combine": rule}}}
        scored = evalkit.evaluate(_demo(), evaluators=jury, cache=False)
        for details, score, result in zip(
            scored["relevance_details"], scored["relevance"], scored["relevance_result"]
        ):
            scores = details["jury"]["scores"]
            if rule == "mean":
                assert score == pytest.approx(sum(scores) / 3) and (result == "pass") == (score >= 3)
            else:
                passed = sum(s >= 3 for s in scores)
                assert (result == "pass") == (passed >= 2)
                assert scores.count(score) == max(scores.count(s) for s in scores)
    (summary,) = scored.attrs["evalkit"]["judge"]["juries"]["Relevance"]
    priced = {j["label"]: j["cost"]["usd"] for j in summary["jurors"]}
    juror = next(j for j in summary["jurors"] if j["label"] == "judge~+1")
    usd = (juror["prompt_tokens"] * 1.0 + juror["completion_tokens"] * 2.0) / 1e6
    assert priced == {"judge": None, "judge~+1": pytest.approx(usd, abs=1e-6), "judge~-2": None}


@pytest.mark.slow
def test_a_jury_of_prompts_with_a_custom_prompty_judge_through_the_cli(judge_env, project, capsys):
    shutil.copytree(REPO / "custom-evaluators" / "professional_tone", project.custom / "professional_tone")
    doc = project.root / "doc.json"
    doc.write_text(
        json.dumps(
            {
                "schemaVersion": "1.11.0",
                "default_evaluators": {},
                "items": [
                    {
                        "prompt": "How do I reset my password?",
                        "response": "Open settings and reset password.",
                    },
                    {"prompt": "Where is the invoice?", "response": "No idea."},
                ],
            }
        )
    )
    entry = {"jury": {"jurors": [{"model": "judge~-1", "label": "strict"}, {"evaluator": "Relevance"}]}}
    out = project.root / "out"
    code = main(["run", str(doc), "--out", str(out), "--evaluator", f"professional_tone={json.dumps(entry)}"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "Jury professional_tone: 2 jurors (median)" in printed
    models = {r["model"] for r in judge_env.requests}
    texts = [json.dumps(r["body"]["messages"]) for r in judge_env.requests]
    assert models == {"judge~-1", "judge"}
    assert sum("professional" in t.lower() for t in texts) == 2  # the .prompty on juror "strict"'s model
    items = json.loads((out / "results.json").read_text())["items"]
    jury = items[0]["scores"]["professional_tone"]["jury"]
    assert jury["jurors"] == ["strict", "Relevance"] and len(jury["scores"]) == 2
    meta = json.loads((out / "results.json").read_text())["metadata"]["extensions"]["dev.evalkit.judge"]
    (summary,) = meta["juries"]["professional_tone"]
    assert [j["evaluator"] for j in summary["jurors"]] == ["professional_tone", "Relevance"]
    assert sum(j["calls"] for j in summary["jurors"]) == judge_env.request_count == 4
    page = (out / "report.html").read_text()
    assert "jury professional_tone: 2 jurors (median), alpha" in page
    assert "Jury (median): strict " in page  # the per-row votes and spread, in the item view's reason


@pytest.mark.parametrize(
    ("jury", "message"),
    [
        (["only-one"], "a jury needs at least two jurors"),
        (
            {"jurors": ["a", "b"], "combine": "vote"},
            "jury combine 'vote' is not one of mean, median, majority",
        ),
        (["a", "a"], "two jurors are both called 'a'"),
        ([{"temperature": 0}, "b"], "juror 1 has unknown key"),
        ([{"base_url": "http://x/v1"}, "b"], "a juror with a base_url needs its model too"),
    ],
)
def test_a_mistaken_jury_stops_the_run_before_any_judging(judge_env, jury, message):
    with pytest.raises(EvaluatorConfigError, match=message):
        evalkit.evaluate(_demo(), evaluators={"Relevance": {"jury": jury}}, cache=False)
    assert judge_env.request_count == 0


@pytest.mark.parametrize("fast_path", [True, False])
def test_the_document_schema_accepts_a_jury_entry(fast_path):
    from evalkit.documents.validation import schema_problems

    entry = {"threshold": 3, "jury": {"jurors": ["a", {"model": "b", "label": "B"}], "combine": "mean"}}
    item = {"prompt": "p", "response": "r", "evaluators": {"tone": {"jury": ["a", "b"]}}}
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"Relevance": entry}, "items": [item]}
    assert schema_problems(doc, fast_path=fast_path) == []
    entry["jury"]["combine"] = "vote"
    item["evaluators"]["tone"]["jury"] = ["a"]
    problems = schema_problems(doc, fast_path=fast_path)
    assert any("default_evaluators.Relevance.jury" in p for p in problems), problems
    assert any("evaluators.tone.jury" in p for p in problems), problems


# Krippendorff's alpha ------------------------------------------------------------------------------------
#: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the worked example: 4 observers x 12
#: units, with missing values; his published values are alpha = 0.743 (nominal) and 0.849 (interval).
NAN = float("nan")
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def test_alpha_reproduces_krippendorffs_worked_example():
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, "nominal"), 3) == 0.743
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, "interval"), 3) == 0.849


@pytest.mark.parametrize("seed", range(5))
def test_alpha_agrees_with_the_krippendorff_package(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(1, 6, size=(3, 30)).astype(float)
    data[rng.random(data.shape) < 0.15] = np.nan
    for level in ("interval", "nominal"):
        ours = krippendorff_alpha(data, level)
        assert ours == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_alpha_is_undefined_without_variation_or_pairs():
    assert krippendorff_alpha([[3, 3, 3], [3, 3, 3]]) is None
    assert krippendorff_alpha([[1, NAN], [NAN, 2]]) is None
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 3]]) == 1.0


def test_the_run_cost_prices_each_juror_at_its_own_model(judge_env, monkeypatch, tmp_path):
    prices = tmp_path / "prices.json"
    table = {"judge": [1.0, 2.0], "judge~+1": [10.0, 20.0], "judge~-2": [0.5, 0.5]}
    prices.write_text(json.dumps({m: {"input": i, "output": o} for m, (i, o) in table.items()}))
    monkeypatch.setenv("EVALKIT_PRICES", str(prices))
    jury = {"Relevance": {"jury": JURORS}}
    judge = evalkit.evaluate(_demo(), evaluators=jury, cache=False).attrs["evalkit"]["judge"]
    (summary,) = judge["juries"]["Relevance"]
    expected = sum(
        (j["prompt_tokens"] * table[j["model"]][0] + j["completion_tokens"] * table[j["model"]][1]) / 1e6
        for j in summary["jurors"]
    )
    assert judge["cost"]["usd"] == pytest.approx(expected, abs=1e-5) and "own models" in judge["cost"]["note"]
    one_price = (judge["prompt_tokens"] * 1.0 + judge["completion_tokens"] * 2.0) / 1e6
    assert judge["cost"]["usd"] != pytest.approx(one_price)  # not every token at the run model's price
    prices.write_text(json.dumps({"judge": {"input": 1.0, "output": 2.0}}))
    judge = evalkit.evaluate(_demo(), evaluators=jury, cache=False).attrs["evalkit"]["judge"]
    assert judge["cost"]["usd"] is None
    assert judge["cost"]["note"] == "price not set for juror model(s) judge~+1, judge~-2"


def test_jurors_on_azure_openai_are_deployments(model_server):
    config = {
        "azure_endpoint": model_server.azure_endpoint,
        "azure_deployment": "judge",
        "api_version": "2024-12-01-preview",
        "api_key": "k",
    }
    jury = {"Relevance": {"jury": ["judge", "judge~+1"]}}
    scored = evalkit.evaluate(_demo().head(3), evaluators=jury, model_config=config, cache=False)
    assert sorted({r["model"] for r in model_server.requests}) == ["judge", "judge~+1"]
    assert all(r["api"] == "azure" for r in model_server.requests)
    for details in scored["relevance_details"]:
        plain, lenient = details["jury"]["scores"]
        assert lenient == min(5, plain + 1)


def test_with_samples_each_juror_judges_each_row_k_times(judge_env):
    table = _demo().head(3)
    scored = evalkit.evaluate(
        table, evaluators={"Relevance": {"jury": ["judge", "judge~+1"]}}, samples=2, cache=False
    )
    assert judge_env.request_count == 3 * 2 * 2  # rows x jurors x samples
    samples = sorted((r["model"], json.dumps(r["body"]["messages"])) for r in judge_env.requests)
    assert len(set(samples)) == 3 * 2  # each (juror, row) asked twice: two sample cache entries
    assert all(d["samples"] == 2 and len(d["jury"]["scores"]) == 2 for d in scored["relevance_details"])
