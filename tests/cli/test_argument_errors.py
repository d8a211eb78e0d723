"""Argument mistakes print the ``Error:`` line every other user mistake prints, then one hint line; exit 2.

Not argparse's usage block and ``evalkit run: error: ...``. ``--help`` still prints the help, exit 0.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from evalkit.cli import main


def fails(capsys, *argv) -> str:
    """stderr of ``evalkit ARGV``, which must exit 2 and print nothing on stdout."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2
    assert out == ""
    return err


CASES = {
    "unknown flag": (
        ["--bogus"],
        "Error: unrecognized arguments: --bogus\nsee `evalkit --help`\n",
    ),
    "no command": (
        [],
        "Error: no command given: choose one of run, validate, new, cache, compare, report, runs, spans, align\n"
        "see `evalkit --help`\n",
    ),
    "unknown command": (
        ["rnu"],
        "Error: COMMAND: invalid choice: 'rnu' (choose from 'run', 'validate', 'new', 'cache', 'compare', "
        "'report', 'runs', 'spans', 'align')\nsee `evalkit --help`\n",
    ),
    "run without a document": (
        ["run"],
        "Error: the following arguments are required: DOC\nsee `evalkit run --help`\n",
    ),
    "run unknown flag": (
        ["run", "doc.json", "--ouput", "x"],
        "Error: unrecognized arguments: --ouput x\nsee `evalkit run --help`\n",
    ),
    "spans eval unknown flag": (
        ["spans", "eval", "s.json", "--evaluator", "x", "--out", "o", "--bogus"],
        "Error: unrecognized arguments: --bogus\nsee `evalkit spans eval --help`\n",
    ),
    "fail-under nan": (
        ["run", "doc.json", "--fail-under", "nan"],
        "Error: --fail-under: 'nan' is not a rate between 0 and 1 (or 0% and 100%)\nsee `evalkit run --help`\n",
    ),
    "fail-under 150%": (
        ["run", "doc.json", "--fail-under", "150%"],
        "Error: --fail-under: '150%' is not a rate between 0 and 1 (or 0% and 100%)\n"
        "see `evalkit run --help`\n",
    ),
    "evaluator-timeout inf": (
        ["run", "doc.json", "--evaluator-timeout", "inf"],
        "Error: --evaluator-timeout: 'inf' is not a positive number of seconds: write e.g. 60 or 2.5\n"
        "see `evalkit run --help`\n",
    ),
    "evaluator-timeout nan": (
        ["run", "doc.json", "--evaluator-timeout", "nan"],
        "Error: --evaluator-timeout: 'nan' is not a positive number of seconds: write e.g. 60 or 2.5\n"
        "see `evalkit run --help`\n",
    ),
    "judge-timeout nan": (
        ["run", "doc.json", "--judge-timeout", "nan"],
        "Error: --judge-timeout: 'nan' is not a positive number of seconds: write e.g. 60 or 2.5\n"
        "see `evalkit run --help`\n",
    ),
    "samples past the bound": (
        ["run", "doc.json", "--samples", "100000000000"],
        "Error: --samples: '100000000000' is not a number of samples: write a whole number from 1 to 100 (each "
        "sample is one judge call per row and judge), e.g. 5\nsee `evalkit run --help`\n",
    ),
    "samples zero": (
        ["run", "doc.json", "--samples", "0"],
        "Error: --samples: '0' is not a number of samples: write a whole number from 1 to 100 (each sample is "
        "one judge call per row and judge), e.g. 5\nsee `evalkit run --help`\n",
    ),
    "engine nope": (
        ["run", "doc.json", "--engine", "nope"],
        "Error: --engine: invalid choice: 'nope' (choose from 'pandas', 'spark')\nsee `evalkit run --help`\n",
    ),
    "report -p with one value": (
        ["report", "results", "--out", "r.html", "-p", "title"],
        "Error: -p/--parameter: expected 2 arguments\nsee `evalkit report --help`\n",
    ),
    "cache without an action": (
        ["cache"],
        "Error: the following arguments are required: ACTION\nsee `evalkit cache --help`\n",
    ),
    "spans without a command": (
        ["spans"],
        "Error: no command given: choose one of eval, serve, status, package, stream, invoke, event, to-document\n"
        "see `evalkit spans --help`\n",
    ),
    "spans unknown command": (
        ["spans", "evl"],
        "Error: SUBCOMMAND: invalid choice: 'evl' (choose from 'eval', 'serve', 'status', 'package', 'stream', "
        "'invoke', 'event', 'to-document')\nsee `evalkit spans --help`\n",
    ),
    "spans eval without its options": (
        ["spans", "eval", "spans.json"],
        "Error: the following arguments are required: --evaluator, --out\nsee `evalkit spans eval --help`\n",
    ),
    "spans serve bad port": (
        ["spans", "serve", "--store", "s", "--port", "http"],
        "Error: --port: invalid int value: 'http'\nsee `evalkit spans serve --help`\n",
    ),
}


@pytest.mark.parametrize("argv, expected", CASES.values(), ids=CASES.keys())
def test_argument_errors_lead_with_the_error_line(capsys, argv, expected):
    assert fails(capsys, *argv) == expected


def test_a_key_given_as_an_argument_is_not_echoed(capsys):
    err = fails(capsys, "run", "doc.json", "--fail-under", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789")
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in err
    assert err.startswith("Error: --fail-under: ")


def test_control_characters_in_an_argument_are_escaped(capsys):
    err = fails(capsys, "run", "doc.json", "--engine", "x\x1b[2J\u202ey")
    assert err == (
        "Error: --engine: invalid choice: 'x\\x1b[2J\\u202ey' (choose from 'pandas', 'spark')\n"
        "see `evalkit run --help`\n"
    )


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["spans", "eval", "--help"]])
def test_help_still_prints_help_and_exits_0(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0
    assert out.startswith(f"usage: evalkit {' '.join(argv[:-1])}".rstrip() + " ")
    assert err == ""


def test_the_command_itself_prints_the_error_line():
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--engine", "nope"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        "Error: --engine: invalid choice: 'nope' (choose from 'pandas', 'spark')\nsee `evalkit run --help`\n"
    )
