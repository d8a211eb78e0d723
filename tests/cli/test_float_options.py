"""Every number-of-seconds or percentage option refuses ``nan`` and ``inf`` with the ``Error:`` line (issue 20 item 5).

``float("inf")`` and ``float("nan")`` parse, so an option typed ``float`` would take them: ``spans serve
--idle-timeout inf`` kept connections open for good and ``--timeout nan`` waited on nothing. Each option is
checked through the real parser, and the parser itself is walked so that no option is typed ``float`` again.
"""

from __future__ import annotations

import argparse

import pytest

from evalkit.cli import build_parser, main
from evalkit.cli.arguments.parser import parse

SECONDS = "is not a positive number of seconds: write e.g. 60 or 2.5"
PERCENT = "is not a percentage: write e.g. 10 or 10%"
SERVE = ["spans", "serve", "--store", "store"]
STREAM = ["spans", "stream", "--source", "spans", "--sink", "sink"]
CASES = [
    (SERVE, "--idle-timeout", SECONDS),
    (SERVE, "--timeout", SECONDS),
    (SERVE, "--sampling", PERCENT),
    (STREAM, "--timeout", SECONDS),
    (STREAM, "--judge-timeout", SECONDS),
    (STREAM, "--sampling", PERCENT),
]


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
@pytest.mark.parametrize("command, option, message", CASES, ids=[f"{c[1]} {o}" for c, o, _ in CASES])
def test_non_finite_values_are_refused_with_the_error_line(
    capsys, tmp_path, monkeypatch, command, option, message, value
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:  # parsed only: a command that took the value would start
        parse(build_parser(), [*command, f"{option}={value}"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2 and out == ""
    hint = " ".join(command[:2])
    assert err == f"Error: {option}: {value!r} {message}\nsee `evalkit {hint} --help`\n"


def test_spans_stream_checks_the_sampling_range_before_spark_starts(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*STREAM, "--sampling", "150"]) == 2
    err = capsys.readouterr().err
    assert "Error: --sampling 150.0: AgentCore samples 0.01-100 % of sessions" in err


def _actions(parser: argparse.ArgumentParser):
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its actions only here
        yield parser.prog, action
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                yield from _actions(sub)


def test_no_option_of_any_command_is_a_bare_float():
    bare = [f"{prog} {'/'.join(a.option_strings)}" for prog, a in _actions(build_parser()) if a.type is float]
    assert bare == []


@pytest.mark.parametrize("value", ["inf", "nan", "0", "1", "100%"])
def test_align_holdout_is_a_share_strictly_between_0_and_1(capsys, value):
    with pytest.raises(SystemExit) as exit_info:
        parse(build_parser(), ["align", "Relevance", "--labels", "x.labels.json", f"--holdout={value}"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err == (
        f"Error: --holdout: {value!r} is not a share between 0 and 1 (or 0% and 100%), both excluded\n"
        "see `evalkit align --help`\n"
    )


def test_align_holdout_takes_a_share_or_a_percentage():
    args = parse(build_parser(), ["align", "Relevance", "--labels", "x.labels.json", "--holdout", "30%"])
    assert args.holdout == pytest.approx(0.3)
