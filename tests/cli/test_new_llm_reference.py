"""``evalkit new NAME --llm`` scaffolds a judge that receives expected_response and context: scaffolded with the
real CLI, run by ``evalkit run`` on evalkit's model server through promptflow, and read off the requests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.testing import ModelServer


def cli(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # promptflow's import and first flow load: several seconds on a loaded machine
def test_the_scaffolded_judge_sees_the_reference_answer_and_the_context(tmp_path):
    made = cli(tmp_path, "new", "answer_check", "--llm")
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines() == [
        f"Created {Path('custom-evaluators/answer_check/answer_check.py')}",
        f"Created {Path('custom-evaluators/answer_check/answer_check.prompty')}",
        'Reference it as "answer_check": {} in an evaluator map; it is an LLM judge (needs a judge model '
        "configured).",
    ]
    doc = {
        "schemaVersion": "1.6.0",
        "default_evaluators": {"answer_check": {}},
        "items": [
            {
                "prompt": "How many vacation days do new employees get?",
                "response": "New employees get 20 vacation days.",
                "expected_response": "Twenty vacation days per calendar year.",
                "context": "Leave policy: full-time staff accrue 20 days.",
            },
            {"prompt": "Where is the HR portal?", "response": "At hr.contoso.com."},
        ],
    }
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    with ModelServer() as server:
        env = {
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_API_KEY": "local",
            "OPENAI_MODEL": "judge",
            "AZURE_AI_OPENAI_ENDPOINT": "",
            "AZURE_OPENAI_ENDPOINT": "",
        }
        done = cli(tmp_path, "run", "doc.json", "--out", "out", "--no-cache", env=env)
        users = [
            next(m["content"] for m in r["body"]["messages"] if m["role"] == "user")
            for r in server.requests
            if r["path"].endswith("/chat/completions")
        ]
    assert done.returncode == 0, done.stderr
    assert re.search(r"^  answer_check +\S+%  \(\d pass, \d fail, 0 error\)$", done.stdout, re.M), done.stdout
    with_reference = next(u for u in users if "vacation" in u)
    assert "# Reference answer\nTwenty vacation days per calendar year." in with_reference
    assert "# Context\nLeave policy: full-time staff accrue 20 days." in with_reference
    assert with_reference.rstrip().endswith("# Answer\nNew employees get 20 vacation days.")
    without = next(u for u in users if "HR portal" in u)  # nothing given: no empty sections
    assert "Reference answer" not in without and "# Context" not in without
    assert "Warning" not in done.stderr  # the template declares every variable it uses


def test_the_judge_studio_still_recognises_every_scaffold_wrapper(tmp_path):
    from evalkit.evaluators.scaffold import scaffold
    from evalkit.notebook.judge_files import is_scaffold_wrapper

    for reference in (True, False):
        home = tmp_path / str(reference)
        scaffold("answer_check", home, llm=True, reference=reference)
        wrapper = (home / "answer_check" / "answer_check.py").read_text()
        assert is_scaffold_wrapper("answer_check", wrapper)
        assert ("expected_response=expected_response" in wrapper) is reference
    assert not is_scaffold_wrapper("answer_check", wrapper + "\n# edited\n")
