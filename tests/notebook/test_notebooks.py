"""Every notebook in notebooks/ runs top to bottom with papermill on a real kernel, as users call it.

Each notebook runs with its default parameters from the project folder and from ``notebooks/`` (in a copy
of the project, so the tests write nothing into the repository). Each declares the files it writes into its
``out_dir`` parameter in its metadata, ``{"evalkit": {"produces": ["report.html", ...]}}`` (paths relative to
``out_dir``); a notebook that declares nothing is expected to write ``report.html``, as the quickstart does.
A parameter a notebook does not declare fails the run, naming the ones it does; and every widget an executed
notebook displays keeps a static HTML rendering next to it.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
DEFAULT_PRODUCES = ["report.html"]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def produces(notebook: Path) -> list[str]:
    """The files ``notebook`` says it writes into ``out_dir``."""
    metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    declared = (metadata.get("evalkit") or {}).get("produces")
    return list(declared) if declared is not None else DEFAULT_PRODUCES


def default_out_dir(notebook: Path) -> str:
    """The default of the notebook's ``out_dir`` parameter (relative to the project folder)."""
    import papermill

    return ast.literal_eval(papermill.inspect_notebook(str(notebook))["out_dir"]["default"])


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the project's notebooks, data and example evaluators, with its pyproject.toml."""
    root = tmp_path_factory.mktemp("project")
    for folder in ("notebooks", "data", "custom-evaluators"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def execute(notebook: Path, out: Path, cwd: Path, **parameters):
    import papermill

    return papermill.execute_notebook(
        str(notebook), str(out), cwd=str(cwd), kernel_name="python3", parameters=parameters,
        progress_bar=False,
    )  # fmt: skip


@pytest.mark.parametrize("where", ["project folder", "notebooks folder"])
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_with_its_defaults(notebook, where, project, tmp_path):
    cwd = project if where == "project folder" else project / "notebooks"
    results = project / default_out_dir(notebook)
    shutil.rmtree(results, ignore_errors=True)
    executed = execute(project / "notebooks" / notebook.name, tmp_path / notebook.name, cwd)
    missing = [name for name in produces(notebook) if not (results / name).is_file()]
    assert not missing, f"{notebook.name} run from the {where} did not write {missing} into {results}"
    widgets = [
        output["data"]
        for cell in executed.cells
        for output in cell.get("outputs", [])
        if WIDGET_MIME in (output.get("data") or {})
    ]
    for data in widgets:  # a reopened notebook shows the widget's state, not a repr
        assert "text/html" in data and "evalkit-widget-snapshot" in data["text/html"]
        assert not data["text/plain"].startswith(("VBox(", "HBox(")), data["text/plain"]
    if notebook.stem == "judge_studio":
        assert len(widgets) == 2  # the studio and the labelling widget
        studio, labelling = widgets
        assert "hr_answer_quality" in studio["text/html"] and "v2_score" in studio["text/html"]
        assert "<JudgeStudio 'hr_answer_quality'" in studio["text/plain"]
        assert re.search(r"row \d+ of \d+", labelling["text/html"]) and re.search(
            r"2 of \d+ rows labelled", labelling["text/html"]
        )
        assert labelling["text/plain"].startswith("<LabellingWidget 'hr_answer_quality'")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_an_unknown_parameter_fails_and_lists_the_parameters(notebook, project, tmp_path):
    import papermill
    from papermill.exceptions import PapermillExecutionError

    declared = list(papermill.inspect_notebook(str(notebook)))
    with pytest.raises(PapermillExecutionError) as failed:
        execute(project / "notebooks" / notebook.name, tmp_path / notebook.name, project, baselin="x")
    assert failed.value.ename == "ParameterError"
    message = failed.value.evalue
    assert "no parameter 'baselin'" in message and f"its parameters are {', '.join(declared)}" in message


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ should hold at least the quickstart"


def test_the_quickstart_writes_the_report():
    quickstart = [p for p in NOTEBOOKS if p.stem == "quickstart"]
    assert quickstart and "report.html" in produces(quickstart[0])


def test_every_notebook_checks_its_parameters_right_after_declaring_them():
    from evalkit.notebook.parameters import PARAMETERS_MARK

    for notebook in NOTEBOOKS:
        cells = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
        tagged = [i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", [])]
        assert tagged, notebook.name
        assert "".join(cells[tagged[0]]["source"]).startswith(PARAMETERS_MARK + "\n"), notebook.name
        assert "check_parameters(" in "".join(cells[tagged[0] + 1]["source"]), notebook.name
