"""What loading a document costs in memory: no buffer larger than the file, no second copy of its text.

Issue 20's peak-memory goal: ``read_limited`` used to ask for ``limit + 1`` bytes (256 MiB allocated for any
file) and ``read_json`` held the file's bytes while the decoded text was parsed.
"""

from __future__ import annotations

import io
import json
import tracemalloc

from evalkit.documents.json_input import _read_up_to, read_json, read_limited


def _traced(call):
    """``(result, bytes still traced after the call, peak traced during it)``."""
    tracemalloc.start()
    try:
        result = call()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, current, peak


def _document(tmp_path, rows: int = 20_000):
    items = [{"prompt": f"question {i}?", "expected_response": "an answer " * 8} for i in range(rows)]
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"schemaVersion": "1.11.0", "items": items}), encoding="utf-8")
    return path


def test_reading_a_file_allocates_about_its_size_not_the_limit(tmp_path):
    path = tmp_path / "one.json"
    path.write_bytes(b"[" + b"1," * 500_000 + b"1]")  # 1 MB
    data, _, peak = _traced(lambda: read_limited(path))
    assert len(data) == path.stat().st_size
    assert peak < 3 * len(data)  # was 256 MiB (the default limit) for any file


def test_a_file_that_grew_since_its_size_was_taken_is_read_on_up_to_the_limit():
    grown = io.BytesIO(b"x" * 100)
    assert _read_up_to(grown, 10, limit=1000) == b"x" * 100
    assert len(_read_up_to(io.BytesIO(b"x" * 100), 10, limit=50)) == 51  # one past the limit: refused later
    assert _read_up_to(io.BytesIO(b"x" * 10), 10, limit=50) == b"x" * 10


def test_the_bytes_are_dropped_before_the_text_is_parsed(tmp_path):
    path = _document(tmp_path)
    size = path.stat().st_size
    value, kept, peak = _traced(lambda: read_json(path))
    assert len(value["items"]) == 20_000
    # the parse holds the decoded text (one file's worth) beside what it builds; with the bytes too it was two
    assert peak - kept < 1.5 * size, (peak, kept, size)
