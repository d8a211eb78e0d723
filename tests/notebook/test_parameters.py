"""evalkit.notebook.parameters: the unknown-parameter check and paths that work from any folder."""

from __future__ import annotations

import pytest

from evalkit.errors import ParameterError
from evalkit.notebook.parameters import check_parameters, project_path, project_root

DECLARED = "# Parameters (papermill)\nrun_dir = None  # the run\nbaseline_dir: str = None\ntitle = None\n"


def test_an_injected_name_the_notebook_does_not_declare_fails():
    with pytest.raises(ParameterError) as failed:
        check_parameters("report.ipynb", [DECLARED, '# Parameters\nrun_dir = "r"\nbaselin = "b"\n'])
    message = str(failed.value)
    assert message.startswith("report.ipynb has no parameter 'baselin'")
    assert "its parameters are run_dir, baseline_dir, title" in message


def test_declared_names_pass_and_runs_without_papermill_are_not_checked():
    assert check_parameters("x", [DECLARED, '# Parameters\nbaseline_dir = "b"\n']) == [
        "run_dir", "baseline_dir", "title"
    ]  # fmt: skip
    assert check_parameters("x", [DECLARED, "typo = 1"]) == []  # run by hand: nothing injected
    assert check_parameters("x", []) == []  # outside IPython: no history


def test_project_paths_resolve_from_the_current_folder_then_the_project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "demo.json").write_text("{}")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "local.json").write_text("{}")
    monkeypatch.chdir(tmp_path / "notebooks")
    assert project_root() == tmp_path
    assert project_path("data/demo.json") == tmp_path / "data" / "demo.json"
    assert project_path("../data/demo.json") == tmp_path / "data" / "demo.json"
    assert project_path("local.json") == tmp_path / "notebooks" / "local.json"
    assert project_path("results/x") == tmp_path / "results" / "x"  # outputs land in the project folder
    assert project_path(None) is None
    monkeypatch.chdir(tmp_path)
    assert project_path("data/demo.json") == tmp_path / "data" / "demo.json"
    outside = tmp_path / "notebooks"  # no pyproject.toml above a folder of its own: the folder itself
    assert project_root(outside) == tmp_path
