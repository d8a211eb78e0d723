"""results.json's ``document_sha256`` is the digest of the bytes read and scored (issue 29 item 9), not of the
file as it is when the results are written: a document changed on disk during a run must not be named as the
one scored."""

from __future__ import annotations

import hashlib
import json

import evalkit

DOCUMENT = {
    "schemaVersion": "1.11.0",
    "default_evaluators": {"ExactMatch": {}},
    "items": [{"prompt": "2+2?", "response": "4", "expected_response": "4"}],
}


def test_the_document_digest_is_of_the_bytes_read_not_of_the_file_at_write_time(tmp_path):
    path = tmp_path / "doc.json"
    path.write_bytes(json.dumps(DOCUMENT).encode())
    read = hashlib.sha256(path.read_bytes()).hexdigest()
    table = evalkit.load(path)
    path.write_bytes(json.dumps({**DOCUMENT, "items": DOCUMENT["items"] * 2}).encode())  # changed meanwhile
    scored = evalkit.evaluate(table, progress=False, cache=False)
    evalkit.save_results(scored, tmp_path / "out")
    metadata = json.loads((tmp_path / "out" / "results.json").read_text())["metadata"]
    assert metadata["extensions"]["dev.evalkit.run"]["document_sha256"] == read


def test_a_document_given_as_a_value_has_no_file_digest(tmp_path):
    scored = evalkit.evaluate(evalkit.load(DOCUMENT), progress=False, cache=False)
    evalkit.save_results(scored, tmp_path / "out")
    metadata = json.loads((tmp_path / "out" / "results.json").read_text())["metadata"]
    assert "document_sha256" not in json.dumps(metadata)
