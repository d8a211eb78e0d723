"""The judge's cost in dollars from a price table the user sets (issue 17 item 4): ``--price IN/OUT`` or the
``EVALKIT_PRICES`` file (JSON or TOML), shown in the ``Judge:`` line, results.json metadata, the report page
and ``evalkit runs``; a model without a price is "price not set", never $0. The CLI runs in-process against
``ModelServer``, through azure-ai-evaluation's prompts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import EnvironmentConfigError
from evalkit.judges.prices import Price, parse_price, price_for, read_prices

DOC = {
    "schemaVersion": "1.11.0",
    "default_evaluators": {"Relevance": {}},
    "items": [
        {"prompt": "What is the capital of France?", "response": "Paris is the capital of France."},
        {"prompt": "How many days in a leap year?", "response": "A leap year has 366 days."},
    ],
}


@pytest.fixture
def judged(model_server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("EVALKIT_PRICES", raising=False)
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(DOC))
    return doc


def run(doc: Path, out: Path, *extra: str, capsys) -> tuple[int, str, dict]:
    code = main(["run", str(doc), "--out", str(out), "--no-cache", *extra])
    printed = capsys.readouterr()
    judge = {}
    if (out / "results.json").exists():
        judge = json.loads((out / "results.json").read_text())["metadata"]["extensions"]["dev.evalkit.judge"]
    return code, printed.out + printed.err, judge


def test_price_option_file_and_not_set_reach_every_place(judged, model_server, tmp_path, monkeypatch, capsys):
    code, printed, judge = run(judged, tmp_path / "runs" / "a", "--price", "0.15/0.60", capsys=capsys)
    assert code == 0, printed
    prompt, completion = model_server.tokens_reported["prompt"], model_server.tokens_reported["completion"]
    usd = (prompt * 0.15 + completion * 0.60) / 1e6
    assert judge["cost"] == {
        "usd": round(usd, 6),
        "input_per_1m": 0.15,
        "output_per_1m": 0.6,
        "source": "--price",
        "model": "judge-mini",
    }
    line = next(x for x in printed.splitlines() if x.startswith("Judge:"))
    assert line.endswith(
        f"2 calls, 0 from cache, {prompt:,} prompt + {completion:,} completion tokens, ${usd:.4f}"
    )
    page = (tmp_path / "runs" / "a" / "report.html").read_text()
    assert f"judge: 2 calls, ${usd:.4f}" in page

    prices = tmp_path / "prices.toml"
    prices.write_text('["JUDGE-MINI"]\ninput = 1.0\noutput = 4.0\nbatch_input = 0.5\nbatch_output = 2.0\n')
    monkeypatch.setenv("EVALKIT_PRICES", str(prices))
    code, printed, judge = run(judged, tmp_path / "runs" / "b", capsys=capsys)
    assert code == 0 and judge["cost"]["source"] == "EVALKIT_PRICES (prices.toml)"
    assert judge["cost"]["usd"] == round((prompt * 1.0 + completion * 4.0) / 1e6, 6)

    monkeypatch.delenv("EVALKIT_PRICES")
    code, printed, judge = run(judged, tmp_path / "runs" / "c", capsys=capsys)
    assert code == 0 and judge["cost"] == {"usd": None, "note": "price not set", "model": "judge-mini"}
    assert "completion tokens, price not set" in printed and "$0" not in printed
    assert "judge: 2 calls, price not set" in (tmp_path / "runs" / "c" / "report.html").read_text()

    assert main(["runs", str(tmp_path / "runs")]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert "judge_cost" in listed[0] and "judge_calls" in listed[0]
    assert f"${usd:.4f}" in listed[1] and "price not set" in listed[3], listed
    assert model_server.request_count == 6


def test_a_bad_price_file_stops_the_run_before_any_judge_call(
    judged, model_server, tmp_path, monkeypatch, capsys
):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"judge-mini": {"input": 0.15, "output": -1}}))
    monkeypatch.setenv("EVALKIT_PRICES", str(prices))
    code, printed, _ = run(judged, tmp_path / "out", capsys=capsys)
    assert code == 3 and "Error:" in printed and "prices.json: 'judge-mini' output is -1" in printed
    assert "Traceback" not in printed and model_server.request_count == 0
    try:  # argparse's exit, or the CLI's own Error: line for it
        code = main(["run", str(judged), "--price", "cheap"])
    except SystemExit as stopped:
        code = stopped.code
    assert code == 2
    assert "--price 'cheap': give the input and output prices" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "the price file is not valid JSON"),
        ('["gpt"]', "must be an object of model -> prices"),
        ('{"gpt": 3}', "model 'gpt' must map to"),
        ('{"gpt": {"input": 1}}', "model 'gpt' has no 'output' price"),
        ('{"gpt": {"input": 1, "output": 2, "cached": 0.5}}', "'cached', which is not a price"),
        ('{"gpt": {"input": true, "output": 2}}', "'gpt' input is True"),
    ],
)
def test_price_file_mistakes_name_the_file_the_model_and_the_fix(tmp_path, content, message):
    path = tmp_path / "prices.json"
    path.write_text(content)
    with pytest.raises(EnvironmentConfigError, match="prices.json") as caught:
        read_prices(path)
    assert message in str(caught.value)


def test_prices_and_costs(tmp_path, monkeypatch):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"gpt-4o-mini": {"input": 0.15, "output": 0.6, "batch_input": 0.075}}))
    monkeypatch.setenv("EVALKIT_PRICES", str(path))
    price = price_for("GPT-4o-mini")
    assert price is not None and price.cost(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert price.cost(1_000_000, 1_000_000, batch=True) == pytest.approx(
        0.375
    )  # batch output: half the ordinary
    assert price_for("another-model") is None
    assert price_for("another-model", (1, 2)) == Price(1.0, 2.0, source="price")
    assert parse_price("0.15/0.60") == Price(0.15, 0.6, source="--price")
    for bad in ("0.15", "a/b", "-1/2", "1/2/3", "inf/1"):
        with pytest.raises(EnvironmentConfigError, match="--price"):
            parse_price(bad)
    monkeypatch.setenv("EVALKIT_PRICES", str(tmp_path / "missing.json"))
    with pytest.raises(EnvironmentConfigError, match="cannot read the price file"):
        price_for("gpt-4o-mini")


def test_spans_eval_prices_its_judge_tokens(model_server, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    spans = Path(__file__).resolve().parents[2] / "data" / "agentcore_spans.jsonl"
    argv = ["spans", "eval", str(spans), "--evaluator", "Builtin.Helpfulness", "--out", str(tmp_path / "o")]
    assert main([*argv, "--no-cache", "--price", "2/8"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Judge:"))
    reported = model_server.tokens_reported
    usd = (reported["prompt"] * 2 + reported["completion"] * 8) / 1e6
    assert line.endswith(
        f"{reported['prompt']:,} prompt + {reported['completion']:,} completion tokens, ${usd:.4f}"
    ), line
    assert main([*argv, "--no-cache"]) == 0
    assert "completion tokens, price not set" in capsys.readouterr().out
