"""``evalkit report -p NAME VALUE`` / ``render_report(parameters=...)``: a name the report notebook does not
declare is an error listing the ones it does, before any kernel starts (papermill itself only warns)."""

from __future__ import annotations

import papermill
import pytest

from evalkit.cli import main as cli
from evalkit.errors import ParameterError
from evalkit.reporting.notebook_report import execution


def test_an_unknown_report_parameter_is_an_error_listing_the_parameters(tmp_path, capsys):
    declared = ", ".join(papermill.inspect_notebook(str(execution.notebook_path())))
    code = cli(["report", str(tmp_path / "no-run"), "-p", "baselin", "x", "--out", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("Error: the report notebook (report.ipynb) has no parameter 'baselin'")
    assert f"its parameters are {declared}" in err
    assert not (tmp_path / "r.html").exists()


def test_parameters_the_command_sets_itself_are_refused_too(tmp_path):
    with pytest.raises(ParameterError, match="come from the command's own options"):
        execution.render_report(tmp_path, tmp_path / "r.html", parameters={"run_dir": "elsewhere"})
