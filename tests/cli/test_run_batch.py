"""``evalkit run --batch`` on the bundled demo document with a built-in and a shipped custom judge, against
the model server's Batch API: the summary's ``Judge:`` and ``Batch:`` lines, the batch price, a free re-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main as cli
from evalkit.judges.batch.waiting import label

pytest_plugins = ["evalkit.testing.pytest_plugin"]

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"


@pytest.fixture
def judge_env(model_server, monkeypatch, tmp_path):
    for name in ("AZURE_AI_OPENAI_ENDPOINT", "AZURE_OPENAI_ENDPOINT", "EVALKIT_PRICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(REPO)
    return model_server


def run(capsys, out: Path, *extra) -> tuple[int, str, str]:
    code = cli(["run", str(DEMO), "--out", str(out), "--evaluator", "Relevance", "--price", "1/4", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow  # two CLI runs with azure-ai-evaluation's prompt judge: about 12 s
def test_run_batch_prints_the_batch_and_prices_it_at_the_batch_price(judge_env, tmp_path, capsys):
    code, out, err = run(capsys, tmp_path / "direct", "--no-cache")
    direct = next(line for line in out.splitlines() if line.startswith("Judge:"))
    assert "Batch:" not in out
    judge_env.batches.delay = 0.3
    code, out, err = run(capsys, tmp_path / "batch", "--batch")
    lines = out.splitlines()
    judge = next(line for line in lines if line.startswith("Judge:"))
    (batch_id,) = judge_env.batches.batches
    assert f"Batch: 1 batch ({batch_id}), 11 lines sent, 0 retried, 0 failed, waited " in out
    assert next(line for line in lines if line.startswith("Batch:")).endswith(
        " s; the cost is at the batch price"
    )
    assert lines.index(judge) + 1 == lines.index(next(line for line in lines if line.startswith("Batch:")))
    assert judge.split(", $")[0] == direct.split(", $")[0]  # the same calls and tokens
    cost = float(judge.rsplit("$", 1)[1])
    assert cost == pytest.approx(float(direct.rsplit("$", 1)[1]) / 2, abs=1e-4)
    saved = json.loads((tmp_path / "batch" / "results.json").read_text())["metadata"]["extensions"]
    assert saved["dev.evalkit.judge"]["cost"]["batch"] is True
    assert saved["dev.evalkit.judge"]["batch"]["batches"] == [batch_id]

    judge_env.reset()
    code, out, err = run(capsys, tmp_path / "again", "--batch")
    assert "0 calls, 11 from cache" in out and judge_env.request_count == 0
    assert "Batch: no batch needed (every judgment was in the judge cache)" in out


def test_batch_is_for_the_pandas_engine(capsys):
    assert cli(["run", str(DEMO), "--batch", "--engine", "spark"]) == 2
    assert "--batch runs with the pandas engine" in capsys.readouterr().err


def test_the_progress_label_shows_the_batches_state():
    class Batch:
        def __init__(self, status):
            self.status = status

    assert label({"batch_1": Batch("in_progress")}) == "batch_1: in_progress"
    states = {"a": Batch("in_progress"), "b": Batch("in_progress"), "c": Batch("completed")}
    assert label(states) == "3 batches: 2 in_progress, 1 completed"
