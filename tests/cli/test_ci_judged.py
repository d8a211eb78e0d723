"""The CI outputs of a judged run: an LLM judge with randomness, through azure-ai-evaluation's Relevance and
the real openai client, against evalkit's local model server.

The judge answers as the model server's heuristic judge does, except that a seeded share of its answers
(15 %, picked per run seed and request) come back with score 1: a noisy judge. A re-run with another seed
changes only that noise and passes ``--fail-on-regression``; a run whose recorded answers stopped addressing
the question fails it. The summary shows the judge's calls and tokens as the run counted them.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from lxml import etree

from evalkit.cli import main as cli
from evalkit.testing import heuristic_judge

XSD = Path(__file__).resolve().parents[1] / "reporting" / "data" / "junit-10.xsd"
N = 40

pytestmark = pytest.mark.slow


def noisy_judge(seed: int, share: float = 0.15):
    def answer(request: dict) -> str:
        text = heuristic_judge(request)
        digest = hashlib.sha256(f"{seed}/{json.dumps(request['body']['messages'])}".encode()).digest()
        if digest[0] / 256 < share:  # this answer is noise: the worst score
            text = re.sub(r"<S2>\d</S2>", "<S2>1</S2>", text)
            text = re.sub(r'("score": )\d', r"\g<1>1", text)
        return text

    return answer


def document(path: Path, off_topic: set[int]) -> Path:
    items = []
    for i in range(N):
        topic = ["vacation", "payroll", "laptop", "parking", "badge"][i % 5]
        prompt = f"How do I request {topic} support number {i}?"
        response = (
            "The weather is sunny today."
            if i in off_topic
            else f"To request {topic} support number {i}, open the HR portal and file a {topic} request."
        )
        items.append({"prompt": prompt, "response": response})
    doc = {"schemaVersion": "1.11.0", "metadata": {"name": "judged"}, "default_evaluators": {"Relevance": {}}}
    path.write_text(json.dumps({**doc, "items": items}))
    return path


@pytest.fixture
def judge_env(model_server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    return model_server


def run(capsys, doc: Path, out: Path, *extra) -> tuple[int, str, str]:
    code = cli(["run", str(doc), "--out", str(out), "--no-cache", *map(str, extra)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_noisy_judge_rerun_passes_and_off_topic_answers_fail(judge_env, tmp_path, capsys):
    judge_env.script = noisy_judge(seed=1)
    code, out, err = run(capsys, document(tmp_path / "doc.json", set()), tmp_path / "base")
    assert code == 0, err

    judge_env.script = noisy_judge(seed=2)
    md, xml = tmp_path / "rerun.md", tmp_path / "rerun.xml"
    code, out, err = run(
        capsys,
        tmp_path / "doc.json",
        tmp_path / "rerun",
        "--fail-on-regression",
        tmp_path / "base",
        "--summary-md",
        md,
        "--junit",
        xml,
    )
    assert code == 0, err
    text = md.read_text()
    changed = re.search(
        r"\| Relevance \| [\d.]+% \| [\d.]+% \| [+-][\d.]+ \| [^|]+ \| (\d+) \| (\d+) \|", text
    )
    assert changed and int(changed.group(1)) + int(changed.group(2)) > 0  # the noise did change verdicts
    assert "no significant change" in text
    judge = re.search(
        r"### Judge\n\nOpenAI\\-compatible .* model judge, 40 calls, 0 from cache, ([\d,]+) prompt \+ ([\d,]+) completion",
        text,
    )
    assert judge and int(judge.group(1).replace(",", "")) > 0 and int(judge.group(2).replace(",", "")) > 0
    assert etree.XMLSchema(etree.parse(str(XSD))).validate(etree.parse(str(xml)))

    judge_env.script = noisy_judge(seed=3)
    worse = document(tmp_path / "worse.json", set(range(0, N, 2)))
    code, out, err = run(capsys, worse, tmp_path / "worse", "--fail-on-regression", tmp_path / "base")
    assert code == 1
    assert re.search(r"Regression: Relevance pass rate .* McNemar exact test p = .*\(95% level\)", err, re.M)
