"""spans.jsonl of a saved agent run back on its rows (evalkit.reporting.run_spans), for evalkit report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import evalkit
from evalkit.reporting.run_spans import attach_spans

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("spans") / "agent"
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "data/agent_demo.json", "--out", str(out)]
        + ["--agent", "data/demo_agent/agent.py:answer"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    return out


def test_spans_go_back_to_their_rows_and_thread_turns(agent_run, tmp_path):
    out = agent_run
    run = evalkit.read_run(out)
    assert all(not s for s in run["spans"])  # results.json does not keep them
    filled = attach_spans(run, out)
    counts = [len(s) for s in filled["spans"]]
    written = sum(1 for _ in (out / "spans.jsonl").open())
    assert sum(counts) == written == 30 and all(counts)
    first = filled["spans"].iloc[0]
    assert first[0]["name"].startswith("invoke_agent") and first[0]["attributes"]["session.id"].endswith("-0")
    # the thread: one trace per turn, in turn order
    thread = filled[filled["turn"].notna()].sort_values("turn")
    traces = [{s["traceId"] for s in spans} for spans in thread["spans"]]
    assert len(thread) == 3 and all(len(t) == 1 for t in traces) and len(set.union(*traces)) == 3
    prompts = [s[0]["events"][0]["attributes"]["content"] for s in thread["spans"]]
    assert prompts == thread["prompt"].tolist()
    assert attach_spans(filled, out) is filled  # already there: unchanged
    assert attach_spans(run, tmp_path) is run  # no spans.jsonl


def test_compare_page_shows_the_spans_of_run_b(agent_run, tmp_path):
    from evalkit.reporting.comparison_page import write_html
    from tests.reporting.test_reports import embedded_data

    page = write_html(evalkit.compare(agent_run, agent_run, resamples=10), tmp_path / "compare.html")
    spans = embedded_data(page.read_bytes())["columns"]["spans"]
    assert spans[0][0]["n"].startswith("invoke_agent") and sum(len(s or []) for s in spans) == 30
