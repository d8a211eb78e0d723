"""Every notebook in notebooks/ runs top to bottom with papermill on a real kernel, so none of them rot."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(notebook, tmp_path):
    import papermill

    out = tmp_path / notebook.name
    papermill.execute_notebook(
        str(notebook),
        str(out),
        cwd=str(notebook.parent),
        kernel_name="python3",
        parameters={"out_dir": str(tmp_path / "results")},
        progress_bar=False,
    )
    assert (tmp_path / "results" / "report.html").is_file()


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ should hold at least the quickstart"
