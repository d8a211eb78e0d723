"""Shared fixtures: the upstream reference corpus, a throwaway project folder with custom evaluators."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["evalkit.testing.pytest_plugin"]

REPO = Path(__file__).resolve().parents[1]


def reference_dir() -> Path:
    """``../shared/reference`` beside the checkout, or ``$EVALKIT_REFERENCE_DIR``."""
    env = os.environ.get("EVALKIT_REFERENCE_DIR")
    return Path(env) if env else REPO.parent / "shared" / "reference"


@pytest.fixture
def reference() -> Path:
    path = reference_dir()
    if not path.is_dir():
        pytest.skip(f"reference corpus not found at {path}")
    return path


@pytest.fixture
def upstream_schema(reference):
    import json

    return json.loads((reference / "m365-copilot-eval/schema/v1/eval-document.schema.json").read_text())


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project folder as the current directory, with a helper to add custom evaluators."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "custom-evaluators").mkdir()

    class Project:
        root = tmp_path
        custom = tmp_path / "custom-evaluators"

        def evaluator(self, name: str, source: str, prompty: str | None = None) -> Path:
            home = self.custom / name
            home.mkdir(parents=True, exist_ok=True)
            (home / f"{name}.py").write_text(textwrap.dedent(source))
            if prompty is not None:
                (home / f"{name}.prompty").write_text(prompty)
            return home

    return Project()


@pytest.fixture(autouse=True)
def _no_judge_environment(monkeypatch, tmp_path_factory):
    """Tests never see the developer's judge model settings, nor touch the user's judge cache."""
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path_factory.mktemp("judge-cache")))
    for name in (
        "AZURE_AI_OPENAI_ENDPOINT",
        "AZURE_AI_API_KEY",
        "AZURE_AI_MODEL_NAME",
        "AZURE_AI_API_VERSION",
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_DEPLOYMENT",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
