"""Issue 19 end to end: production traces become a regression document, and runs of it become CI verdicts.

The bundled demo agent answers a document (``evalkit run --agent``), which records its OpenTelemetry spans;
``spans to-document`` turns that trace file into an eval document; the document is scored as recorded (the first
run), then replayed against an agent version (the second run) with ``--fail-on-regression`` against the first,
``--summary-md`` and ``--junit``. The same agent passes the gate; a version that lost its citations fails it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

REPO = Path(__file__).resolve().parents[2]
AGENT = f"{REPO / 'data' / 'demo_agent' / 'agent.py'}:answer"
XSD = REPO / "tests" / "reporting" / "data" / "junit-10.xsd"
PROMPTS = [
    "How many sick days do I get per year?",
    "What is the company's 401(k) match?",
    "Which form do I use to update my direct deposit?",
    "Find the parental leave policy in SharePoint.",
    "Find the expense policy for international travel.",
    "I start next Monday. When do I get my laptop?",
    "How many vacation days do I get?",
    "How do I enrol in the dental plan?",
    "What is the remote work policy?",
    "How do I submit a travel expense report?",
    "When is payroll paid each month?",
    "How do I request parental leave?",
]
#: An agent version that lost its retrieval: it answers without citing anything.
WORSE_AGENT = f"""
import sys
sys.path.insert(0, {str(REPO / "data")!r})
from demo_agent.agent import answer as _answer


def answer(prompt, history=None):
    result = _answer(prompt, history)
    return {{**result, "response": "Please ask HR about that.", "citations": []}}
"""


def evalkit(*argv, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow  # four evalkit processes, three of them with the agent
def test_traces_become_a_document_whose_runs_compare_in_markdown_and_junit_and_gate(tmp_path):
    (tmp_path / "first.json").write_text(
        json.dumps(
            {
                "schemaVersion": "1.11.0",
                "default_evaluators": {"Citations": {}},
                "items": [{"prompt": p} for p in PROMPTS],
            }
        ),
        encoding="utf-8",
    )
    done = evalkit("run", "first.json", "--agent", AGENT, "--out", "production", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    traces = tmp_path / "production" / "spans.jsonl"

    done = evalkit(
        "spans", "to-document", traces, "--evaluator", "Citations", "--out", "regression.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert evalkit("validate", "regression.json", cwd=tmp_path).returncode == 0
    document = json.loads((tmp_path / "regression.json").read_text(encoding="utf-8"))
    assert sorted(item["prompt"] for item in document["items"]) == sorted(PROMPTS)

    # The first run scores the recorded answers; the second replays the prompts against the same agent.
    assert evalkit("run", "regression.json", "--out", "first", cwd=tmp_path).returncode == 0
    gate = ("--fail-on-regression", "first", "--summary-md", "summary.md", "--junit", "junit.xml")
    done = evalkit("run", "regression.json", "--agent", AGENT, "--out", "second", *gate, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "No significant regression against first" in done.stdout
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "No significant regression against first" in summary and "Citations" in summary
    junit = etree.parse(str(tmp_path / "junit.xml"))
    assert etree.XMLSchema(etree.parse(str(XSD))).validate(junit)
    cases = junit.findall(".//testcase")
    assert len([c for c in cases if c.getparent().get("name") == "Citations"]) == len(PROMPTS)

    cited = sum(1 for c in cases if c.getparent().get("name") == "Citations" and c.find("failure") is None)
    assert cited >= 8  # enough passing pairs that losing them all is significant

    # A version that lost its citations: the same comparison finds a significant drop and exits 1.
    (tmp_path / "worse.py").write_text(WORSE_AGENT, encoding="utf-8")
    done = evalkit(
        "run", "regression.json", "--agent", "worse.py:answer", "--out", "third", *gate, cwd=tmp_path
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Regression: Citations pass rate" in done.stderr and "McNemar exact test" in done.stderr
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "Citations" in summary and "regress" in summary.lower()
    failures = etree.parse(str(tmp_path / "junit.xml")).findall(".//testcase/failure")
    assert len(failures) >= cited
