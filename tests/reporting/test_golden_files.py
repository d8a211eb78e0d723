"""The run's files keep their bytes: results.json, results.csv and ``to_document`` against golden files.

The golden files under ``data/golden/expected/`` were written by evalkit's writers before they were rewritten
for speed (issue 20), for a varied hand-made document and two upstream sample documents (see
``data/golden/SOURCE.md``). Only the run's time stamp and evalkit's version are masked. Regenerate with
``PYTHONPATH=. python tests/reporting/test_golden_files.py`` when a format change is intended.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import evalkit

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
CASES = ("varied", "hr_benefits_leave", "prompts-retrieval-complex")
LLM_JUDGED = {"Relevance", "Coherence", "Groundedness", "Similarity", "ToolCallAccuracy"}
ADDED = {"ExactMatch": {}, "PartialMatch": {}}
_MASKS = (
    (re.compile(rb'"evaluatedAt": "[^"]*"'), b'"evaluatedAt": "<time>"'),
    (re.compile(rb'"evalkit_version": "[^"]*"'), b'"evalkit_version": "<version>"'),
)


def _without_judges(evaluators: dict | None) -> dict | None:
    if evaluators is None:
        return None
    return {name: options for name, options in evaluators.items() if name not in LLM_JUDGED}


def scored_case(name: str):
    """The case's document, its LLM-judged evaluators removed (upstream samples get ExactMatch and
    PartialMatch instead), loaded and evaluated."""
    doc = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    if name != "varied":
        doc["default_evaluators"] = {**_without_judges(doc.get("default_evaluators") or {}), **ADDED}
    for item in doc["items"]:
        for entry in [item, *item.get("turns", [])]:
            if "evaluators" in entry:
                entry["evaluators"] = _without_judges(entry["evaluators"])
    df = evalkit.load(doc)
    return evalkit.evaluate(df, custom_dir=GOLDEN / "custom-evaluators", progress=False)


def masked(data: bytes) -> bytes:
    for pattern, replacement in _MASKS:
        data = pattern.sub(replacement, data)
    return data


def written_files(name: str, out: Path) -> dict[str, bytes]:
    """What evalkit writes for the case: results.json, results.csv and the ``to_document`` dict as JSON."""
    scored = scored_case(name)
    paths = evalkit.save_results(scored, out)
    document = json.dumps(evalkit.to_document(scored), ensure_ascii=False, indent=1)
    return {
        "results.json": masked(paths["json"].read_bytes()),
        "results.csv": paths["csv"].read_bytes(),
        "to_document.json": document.encode("utf-8") + b"\n",
    }


@pytest.mark.parametrize("name", CASES)
def test_files_keep_their_bytes(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = written_files(name, tmp_path / "out")
    for file_name, data in files.items():
        expected = (GOLDEN / "expected" / name / file_name).read_bytes()
        assert data == expected, f"{name}/{file_name} differs from the golden file"


def test_golden_set_is_varied():
    """The golden files hold what the writers must get right, so a regression cannot hide in a plain set."""
    varied = (GOLDEN / "expected" / "varied" / "results.json").read_text(encoding="utf-8")
    needles = (
        "😀",
        "\u2028",
        "\\u0001",
        "\\r\\n",
        "12345678901234567890123",
        "-98765432109876543210",
        "1e-07",
    )
    for needle in (
        *needles,
        "1e+16",
        "-1e-05",
        '"turns"',
        '"summary"',
        '"code": ',
        '"tags"',
        '"x-root-extra"',
    ):
        assert needle in varied, needle
    table = (GOLDEN / "expected" / "varied" / "results.csv").read_bytes().decode("utf-8")
    assert '"line1\nline2, ""quoted""\r\nline3"' in table and "-0.5" in table


def test_csv_written_in_chunks_keeps_its_bytes(tmp_path, monkeypatch):
    """results.csv is rendered in chunks of rows: chunk edges (and a carriage return in a later chunk) change
    nothing."""
    from evalkit.documents.encoding import csv_cells

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(csv_cells, "CHUNK_ROWS", 3)
    files = written_files("varied", tmp_path / "out")
    assert files["results.csv"] == (GOLDEN / "expected" / "varied" / "results.csv").read_bytes()


@pytest.mark.parametrize("name", ["varied", "prompts-retrieval-complex"])
def test_rows_in_any_order_and_chunks_keep_their_bytes(name, tmp_path, monkeypatch):
    """results.json reads the table's columns a chunk of rows at a time, in (item, turn) order: a shuffled
    table and chunk edges inside threads change nothing."""
    from evalkit.documents import results
    from evalkit.documents.encoding import json_items

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(results, "CHUNK_ROWS", 2)
    monkeypatch.setattr(json_items, "CHUNK_ITEMS", 3)
    scored = scored_case(name)
    shuffled = scored.sample(frac=1, random_state=3)
    assert shuffled["item"].tolist() != scored["item"].tolist()
    shuffled.attrs = scored.attrs
    paths = evalkit.save_results(shuffled, tmp_path / "out")
    expected = (GOLDEN / "expected" / name / "results.json").read_bytes()
    assert masked(paths["json"].read_bytes()) == expected


def regenerate() -> None:
    import tempfile

    for name in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            files = written_files(name, Path(tmp) / "out")
        target = GOLDEN / "expected" / name
        target.mkdir(parents=True, exist_ok=True)
        for file_name, data in files.items():
            (target / file_name).write_bytes(data)
        print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    regenerate()
