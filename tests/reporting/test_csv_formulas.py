"""CSV formula injection (issue 20 item 3): every CSV evalkit writes neutralises text cells a spreadsheet would
run, by the OWASP rule (a leading ``'``), keeps numbers as numbers, and ``evalkit.read_csv`` gets the text back.

Covered: results.csv of ``evalkit run`` (and ``save_results``), results.csv of ``evalkit spans eval``, and
``evalkit runs --csv``; results.json keeps the original text.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.cli import main as cli
from evalkit.documents.encoding.csv_cells import guard, restore

PAYLOADS = [
    '=HYPERLINK("http://x","y")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1",
    "-2+3",
    "\t=1",
    "\r=1",
]
#: Texts a spreadsheet does not run, left as they are.
HARMLESS = ["plain", "", "'", "''", "'quoted", "a=b", " =1", "1-2"]


@pytest.mark.parametrize("text", PAYLOADS)
def test_payloads_get_one_quote(text):
    assert guard(text) == "'" + text
    assert restore(guard(text)) == text


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_texts_are_unchanged(text):
    assert guard(text) == text
    assert restore(text) == text


@pytest.mark.parametrize("text", ["'=already quoted", "''+1", "'@x"])
def test_text_that_starts_with_quotes_before_a_trigger_round_trips(text):
    """A quote more, so stripping one quote on reading gives back exactly what was written."""
    assert guard(text) == "'" + text
    assert restore(guard(text)) == text


def _document(folder: Path) -> Path:
    items = [
        {"prompt": payload, "expected_response": payloads_next, "response": payload, "context": payload}
        for payload, payloads_next in zip(PAYLOADS, PAYLOADS[1:] + PAYLOADS[:1])
    ]
    items.append({"prompt": "numbers", "expected_response": "x", "response": "x", "evaluators": {}})
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"ExactMatch": {}, "signed": {"threshold": -1}},
        "items": items,
    }
    (folder / "custom-evaluators" / "signed").mkdir(parents=True)
    (folder / "custom-evaluators" / "signed" / "signed.py").write_text(
        "class Signed:\n"
        "    def __init__(self, *, threshold, options=None, **_):\n"
        "        pass\n"
        "    def __call__(self, *, response='', **_):\n"
        "        return {'score': -0.5, 'reason': '=reason ' + response}\n"
    )
    path = folder / "doc.json"
    path.write_text(json.dumps(doc))
    return path


def _cells(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))


def test_run_results_csv_is_neutralised_and_recoverable(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    doc = _document(tmp_path)
    assert cli(["run", str(doc), "--out", str(tmp_path / "out")]) == 0
    rows = _cells(tmp_path / "out" / "results.csv")
    for row, payload in zip(rows, PAYLOADS):
        assert row["prompt"] == row["response"] == row["context"] == "'" + payload
        assert row["signed_reason"] == "'=reason " + payload
        assert row["signed"] == "-0.5" and row["signed_threshold"] == "-1.0"  # numbers stay numbers
    numeric = pd.read_csv(tmp_path / "out" / "results.csv")
    assert numeric["signed"].dtype == float and numeric["signed"].iloc[0] == -0.5
    back = evalkit.read_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert back["prompt"].tolist()[: len(PAYLOADS)] == PAYLOADS
    assert back["signed_reason"].tolist()[0] == "=reason " + PAYLOADS[0]
    items = json.loads((tmp_path / "out" / "results.json").read_text())["items"]
    assert [i["response"] for i in items[: len(PAYLOADS)]] == PAYLOADS  # results.json keeps the original


def test_spans_results_csv_is_neutralised(tmp_path):
    from evalkit.cli.spans.command import _write
    from evalkit.spans.lambdas.results import results_frame

    results = [
        {
            "evaluatorName": payload,
            "evaluatorId": "e",
            "context": {"spanContext": {"sessionId": "-s1"}},
            "label": payload,
            "value": -0.5,
            "explanation": payload,
        }
        for payload in PAYLOADS
    ]
    _, csv_path = _write(results, results_frame(results), tmp_path, [])
    rows = _cells(csv_path)
    for row, payload in zip(rows, PAYLOADS):
        assert row["evaluatorName"] == row["label"] == row["explanation"] == "'" + payload
        assert row["sessionId"] == "'-s1" and row["value"] == "-0.5"
    back = evalkit.read_csv(csv_path, dtype=str, keep_default_na=False)
    assert back["explanation"].tolist() == PAYLOADS


def test_runs_csv_is_neutralised(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    doc = _document(tmp_path)
    folder = "@SUM(1+1)*cmd|' C calc'!A0"
    assert cli(["run", str(doc), "--out", str(tmp_path / "runs" / folder)]) == 0
    assert cli(["runs", str(tmp_path / "runs"), "--csv", str(tmp_path / "runs.csv")]) == 0
    row = _cells(tmp_path / "runs.csv")[0]
    assert row["run"] == "'" + folder
    assert row["rows"] == str(len(PAYLOADS) + 1)
    assert evalkit.read_csv(tmp_path / "runs.csv")["run"].tolist() == [folder]
