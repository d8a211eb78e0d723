"""A judge run leaves nothing outside its output, its judge cache and the temporary folders evalkit owns.

promptflow, on import, builds an Azure Monitor exporter whose offline-retry folder
(``<tempdir>/Microsoft-AzureMonitor-<sha256>/``) was created and left behind by every run with a custom
``.prompty`` judge. The run here uses both judge kinds (azure-ai-evaluation's built-in Relevance and the
example ``professional_tone`` prompty, run by promptflow) against evalkit's own model server, with ``TMPDIR``
pointed at a fresh folder, which must be empty afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.testing import ModelServer

REPO = Path(__file__).resolve().parents[2]

DOCUMENT = {
    "schemaVersion": "1.0.0",
    "default_evaluators": {"Relevance": {}, "professional_tone": {}},
    "items": [{"prompt": "How many days of leave do I get?", "response": "You get 25 days of paid leave."}],
}


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.slow  # one real judge run through promptflow and azure-ai-evaluation: about 10 s here
def test_a_judge_run_leaves_no_folder_in_the_temp_folder(tmp_path):
    project, temp, home, cache = (tmp_path / name for name in ("project", "tmp", "home", "cache"))
    for folder in (project, temp, home):
        folder.mkdir()
    (project / "doc.json").write_text(json.dumps(DOCUMENT))
    shutil.copytree(
        REPO / "custom-evaluators" / "professional_tone", project / "custom" / "professional_tone"
    )
    before = tree(project)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_", "AGENT_"))}
    with ModelServer() as server:
        env = {
            **clean,
            "TMPDIR": str(temp),
            "HOME": str(home),
            "EVALKIT_CACHE_DIR": str(cache),
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_MODEL": "judge",
            "OPENAI_API_KEY": "test-key",
        }
        proc = subprocess.run(
            [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", "out", "--custom-dir", "custom"],
            cwd=project, env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert len(server.requests) == 2  # both judges really ran
    assert tree(temp) == set()
    assert tree(project) - before == {"out", "out/results.json", "out/results.csv", "out/report.html"}
    assert tree(cache) == {"judge-cache.sqlite3"}
    # promptflow writes its installation id to ~/.promptflow/pf.yaml on import, whatever its telemetry
    # setting; moving it (PF_HOME_DIRECTORY) would hide a user's promptflow connections, so it stays.
    assert tree(home) <= {".promptflow", ".promptflow/pf.yaml"}


def test_a_run_without_llm_judges_never_imports_promptflow(tmp_path):
    """Importing promptflow takes seconds and starts threads (which rule out forked evaluator workers)."""
    import subprocess
    import sys

    doc = tmp_path / "doc.json"
    doc.write_text(
        '{"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, '
        '"items": [{"prompt": "p", "response": "a", "expected_response": "a"}]}',
        encoding="utf-8",
    )
    code = (
        "import sys, evalkit; scored = evalkit.evaluate(evalkit.load(sys.argv[1])); "
        "print(scored['status'].tolist(), 'promptflow' in sys.modules, 'azure.ai.evaluation' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(doc)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['pass']", "False", "False"]
