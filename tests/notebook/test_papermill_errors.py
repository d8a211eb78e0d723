"""Issue 18 item 16: the ``papermill`` command with a misspelled parameter ends with the ParameterError's one line
(about 50 lines of tracebacks before), and the executed notebook's failing cell shows that line alone.

The ``papermill.engine`` entry point that makes papermill import ``evalkit.notebook.papermill_errors`` is declared
in pyproject.toml; an editable install made before it was added lacks it, so the test puts the same declaration
on the command's path (a ``.dist-info`` folder, as pip writes one) and checks it matches pyproject.toml."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MESSAGE = (
    "ParameterError: report.ipynb has no parameter 'baselin': its parameters are run_dir, baseline_dir, title, "
    "out_dir. Check the spelling of -p NAME VALUE."
)


def entry_point() -> str:
    """The entry point pyproject.toml declares (read as text: tomllib is Python 3.11+, evalkit supports 3.10)."""
    text = (REPO / "pyproject.toml").read_text()
    section = text.split('[project.entry-points."papermill.engine"]\n', 1)[1].split("\n\n", 1)[0]
    assert section.strip() == 'evalkit = "evalkit.notebook.papermill_errors:EvalkitEngine"'
    return "evalkit.notebook.papermill_errors:EvalkitEngine"


def with_entry_point(tmp_path: Path) -> str:
    """A folder holding a dist-info that declares evalkit's papermill entry point, for PYTHONPATH."""
    info = tmp_path / "site" / "evalkit_entry_point-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evalkit-entry-point\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[papermill.engine]\nevalkit = {entry_point()}\n")
    return str(info.parent)


@pytest.mark.slow  # starts papermill and a kernel
def test_a_misspelled_parameter_ends_with_one_line(tmp_path):
    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", str(REPO / "data" / "demo.json"), "--out", str(run)],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    paths = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), with_entry_point(tmp_path)) if p)
    out = tmp_path / "out.ipynb"
    failed = subprocess.run(
        [str(Path(sys.executable).parent / "papermill"), str(REPO / "notebooks" / "report.ipynb"), str(out),
         "-p", "run_dir", str(run), "-p", "baselin", "x", "--no-progress-bar"],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": paths}, timeout=300,
    )  # fmt: skip
    assert failed.returncode == 1
    lines = failed.stderr.splitlines()
    assert lines[-1] == MESSAGE
    assert "Traceback" not in failed.stderr and "PapermillExecutionError" not in failed.stderr
    ours = [line for line in lines if not line.startswith("[IPKernelApp]")]  # the kernel's own warning
    assert ours == [
        f"Input Notebook:  {REPO / 'notebooks' / 'report.ipynb'}",
        f"Output Notebook: {out}",
        "Passed unknown parameter: baselin",
        "Executing notebook with kernel: python3",
        MESSAGE,
    ]
    errors = [
        o
        for c in json.loads(out.read_text())["cells"]
        for o in c.get("outputs", [])
        if o["output_type"] == "error"
    ]
    assert [e["traceback"] for e in errors] == [[MESSAGE]]  # the cell shows the line, not a traceback


def test_other_errors_keep_their_traceback():
    from evalkit.notebook.papermill_errors import short_parameter_errors

    seen = []
    hook = short_parameter_errors(lambda *args: seen.append(args))
    other = RuntimeError("boom")
    hook(RuntimeError, other, None)
    assert seen == [(RuntimeError, other, None)]


def test_the_engine_loads_either_way_round_and_a_library_import_keeps_the_excepthook(tmp_path):
    paths = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), with_entry_point(tmp_path)) if p)
    code = (
        "import sys; {first}import papermill.engines as e; engine = e.papermill_engines.get_engine('evalkit'); "
        "print(engine.__name__, engine.__mro__[1].__name__, sys.excepthook is sys.__excepthook__)"
    )
    for first in ("", "import evalkit.notebook.papermill_errors; "):
        done = subprocess.run(
            [sys.executable, "-c", code.format(first=first)],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": paths},
        )  # fmt: skip
        assert done.stdout.split() == ["EvalkitEngine", "NBClientEngine", "True"], done.stderr
