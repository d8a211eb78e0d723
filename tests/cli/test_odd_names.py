"""File names with a newline, a control character or a bidirectional override are quoted in messages.

Such a name reaching the terminal raw can forge a line (``Error: ...`` then a fake ``OK``), clear the screen
(ESC sequences) or show ``evil.json`` as ``nosj.live`` (U+202E). Ordinary names, accents and spaces included,
are shown as they are.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import evalkit
from evalkit.cli import main
from evalkit.errors import DocumentError, shown, terminal_safe

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"
CUSTOM = REPO / "custom-evaluators"

ODD = {
    "newline": ("bad\nOK name.json", "'bad\\nOK name.json'"),
    "right-to-left override": ("\u202enosj.evil", "'\\u202enosj.evil'"),
    "escape sequence": ("\x1b[2Jclear.json", "'\\x1b[2Jclear.json'"),
    "carriage return": ("a\rb.json", "'a\\rb.json'"),
}


@pytest.mark.parametrize("name, quoted", ODD.values(), ids=ODD.keys())
def test_shown_quotes_odd_names(name, quoted):
    assert shown(name) == quoted


@pytest.mark.parametrize(
    "name", ["doc.json", "my doc.json", "données/évaluation.json", "評価.json", "a'b.json"]
)
def test_shown_leaves_ordinary_names_alone(name):
    assert shown(name) == name
    assert shown(Path(name)) == name


def test_validate_quotes_a_missing_odd_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "bad\nOK name.json"]) == 2
    assert capsys.readouterr() == ("", "Error: 'bad\\nOK name.json': no such file\n")


def test_validate_quotes_an_odd_name_that_exists(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    name = "\u202enosj.evil"
    shutil.copy(DEMO, tmp_path / name)
    assert main(["validate", name]) == 0
    assert capsys.readouterr().out == "OK '\\u202enosj.evil'\n"
    (tmp_path / name).write_text("{", encoding="utf-8")
    assert main(["validate", name]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: '\\u202enosj.evil': ") and err.count("\n") == 1 and "\u202e" not in err


def test_run_prints_odd_output_paths_quoted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(DEMO), "--out", "out\nx", "--custom-dir", str(CUSTOM)]) == 0
    out = capsys.readouterr().out
    assert "Results: 'out\\nx/results.json'\n" in out
    assert "CSV:     'out\\nx/results.csv'\n" in out
    assert "Report:  'out\\nx/report.html'\n" in out
    assert json.loads((tmp_path / "out\nx" / "results.json").read_text())["items"]


def test_run_prints_ordinary_output_paths_as_before(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(DEMO), "--out", "my out", "--custom-dir", str(CUSTOM)]) == 0
    assert "Results: my out/results.json\n" in capsys.readouterr().out


def test_spans_eval_quotes_a_missing_odd_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["spans", "eval", "x\x1b[2J.json", "--evaluator", "pii_leak", "--custom-dir", str(CUSTOM),
                 "--out", "o"])  # fmt: skip
    assert (code, capsys.readouterr().err) == (2, "Error: 'x\\x1b[2J.json': span file not found\n")


def test_the_python_api_quotes_odd_names_too(tmp_path):
    with pytest.raises(DocumentError) as info:
        evalkit.load(tmp_path / "a\nb.json")
    assert str(info.value) == f"'{tmp_path}/a\\nb.json': no such file"


def test_terminal_safe_escapes_controls_but_keeps_lines():
    text = "Error: one\n  - two\tthree \x1b[31mred\x07 \u202eevil \u2066iso\u2069 é 評価 😀"
    assert terminal_safe(text) == (
        "Error: one\n  - two\tthree \\x1b[31mred\\x07 \\u202eevil \\u2066iso\\u2069 é 評価 😀"
    )


def test_a_warning_with_control_characters_is_escaped(tmp_path, monkeypatch, capsys):
    """Warnings carry values that never went through ``shown`` (a legacy document's name here)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "leg\x1b[2Jacy.json").write_text(json.dumps([{"prompt": "p", "response": "r"}]))
    main(["run", "leg\x1b[2Jacy.json", "--out", "o", "--custom-dir", str(CUSTOM)])
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "'leg\\x1b[2Jacy.json'" in err
