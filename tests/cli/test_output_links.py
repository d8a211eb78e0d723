"""Output paths that are symbolic links: a dangling one is refused (never followed, no folder created through it),
an output file that is a link is refused, an output folder that is a link to a folder is written into."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import evalkit
from evalkit.cli import main
from evalkit.errors import EvalkitError

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"
CUSTOM = REPO / "custom-evaluators"

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")


def dangling_message(link: Path, target: Path, shown: str | None = None) -> str:
    return (
        f"{shown or link}: is a symbolic link to {target}, which does not exist; evalkit does not write "
        "through it (that would create the missing folders there): create the target, remove the link, or "
        "give another path"
    )


def argument_error(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in argv])
    assert exit_info.value.code == 2
    return capsys.readouterr().err


@pytest.fixture
def dangling(tmp_path):
    """``out -> nowhere/deeper/x.json`` inside tmp_path: following it would create nowhere/deeper/."""
    link = tmp_path / "out"
    target = tmp_path / "nowhere" / "deeper" / "x.json"
    link.symlink_to(target)
    return link, target


def test_run_refuses_a_dangling_out(dangling, tmp_path, capsys):
    link, target = dangling
    err = argument_error(capsys, "run", DEMO, "--out", link, "--custom-dir", CUSTOM)
    assert err == f"Error: --out: {dangling_message(link, target)}\nsee `evalkit run --help`\n"
    assert not (tmp_path / "nowhere").exists()
    assert link.is_symlink()


def test_run_refuses_a_path_below_a_dangling_link(dangling, tmp_path, capsys):
    link, target = dangling
    below = link / "run1"
    err = argument_error(capsys, "run", DEMO, "--out", below, "--custom-dir", CUSTOM)
    shown = f"{link} (in {below})"
    assert err == f"Error: --out: {dangling_message(link, target, shown)}\nsee `evalkit run --help`\n"
    assert not (tmp_path / "nowhere").exists()


def test_save_results_refuses_a_dangling_folder(dangling, tmp_path):
    link, target = dangling
    scored = evalkit.evaluate(evalkit.load(DEMO), custom_dir=CUSTOM)
    with pytest.raises(EvalkitError) as info:
        evalkit.save_results(scored, link)
    assert str(info.value) == dangling_message(link, target)
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "results", "--out", "{link}"],
        ["compare", "a", "b", "--out", "{link}"],
        ["runs", "runs", "--csv", "{link}"],
        ["spans", "eval", "s.json", "--evaluator", "x", "--out", "{link}"],
        ["spans", "package", "--evaluator", "x", "--out", "{link}"],
    ],
    ids=["report", "compare", "runs-csv", "spans-eval", "spans-package"],
)
def test_every_output_option_refuses_a_dangling_link(dangling, tmp_path, capsys, argv):
    link, target = dangling
    argv = [a.replace("{link}", str(link)) for a in argv]
    err = argument_error(capsys, *argv)
    option = argv[argv.index(str(link)) - 1]
    assert err.startswith(f"Error: {option}: {dangling_message(link, target)}\nsee `evalkit ")
    assert not (tmp_path / "nowhere").exists()


def test_an_output_file_that_links_to_a_file_is_refused(tmp_path, capsys):
    real = tmp_path / "elsewhere.html"
    real.write_text("keep me")
    link = tmp_path / "report.html"
    link.symlink_to(real)
    err = argument_error(capsys, "report", "results", "--out", link)
    assert err == (
        f"Error: --out: {link}: is a symbolic link to {real}; evalkit replaces an output file whole, which "
        "would replace the link, not the file it names: give that file's path itself, or remove the link\n"
        "see `evalkit report --help`\n"
    )
    assert real.read_text() == "keep me" and link.is_symlink()


def test_an_out_folder_that_links_to_a_folder_is_written_into(tmp_path, capsys):
    real = tmp_path / "runs" / "2026-12-01"
    real.mkdir(parents=True)
    latest = tmp_path / "latest"
    latest.symlink_to(real, target_is_directory=True)
    assert main(["run", str(DEMO), "--out", str(latest), "--custom-dir", str(CUSTOM)]) == 0
    assert latest.is_symlink()
    assert json.loads((real / "results.json").read_text())["items"]
