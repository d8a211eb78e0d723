"""What writing a run's results.csv and results.json holds in memory: one chunk of rows' text at a time.

Issue 20's peak-memory goal: the CLI writes these files in the parent and in a forked writer that shares
the scored table, so whatever a writer holds is added to the run's peak. Chunks of 10,000 rows (results.csv)
and 5,000 rows (results.json) held 25 and 15 MB at 100,000 rows; 2,000 rows hold 8 and 6 MB, as fast.
"""

from __future__ import annotations

import tracemalloc

import pytest

import evalkit
from evalkit.reporting.csv_file import write_csv
from evalkit.reporting.run_files import _write_json

ROWS = 20_000


@pytest.fixture(scope="module")
def scored():
    words = "policy leave vacation days salary benefits employee manager approval portal".split()
    items = []
    for i in range(ROWS):
        expected = " ".join(words[(i + k) % len(words)] for k in range(12)) + "."
        items.append(
            {"prompt": f"Question {i}?", "expected_response": expected, "response": expected[::-1] + " [1]"}
        )
    document = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}, "Citations": {}},
        "items": items,
    }
    return evalkit.evaluate(evalkit.load(document), progress=False)


def _peak(call) -> int:
    call()  # once before: what a first call imports or caches is not the writer's per-row memory
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_results_csv_holds_a_chunk_of_rows_not_the_file(scored, tmp_path):
    path = tmp_path / "results.csv"
    peak = _peak(lambda: write_csv(scored, path))
    size = path.stat().st_size
    assert peak < 0.7 * size, (peak, size)  # 0.35 here; 1.4 with 10,000-row chunks


def test_results_json_holds_a_chunk_of_rows_not_the_file(scored, tmp_path):
    path = tmp_path / "results.json"
    peak = _peak(lambda: _write_json(scored, path))
    size = path.stat().st_size
    assert peak < 0.6 * size, (peak, size)  # 0.38 here; 0.89 with 5,000-row chunks
