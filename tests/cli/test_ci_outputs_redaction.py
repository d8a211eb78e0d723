"""The CI outputs (``--summary-md``, ``--junit``) are published (a PR comment, a job summary, a test report):
no key a prompt, a response or a reason quotes reaches them (issue 29: one redactor for everything exported)."""

from __future__ import annotations

import json

from evalkit.cli import main as cli

GHP = "ghp_0123456789abcdefghijABCDEFGHIJklmnop"


def test_summary_and_junit_show_no_key(tmp_path, capsys):
    items = [
        {
            "prompt": f"Deploy with {GHP}?",
            "response": f"Yes, export GITHUB_TOKEN={GHP}",
            "expected_response": "No.",
        },
        {"prompt": "Plain question", "response": "Plain answer.", "expected_response": "Plain answer."},
    ]
    doc = tmp_path / "doc.json"
    doc.write_text(
        json.dumps({"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": items})
    )
    md, xml = tmp_path / "summary.md", tmp_path / "junit.xml"
    code = cli(
        ["run", str(doc), "--out", str(tmp_path / "out"), "--summary-md", str(md), "--junit", str(xml)]
    )
    assert code == 0, capsys.readouterr()
    summary, junit = md.read_text(), xml.read_text()
    assert "| item 0: Deploy with ghp\\_\\*\\*\\*? | fail |" in summary
    assert "ghp_***" in junit
    assert GHP not in summary and GHP not in junit
