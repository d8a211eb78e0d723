"""Pairwise judging (issue 17 item 2): ``evalkit.pairwise`` and ``evalkit compare A B --pairwise`` against
``ModelServer`` (its pairwise heuristic, ``evalkit.testing.panel``) through the real openai client, on the
bundled demo's prompts and responses (run A) and a copy with some answers changed (run B).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.analysis.statistics import binomial_interval, mcnemar_p
from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.judges.cache import JudgeCache

REPO = Path(__file__).resolve().parents[2]
#: B's answers where they differ from the demo's (A's), by item: 0 worse, 2 and 5 better, 1 with markup.
CHANGED = {
    0: "I do not know.",
    1: "<script>alert('x')</script> Contoso matches the first 5% of your salary in the 401(k).",
    2: "Use form HR-12 to update your direct deposit.",
    5: "The international travel expense policy: find it on SharePoint; trips need VP pre-approval.",
}


def _runs() -> tuple:
    a = evalkit.load(REPO / "data" / "demo.json")
    b = a.copy()
    b["response"] = [
        CHANGED.get(i, r) if pd.isna(t) else r for i, t, r in zip(b["item"], b["turn"], b["response"])
    ]
    return a, b


@pytest.fixture
def judge(model_server):
    return {"base_url": model_server.openai_base_url, "model": "judge", "api_key": "k"}


def _shown_first(request) -> str:
    text = request["body"]["messages"][-1]["content"]
    return text.split("# Response A", 1)[1].split("# Response B", 1)[0].strip()


def test_both_orders_decide_win_tie_loss_with_the_exact_interval(model_server, judge, tmp_path):
    a, b = _runs()
    result = evalkit.pairwise(a, b, model_config=judge, cache=JudgeCache(tmp_path / "c.sqlite"))
    rows = result.rows[result.rows["turn"].isna()].set_index("item")
    assert (
        rows.loc[0, "outcome"] == "loss"
        and rows.loc[2, "outcome"] == "win"
        and rows.loc[5, "outcome"] == "win"
    )
    unchanged = rows.drop(index=[0, 1, 2, 5])
    judged = unchanged[unchanged["error"].isna()]
    assert (judged["outcome"] == "tie").all() and judged["consistent"].all()  # the same answer twice
    assert rows.loc[8, "outcome"] == "error" and "no response" in rows.loc[8, "error"]
    # every judged row was asked twice, once with each run's response shown first
    n = int(result.rows["error"].isna().sum())
    assert model_server.request_count == 2 * n == result.judge["calls"]
    first = [_shown_first(r) for r in model_server.requests]
    assert CHANGED[2] in first and a["response"][2] in first
    counts = result.counts
    assert (counts["win"], counts["loss"], counts["error"]) == (3, 1, 1)
    assert result.interval == binomial_interval(3, 4, 0.95)
    assert result.p_value == mcnemar_p(1, 3) == 0.625
    assert "no significant difference" in result.verdict
    assert set(result.deciding["item"]) == {0, 1, 2, 5}
    assert result.judge["prompt_tokens"] == model_server.tokens_reported["prompt"] > 0

    model_server.reset()  # a re-run is free: both orders of every row are cached
    again = evalkit.pairwise(a, b, model_config=judge, cache=JudgeCache(tmp_path / "c.sqlite"))
    assert model_server.request_count == 0 and again.counts == counts and again.judge["cache_hits"] == 2 * n


def test_a_judge_that_always_prefers_the_first_response_yields_only_ties(model_server, judge):
    a, b = _runs()
    result = evalkit.pairwise(a, b, judge="judge~first", cache=False, model_config=judge)
    judged = result.rows[result.rows["error"].isna()]
    assert (judged["outcome"] == "tie").all() and result.counts["inconsistent"] == len(judged) > 0
    assert set(judged["a_first"]) == {"A"} and set(judged["b_first"]) == {"B"}
    assert {r["model"] for r in model_server.requests} == {"judge~first"}
    assert result.counts["win"] == result.counts["loss"] == 0
    assert result.verdict == "no row was decided: the judge cannot tell A and B apart"


CUSTOM = """---
name: terse pairwise judge
model:
  api: chat
  parameters:
    temperature: 0
    response_format: {type: json_object}
inputs:
  query: {type: string}
  response_a: {type: string}
  response_b: {type: string}
---
system:
Pick the better answer. Reply as JSON: {"winner": "A" | "B" | "tie", "reason": "..."}.
user:
Question: {{query}}
Response A: {{response_a}}
Response B: {{response_b}}
"""


def test_a_custom_pairwise_prompty(model_server, judge, tmp_path):
    path = tmp_path / "terse.prompty"
    path.write_text(CUSTOM)
    a, b = _runs()
    result = evalkit.pairwise(a, b, judge=path, model_config=judge, cache=False)
    assert result.judge["prompt"] == "terse.prompty" and result.judge["identity"].startswith(
        "pairwise:custom:terse@"
    )
    assert all(
        "Pick the better answer." in r["body"]["messages"][0]["content"] for r in model_server.requests
    )
    assert result.rows[result.rows["turn"].isna()].set_index("item").loc[2, "outcome"] == "win"
    bad = tmp_path / "bad.prompty"
    bad.write_text(CUSTOM.replace("  response_b: {type: string}\n", ""))
    with pytest.raises(EvalkitError, match=r"bad.prompty does not declare the input\(s\) response_b"):
        evalkit.pairwise(a, b, judge=bad, model_config=judge, cache=False)


@pytest.mark.parametrize(
    "answer",
    ['{"winner": "C", "reason": "?"}', '{"winner": "A", "winner": "B"}', "B is better", '{"winner": true}'],
)
def test_an_unreadable_verdict_is_an_error_row_not_a_vote(model_server, judge, answer):
    a, b = _runs()
    model_server.script = lambda request: answer
    result = evalkit.pairwise(a.head(2), b.head(2), model_config=judge, cache=False, judge_attempts=1)
    assert result.counts["error"] == 2 and result.counts["win"] == result.counts["tie"] == 0
    assert result.rows["error"].str.contains("could not parse").all()


def test_without_a_judge_model_the_error_says_what_to_set():
    a, b = _runs()
    with pytest.raises(evalkit.EnvironmentConfigError, match="Pairwise judging needs a judge model"):
        evalkit.pairwise(a, b)


def _saved_runs(root: Path) -> tuple[Path, Path]:
    a, b = _runs()
    custom = REPO / "custom-evaluators"
    evalkit.save_results(evalkit.evaluate(a, custom_dir=custom, progress=False), root / "a")
    evalkit.save_results(evalkit.evaluate(b, custom_dir=custom, progress=False), root / "b")
    return root / "a", root / "b"


def test_compare_pairwise_prints_the_verdict_and_the_page_escapes_agent_text(
    model_server, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    run_a, run_b = _saved_runs(tmp_path)
    out = tmp_path / "compare.html"
    assert (
        main(["compare", str(run_a), str(run_b), "--pairwise", "--out", str(out), "--resamples", "50"]) == 0
    )
    printed = capsys.readouterr().out
    assert (
        "Pairwise b (B) vs a (A): B wins 3, ties 7 (0 where the two orders disagreed), loses 1, not judged 1"
        in printed
    )
    assert "95% interval [" in printed and "(exact, Clopper-Pearson)" in printed
    assert "B's win share of decided rows: 75.0%, 95% interval [" in printed  # one decimal, as every rate
    assert re.search(
        r"^Judge: evalkit pairwise prompt on judge: 22 calls, 0 from cache, [\d,]+ prompt \+ [\d,]+ completion "
        r"tokens, price not set$",
        printed,
        re.M,
    ), printed
    assert "B won: #1, #2, #5" in printed and "B lost: #0" in printed
    page = out.read_text()
    assert 'id="pairwise"' in page and "&lt;script&gt;alert" in page and "<script>alert" not in page
    assert main(["compare", str(run_a), str(run_b), "--judge", "x"]) == 2
    assert "--judge is for --pairwise" in capsys.readouterr().err


def test_the_notebook_view_escapes_and_lists_the_deciding_rows(model_server, judge):
    a, b = _runs()
    html = evalkit.pairwise(a, b, model_config=judge, cache=False)._repr_html_()
    assert "B won (3)" in html and "B lost (1)" in html
    assert "&lt;script&gt;" in html and "<script>alert" not in html


def test_a_shipped_single_response_prompty_is_refused_with_the_inputs_it_lacks(judge):
    """Real material: azure-ai-evaluation's own Relevance .prompty (one response) is no pairwise judge."""
    from evalkit.judges.prompty import BUILTIN_PROMPTS, builtin_prompt

    shipped = builtin_prompt("Relevance").path
    assert shipped.as_posix().endswith(BUILTIN_PROMPTS["Relevance"])
    a, b = _runs()
    with pytest.raises(
        EvalkitError, match=r"relevance.prompty does not declare the input\(s\) response_a, response_b"
    ):
        evalkit.pairwise(a, b, judge=shipped, model_config=judge, cache=False)
