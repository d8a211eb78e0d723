"""Notebook parameters as papermill passes them: checked by name, and paths that work from any folder.

papermill runs a notebook by injecting a cell of assignments after the cell tagged ``parameters``; a name
the notebook does not declare only draws a warning, and the run goes on without it (a misspelled
``-p baselin ...`` writes a report with no comparison). ``check_parameters()``, called in the cell after the
parameters cell, makes that a failure: it reads the kernel's input history, finds the cell papermill
injected (it starts with papermill's ``# Parameters`` comment line) and the notebook's own parameters cell
(it starts with :data:`PARAMETERS_MARK`), and raises :class:`ParameterError` listing the notebook's
parameters when a name was injected that the notebook does not declare. Outside papermill (no injected
cell) it does nothing, so running the cells by hand, in any order, is unaffected.

``labels_path_for()`` keeps the labels a person gives in Jupyter apart from those of an unattended run
(papermill, ``jupyter nbconvert --execute``, the test suite): an unattended run gets a fresh labels file of its
own, so it never brings back, nor adds to, the labels and notes given interactively. ``unattended()`` tells the
two apart: papermill injected parameters, or the kernel was asked to run the cell without a frontend that can
answer input (nbclient, which papermill and nbconvert use, sends ``allow_stdin=False``; JupyterLab, Notebook and
VS Code send ``True``).

``project_path()`` lets a notebook run from the project folder and from ``notebooks/`` alike: its default
paths are written relative to the project folder (``data/demo.json``), and a path that does not exist from
the current folder is taken from the project folder (the nearest folder, from the current one upwards,
holding a ``pyproject.toml``).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from evalkit.errors import ParameterError

#: The first line of every evalkit notebook's parameters cell.
PARAMETERS_MARK = "# Parameters (papermill)"
#: The first line of the cell papermill injects (its Python translator's comment).
INJECTED_MARK = "# Parameters"


def assigned_names(source: str) -> list[str]:
    """The names a cell's source assigns at top level, in order (``a = 1``, ``a: int = 1``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in names:
                names.append(target.id)
    return names


def unknown_parameters(declared_source: str, injected_source: str) -> list[str]:
    """The names the injected cell sets that the parameters cell does not declare."""
    declared = set(assigned_names(declared_source))
    return [name for name in assigned_names(injected_source) if name not in declared]


def check_parameters(notebook: str = "this notebook", history: list[str] | None = None) -> list[str]:
    """Raise :class:`ParameterError` when papermill injected a parameter the notebook does not
    declare; returns the declared parameter names (empty when the run is not papermill's).

    ``history``: the cells run so far (default: the IPython kernel's input history).
    """
    if history is None:
        history = _input_history()
    declared = next((cell for cell in history if _first_line(cell) == PARAMETERS_MARK), None)
    injected = [cell for cell in history if _first_line(cell) == INJECTED_MARK]
    if declared is None or not injected:
        return []
    names = assigned_names(declared)
    unknown = unknown_parameters(declared, injected[-1])
    if unknown:
        raise ParameterError(
            f"{notebook} has no parameter {', '.join(map(repr, unknown))}: its parameters are "
            f"{', '.join(names)}. Check the spelling of -p NAME VALUE."
        )
    return names


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The nearest folder from ``start`` (default: the current folder) upwards that holds a
    ``pyproject.toml``; ``start`` itself when there is none."""
    here = Path(start or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if (folder / "pyproject.toml").is_file()), here)


def project_path(path: str | os.PathLike | None) -> Path | None:
    """``path`` as a notebook parameter means it: absolute as it is; relative, from the current folder when
    it exists there, else from the project folder (:func:`project_root`). None stays None."""
    if path is None:
        return None
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return given.resolve()
    return project_root() / given


#: The labels file of an unattended run, in the notebook's output folder (replaced at each such run).
UNATTENDED_LABELS = "papermill.labels.json"


def unattended(history: list[str] | None = None) -> bool:
    """Whether this notebook is being run unattended (papermill, nbconvert --execute) rather than by a person in
    Jupyter; see the module docstring. False outside a kernel."""
    if history is None:
        history = _input_history()
    if any(_first_line(cell) == INJECTED_MARK for cell in history):
        return True
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - evalkit's notebooks always run in IPython
        return False
    kernel = getattr(get_ipython(), "kernel", None)
    allow_stdin = getattr(kernel, "_allow_stdin", None)  # ipykernel: this execute request's allow_stdin
    return allow_stdin is False


def labels_path_for(
    labels_file: str | os.PathLike | None, out_dir: Path, document: str | os.PathLike
) -> Path:
    """Where a notebook keeps the labels of ``document``: its judge studio and labelling widget are both given
    this one path, so "Align to labels" reads what was labelled.

    ``labels_file`` given (a notebook parameter): that file, shared by every run that names it. Otherwise, in a
    person's Jupyter session, the document's labels file in ``out_dir`` (``out_dir/demo.labels.json`` for
    ``demo.json``: :func:`evalkit.analysis.labels.labels_path`), so labels are there again when the notebook is
    reopened; in an unattended run, ``out_dir /`` :data:`UNATTENDED_LABELS`, emptied first, so the run starts with
    no labels and leaves the interactive file untouched.
    """
    from evalkit.analysis.labels import labels_path

    if labels_file is not None:
        return project_path(labels_file)
    if not unattended():
        return labels_path(document, out_dir)
    path = Path(out_dir) / UNATTENDED_LABELS
    path.unlink(missing_ok=True)
    return path


def _first_line(source: str) -> str:
    return source.lstrip().split("\n", 1)[0].rstrip()


def _input_history() -> list[str]:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - evalkit's notebooks always run in IPython
        return []
    shell = get_ipython()
    if shell is None:
        return []
    return [cell for cell in shell.history_manager.input_hist_raw if isinstance(cell, str)]
