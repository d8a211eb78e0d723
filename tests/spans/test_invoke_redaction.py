"""``spans invoke`` prints a handler's response and exception text redacted (issue 29 item 6): a key the
handler quotes, or a secret-named field of its response, never reaches the terminal or a CI log."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evalkit.cli import main as cli_main

EVENT = Path(__file__).resolve().parent / "data" / "agentcore_sdk_split_format_event.json"
GHP = "ghp_0123456789abcdefghijABCDEFGHIJklmnop"


def _invoke(tmp_path: Path, body: str, capsys) -> tuple[int, str, str]:
    path = tmp_path / "custom-evaluators" / "probe" / "lambda_function.py"
    path.parent.mkdir(parents=True)
    path.write_text("def handler(event, context):\n" + textwrap.indent(body, "    ") + "\n")
    custom = str(tmp_path / "custom-evaluators")
    code = cli_main(["spans", "invoke", "probe", "--custom-dir", custom, "--event", str(EVENT)])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_exception_text_of_a_handler_is_printed_redacted(tmp_path, capsys):
    code, out, err = _invoke(
        tmp_path, f"raise RuntimeError('401 for {GHP} at http://bot:hunter22@x.org')", capsys
    )
    assert code == 1
    assert json.loads(out)["errorMessage"] == "401 for ghp_*** at http://***@x.org"
    assert "handler raised RuntimeError: 401 for ghp_*** at http://***@x.org" in err
    assert GHP not in out + err and "hunter22" not in out + err


@pytest.mark.parametrize("valid", [True, False])
def test_the_response_of_a_handler_is_printed_redacted(tmp_path, capsys, valid):
    value = 1.0 if valid else 7.5
    body = f"return {{'label': 'PASS', 'value': {value}, 'explanation': 'used {GHP}', 'api_key': 'plain'}}"
    code, out, err = _invoke(tmp_path, body, capsys)
    printed = json.loads(out)
    assert (printed["explanation"], printed["api_key"], printed["value"]) == ("used ghp_***", "***", value)
    assert code == (0 if valid else 1)
    assert GHP not in out + err
