"""Shared fixtures: the upstream reference corpus (vendored under tests/reference/), a throwaway project folder with custom evaluators."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["evalkit.testing.pytest_plugin"]

REPO = Path(__file__).resolve().parents[1]


#: The upstream corpus, vendored under tests/reference/ (provenance and licence in its README and LICENSE).
REFERENCE = REPO / "tests" / "reference"


@pytest.fixture
def reference() -> Path:
    """The vendored upstream corpus; a missing corpus fails the test (it belongs to the repository)."""
    if not (REFERENCE / "m365-copilot-eval" / "schema").is_dir():
        pytest.fail(
            f"the vendored reference corpus is missing from {REFERENCE}: restore it with git checkout"
        )
    return REFERENCE


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


# --- the fast tier: what is slow is marked here, by what it needs, so no test file has to remember --------

#: Fixtures that start a browser, a Spark session or a notebook kernel: a test using one is slow.
SLOW_FIXTURES = frozenset({"browser", "open_page", "spark", "generated_path"})
#: Folders whose tests all drive a browser, Spark or papermill.
SLOW_FOLDERS = ("reporting/browser", "spark", "docs")
#: Single files whose tests execute notebooks with papermill.
SLOW_FILES = frozenset({"notebook/test_notebooks.py", "notebook/test_parameters.py"})


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(config, items):
    """Mark slow tests (``pytest -m "not slow"`` is the fast tier) and keep Spark tests on one xdist worker.

    One worker owns the Spark session (one JVM of 1 GB, not two fighting over two cores).
    """
    tests = REPO / "tests"
    for item in items:
        relative = Path(str(item.path)).resolve().relative_to(tests).as_posix()
        if (
            SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ()))
            or relative.startswith(SLOW_FOLDERS)
            or relative in SLOW_FILES
        ):
            item.add_marker(pytest.mark.slow)
        if relative.startswith("spark/") or "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))
