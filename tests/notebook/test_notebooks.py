"""Every notebook in notebooks/ runs top to bottom with papermill on a real kernel, so none of them rot.

Each notebook declares the files it writes into its ``out_dir`` parameter in its metadata,
``{"evalkit": {"produces": ["report.html", ...]}}`` (paths relative to ``out_dir``); a notebook that
declares nothing is expected to write ``report.html``, as the quickstart does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
DEFAULT_PRODUCES = ["report.html"]


def produces(notebook: Path) -> list[str]:
    """The files ``notebook`` says it writes into ``out_dir``."""
    metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    declared = (metadata.get("evalkit") or {}).get("produces")
    return list(declared) if declared is not None else DEFAULT_PRODUCES


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(notebook, tmp_path):
    import papermill

    out = tmp_path / notebook.name
    results = tmp_path / "results"
    papermill.execute_notebook(
        str(notebook),
        str(out),
        cwd=str(notebook.parent),
        kernel_name="python3",
        parameters={"out_dir": str(results)},
        progress_bar=False,
    )
    missing = [name for name in produces(notebook) if not (results / name).is_file()]
    assert not missing, f"{notebook.name} did not write {missing} into out_dir"


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ should hold at least the quickstart"


def test_the_quickstart_writes_the_report():
    quickstart = [p for p in NOTEBOOKS if p.stem == "quickstart"]
    assert quickstart and "report.html" in produces(quickstart[0])
