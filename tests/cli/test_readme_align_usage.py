"""The README's ``evalkit align`` usage line runs as written: ``NAME --labels FILE [DOCUMENT]``.

argparse fills ``NAME [DOCUMENT]`` from the first run of positionals only, so a DOCUMENT after ``--labels FILE``
was refused as an unrecognized argument; ``evalkit.cli.arguments.parser.parse`` gives it to the optional
positional still unset.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.cli import main as cli_main

REPO = Path(__file__).resolve().parents[2]


def readme_usage() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("evalkit align "))
    return re.split(r" \[--", line, maxsplit=1)[0]  # the options after DOCUMENT are each optional


def test_the_readme_align_usage_line_runs_as_written(model_server, monkeypatch, capsys):
    usage = readme_usage()
    assert usage == "evalkit align NAME --labels FILE [DOCUMENT]"
    words = {"NAME": "Relevance", "FILE": str(REPO / "data" / "feedbackqa.labels.json")}
    words["[DOCUMENT]"] = str(REPO / "data" / "feedbackqa.json")
    argv = [words.get(word, word) for word in usage.split()[1:]] + ["--dry-run"]
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert cli_main(argv) == 0, capsys.readouterr().err
    assert "Dry run: aligning Relevance would make at most 243 judge calls" in capsys.readouterr().out
    assert model_server.request_count == 0


def test_a_second_extra_positional_is_still_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["align", "Relevance", "--labels", "x.labels.json", "a.json", "b.json"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "Error: unrecognized arguments: b.json\nsee `evalkit align --help`\n"
