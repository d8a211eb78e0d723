"""The quickstart notebook's ``batch`` parameter: its judge calls go through the model server's Batch API."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.testing import ModelServer

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a papermill kernel: about 18 s
def test_the_quickstart_with_batch_true_judges_through_the_batch_api(tmp_path, monkeypatch):
    import papermill

    for folder in ("notebooks", "data", "custom-evaluators"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    document = json.loads((REPO / "data" / "demo.json").read_text())
    document["default_evaluators"] = {**document.get("default_evaluators", {}), "Relevance": {}}
    (tmp_path / "data" / "judged.json").write_text(json.dumps(document))
    with ModelServer() as server:
        for name in ("AZURE_AI_OPENAI_ENDPOINT", "AZURE_OPENAI_ENDPOINT"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        monkeypatch.setenv("OPENAI_MODEL", "judge")
        papermill.execute_notebook(
            str(tmp_path / "notebooks" / "quickstart.ipynb"),
            str(tmp_path / "executed.ipynb"),
            cwd=str(tmp_path),
            kernel_name="python3",
            parameters={"document": "data/judged.json", "out_dir": "results/batch", "batch": True},
            progress_bar=False,
        )
        lines = server.batches.lines
        chat = [r for r in server.requests if r["api"] is not None]
    run = json.loads((tmp_path / "results" / "batch" / "results.json").read_text())
    judge = run["metadata"]["extensions"]["dev.evalkit.judge"]
    assert lines and not chat
    assert judge["batch"]["lines"] == len(lines) == judge["calls"]
