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
    widgets = widget_outputs(executed)
    for data, copy in widgets:  # a reopened notebook shows the widget's state, not a repr
        assert not data["text/plain"].startswith(("VBox(", "HBox(")), data["text/plain"]
        assert "text/html" not in data  # the static copy is an output of its own, which nbconvert shows
        assert "evalkit-widget-snapshot" in copy["text/html"]
    if notebook.stem == "judge_studio":
        shown = printed(executed)
        assert re.search(
            r"3 jurors \(median\): Krippendorff's alpha [\d.]+ on scores, \d+ of 11 rows split", shown
        )
        assert re.search(r"Pairwise version B \(B\) vs demo.json \(A\): B wins [1-9]", shown)
        assert len(widgets) == 2  # the studio and the labelling widget
        (studio, studio_copy), (labelling, labelling_copy) = widgets
        assert "hr_answer_quality" in studio_copy["text/html"] and "v2_score" in studio_copy["text/html"]
        assert "<JudgeStudio 'hr_answer_quality'" in studio["text/plain"]
        assert re.search(r"row \d+ of \d+", labelling_copy["text/html"])
        assert re.search(r"2 of \d+ rows labelled", labelling_copy["text/html"])
        assert labelling["text/plain"].startswith("<LabellingWidget 'hr_answer_quality'")
        if where == "project folder":
            exported_html_shows_the_static_copies(tmp_path / notebook.name)


def printed(executed) -> str:
    """What the executed notebook's cells printed or showed as text."""
    texts = []
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            texts.append(output.get("text") or (output.get("data") or {}).get("text/plain") or "")
    return "\n".join(texts)


def widget_outputs(executed) -> list[tuple[dict, dict]]:
    """Each widget output of an executed notebook, with the output after it (its static copy)."""
    found = []
    for cell in executed.cells:
        outputs = cell.get("outputs", [])
        for position, output in enumerate(outputs):
            if WIDGET_MIME in (output.get("data") or {}):
                after = outputs[position + 1] if position + 1 < len(outputs) else {}
                found.append((output["data"], after.get("data") or {}))
    return found


def exported_html_shows_the_static_copies(executed: Path) -> None:
    """``jupyter nbconvert --to html`` of the executed notebook (nbclient saved its widget state, so the widget
    outputs are widget views that need a CDN): the static copies are in the page as HTML, outside any script,
    with the studio's tables (issue 18, item 9)."""
    import subprocess
    import sys

    from bs4 import BeautifulSoup

    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(executed), "--output-dir", str(executed.parent)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = BeautifulSoup(executed.with_suffix(".html").read_text(encoding="utf-8"), "html.parser")
    assert "widget-state+json" in str(page)  # the case of the issue: nbconvert chose the widget views
    copies = page.select("div.evalkit-widget-snapshot")
    assert len(copies) == 2 and not any(c.find_parent("script") for c in copies)
    studio, labelling = (c.get_text(" ") for c in copies)
    assert "hr_answer_quality" in studio and "v2_score" in studio and "_reason" in studio
    assert re.search(r"row \d+ of \d+", labelling)


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
