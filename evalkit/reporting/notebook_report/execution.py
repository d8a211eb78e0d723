"""Running the report notebook: papermill on a real Jupyter kernel, then the export written atomically.

:func:`render_report` (what ``evalkit report`` calls) checks the run folders before any kernel starts, passes
them as the notebook's parameters, executes it in a scratch folder that is removed afterwards, even when the
process is killed (:mod:`~evalkit.reporting.notebook_report.scratch`, which also says where the kernel's files
go), and turns what can go wrong into evalkit's errors: a missing kernel, a run that is not a run, a cell that
failed (named by its number). The executed notebook's outputs
(:func:`~evalkit.reporting.notebook_report.export.export_outputs`) go on top of the one report page
(:mod:`evalkit.reporting.page`), above the run's items table and item view.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalkit.reporting.notebook_report.export import export_outputs, page_options
from evalkit.reporting.notebook_report.scratch import scratch_folder


def notebook_path() -> Path:
    """The report notebook shipped in the package (``evalkit/reporting/templates/report.ipynb``).

    The repository's ``notebooks/report.ipynb`` is the same file (a test keeps them identical): the package
    copy is what an installed evalkit has, the repository copy is what people open next to the quickstart.
    """
    return Path(__file__).resolve().parents[1] / "templates" / "report.ipynb"


def render_report(
    run_dir: str | os.PathLike,
    out: str | os.PathLike,
    *,
    baseline_dir: str | os.PathLike | None = None,
    title: str | None = None,
    notebook_out: str | os.PathLike | None = None,
    parameters: dict[str, Any] | None = None,
    kernel_name: str = "python3",
    timeout: float | None = 600,
    history_dir: str | os.PathLike | None = None,
) -> Path:
    """Execute the report notebook on ``run_dir`` (and ``baseline_dir``) and write the HTML to ``out``.

    The notebook runs with papermill on the ``kernel_name`` Jupyter kernel in a scratch folder that is removed
    afterwards; ``notebook_out`` also keeps the executed notebook; ``history_dir`` (a folder of runs) adds the
    trend of pass rates across them (:func:`evalkit.runs`). Both files are written atomically.
    ``parameters`` sets further parameters the notebook declares (its ``parameters`` cell); a name it does not
    declare raises :class:`~evalkit.errors.ParameterError` listing the ones it does, before any kernel starts
    (papermill itself would only warn and run without it). Raises
    :class:`~evalkit.errors.DocumentError` when a run folder is missing or not a run (before any kernel starts,
    or from the notebook), :class:`~evalkit.errors.EnvironmentConfigError` when there is no such kernel, and
    :class:`~evalkit.errors.EvalkitError` naming the cell when the notebook fails otherwise.
    """
    import nbformat

    from evalkit.documents.files.atomic import atomic_write
    from evalkit.documents.run_reader import results_file
    from evalkit.errors import EvalkitError

    source = notebook_path()
    if not source.is_file():
        raise EvalkitError(
            f"the report notebook is missing from this installation ({source}); reinstall evalkit "
            "(its package data must include templates/*.ipynb)"
        )
    extra = dict(parameters or {})
    check_parameters(source, extra)
    run_path = results_file(run_dir).resolve()
    base_path = results_file(baseline_dir).resolve() if baseline_dir is not None else None
    with scratch_folder() as scratch:
        executed = _execute(
            source,
            scratch / "report.ipynb",
            {
                **extra,
                "run_dir": str(run_path),
                "baseline_dir": None if base_path is None else str(base_path),
                "title": title,
                "out_dir": str(scratch / "out"),
            },
            cwd=str(scratch),
            kernel_name=kernel_name,
            timeout=timeout,
        )
    from evalkit.documents.run_reader import read_run
    from evalkit.reporting.page import write_page

    target = Path(out)
    from evalkit.reporting.run_spans import attach_spans

    run = attach_spans(read_run(run_path), run_path.parent)  # spans.jsonl, for the item view's trace
    options = page_options(export_outputs(executed), title)
    if history_dir is not None:
        from evalkit.analysis.history import runs
        from evalkit.reporting.trend import pass_rate_trend

        options["figures"] = [pass_rate_trend(runs(history_dir, current=run, current_dir=run_path.parent))]
    # the notebook's outputs on top, then the run's items table and item view: the one report page
    write_page(run, target, **options)
    if notebook_out is not None:
        with atomic_write(Path(notebook_out), "w") as handle:
            nbformat.write(executed, handle)
    return target


def check_parameters(notebook: Path, parameters: dict[str, Any]) -> list[str]:
    """The parameters ``notebook`` declares (papermill's reading of its ``parameters`` cell); raises
    :class:`~evalkit.errors.ParameterError` naming them when ``parameters`` holds another name, or one that
    ``render_report`` sets itself."""
    import papermill

    from evalkit.errors import ParameterError

    declared = list(papermill.inspect_notebook(str(notebook)))
    settable = [name for name in declared if name not in _SET_BY_REPORT]
    unknown = [name for name in parameters if name not in settable]
    if unknown:
        raise ParameterError(
            f"the report notebook ({notebook.name}) has no parameter {', '.join(map(repr, unknown))} to set: "
            f"its parameters are {', '.join(declared)}"
            + (
                " (run_dir, baseline_dir, title and out_dir come from the command's own options: RUN_DIR, "
                "--baseline, --title)"
                if settable != declared
                else ""
            )
        )
    return declared


#: Parameters ``render_report`` sets from its own arguments.
_SET_BY_REPORT = ("run_dir", "baseline_dir", "title", "out_dir")


def _execute(source: Path, target: Path, parameters: dict, *, cwd: str, kernel_name: str, timeout):
    import papermill
    from jupyter_client.kernelspec import NoSuchKernel
    from jupyter_client.manager import KernelManager
    from papermill.exceptions import PapermillExecutionError

    from evalkit.errors import DocumentError, EnvironmentConfigError, EvalkitError, ParameterError
    from evalkit.reporting.kernel_log import kernel_arguments

    # The connection file in the scratch folder (jupyter_client would put it in $TMPDIR, where a killed run
    # would leave it). On POSIX, Unix sockets there too instead of localhost TCP ports: the run's data never
    # crosses a network socket, and ipykernel has nothing to warn about ("running over TCP without
    # encryption"). nbclient leaves a kernel manager it did not create running, so it is shut down below.
    ipc = str(Path(cwd) / "kernel")
    # A Unix socket's path holds at most 107 bytes (sun_path) and jupyter_client adds "-<port>": a scratch
    # folder deeper than that (a long $TMPDIR) falls back to TCP on localhost, which always works.
    sockets = {"transport": "ipc", "ip": ipc} if os.name == "posix" and len(os.fsencode(ipc)) <= 96 else {}
    options: dict[str, Any] = {
        "km": KernelManager(
            kernel_name=kernel_name, connection_file=str(Path(cwd) / "kernel.json"), **sockets
        ),
        # on TCP (the fallback), ipykernel warns of its unencrypted sockets on every run: dropped, nothing else
        "extra_arguments": kernel_arguments(cwd),
    }
    try:
        return papermill.execute_notebook(
            str(source),
            str(target),
            parameters=parameters,
            kernel_name=kernel_name,
            cwd=cwd,
            progress_bar=False,
            log_output=False,
            execution_timeout=timeout,
            **options,
        )
    except NoSuchKernel:
        raise EnvironmentConfigError(
            f"no Jupyter kernel named {kernel_name!r}: install one for this Python with "
            f"'python -m ipykernel install --user --name {kernel_name}'"
        ) from None
    except PapermillExecutionError as exc:
        message = str(exc.evalue).strip()
        if exc.ename == "DocumentError":
            raise DocumentError(message) from None
        if exc.ename == "ParameterError":
            raise ParameterError(message) from None
        raise EvalkitError(
            f"the report notebook failed in cell {exc.exec_count}: {exc.ename}: {message}"
        ) from None
    finally:
        km = options.get("km")
        if km is not None and km.has_kernel:
            km.shutdown_kernel(now=False)
        if km is not None:
            # The manager's own zmq context, closed here rather than by the garbage collector: a context
            # collected later, in whatever code then runs, terminates from ``__del__`` and can block there for
            # good (seen as a test run that hung in an unrelated json.loads).
            km.context.destroy(linger=0)
