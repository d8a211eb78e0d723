"""Hostile or broken input on the command line: exit code 2 and one ``Error: ...`` line, never a traceback.

Each case runs the real CLI in a subprocess (``sys.executable -m evalkit``), as a user or a CI job would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPAN_EVALUATORS = REPO / "custom-evaluators"
DEEP = 20_000


def evalkit_cmd(*args, cwd=None, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)],
        cwd=cwd or REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_error(proc, *fragments, code=2):
    """Exit ``code``, no traceback, exactly one ``Error:`` line, each fragment in stderr, stderr short."""
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == code, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, proc.stderr[-2000:]
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr[-2000:]
    assert len(proc.stderr) < 2000, proc.stderr[:2000]


def _doc(tmp_path, text: str, name: str = "doc.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _item_doc(item_text: str) -> str:
    return '{"schemaVersion": "1.11.0", "items": [' + item_text + "]}"


def _deep_document(tmp_path) -> Path:
    return _doc(tmp_path, '{"schemaVersion": "1.11.0", "items": ' + "[" * DEEP + "]" * DEEP + "}")


# --------------------------------------------------------------------------------------------- deep JSON


def test_validate_refuses_json_nested_20000_levels(tmp_path):
    path = _deep_document(tmp_path)
    assert_one_error(evalkit_cmd("validate", path), str(path), "nested more than 100 levels deep")


def test_run_refuses_json_nested_20000_levels(tmp_path):
    path = _deep_document(tmp_path)
    proc = evalkit_cmd("run", path, "--out", tmp_path / "out")
    assert_one_error(proc, str(path), "nested more than 100 levels deep")
    assert not (tmp_path / "out").exists()


def test_load_refuses_json_nested_20000_levels(tmp_path):
    import evalkit
    from evalkit.errors import DocumentError

    with pytest.raises(DocumentError, match="nested more than 100 levels deep"):
        evalkit.load(_deep_document(tmp_path))


def test_nesting_just_past_the_limit_is_refused_with_its_path(tmp_path):
    extensions = "[" * 97 + "]" * 97  # levels 1-4 are the root, items, the item, extensions: 101 in all
    path = _doc(tmp_path, _item_doc('{"prompt": "a", "extensions": {"x": ' + extensions + "}}"))
    proc = evalkit_cmd("validate", path)
    assert_one_error(proc, "nested more than 100 levels deep at items[0].extensions.x[0]")


def test_nesting_at_the_limit_runs_and_writes_its_results(tmp_path):
    """100 levels pass every later step (copying, schema checks, encoding), not only the reader."""
    extensions = "[" * 96 + "]" * 96  # levels 1-4 are the root, items, the item, extensions: 100 in all
    item = '{"prompt": "a", "response": "a", "expected_response": "a", "evaluators": {"ExactMatch": {}}, '
    item += '"evaluators_mode": "replace", "extensions": {"x": ' + extensions + "}}"
    path = _doc(tmp_path, _item_doc(item))
    proc = evalkit_cmd("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert written["items"][0]["extensions"]["x"] == json.loads(extensions)


@pytest.mark.parametrize("name", ["spans.json", "spans.jsonl"])
def test_spans_eval_refuses_json_nested_20000_levels(tmp_path, name):
    path = _doc(tmp_path, '{"resourceSpans": ' + "[" * DEEP + "]" * DEEP + "}\n", name)
    proc = evalkit_cmd(
        "spans",
        "eval",
        path,
        "--evaluator",
        "pii_leak",
        "--custom-dir",
        SPAN_EVALUATORS,
        "--out",
        tmp_path / "o",
    )
    assert_one_error(proc, "no valid span found", "nested more than 100 levels deep")


def _post_traces(tmp_path, body: bytes) -> tuple[int, bytes]:
    """POST ``body`` as OTLP JSON to a receiver started for the test: (status, answer)."""
    import http.client

    from evalkit.spans.online.server import serve

    root = tmp_path / "custom-evaluators" / "check"
    root.mkdir(parents=True)
    (root / "check.py").write_text('def lambda_handler(event, context):\n    return {"label": "PASS"}\n')
    server = serve(tmp_path / "store", evaluators=["check"], custom_dir=root.parent, port=0).start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        message = response.read()
        connection.close()
        return response.status, message
    finally:
        server.stop()


def test_receiver_answers_deeply_nested_json_with_400_not_503(tmp_path):
    """503 tells an exporter to retry forever; a body that can never be read is a 400."""
    body = ('{"resourceSpans": ' + "[" * DEEP + "]" * DEEP + "}").encode()
    status, message = _post_traces(tmp_path, body)
    assert status == 400, message
    assert b"nested more than 100 levels deep" in message


# ------------------------------------------------------------------------ numbers Python cannot keep (issue 20)

HUGE_INT = "9" * 5000  # over Python's 4,300-digit int-string limit


def test_validate_refuses_an_integer_of_5000_digits_with_its_path(tmp_path):
    path = _doc(tmp_path, _item_doc('{"prompt": "a", "extensions": {"n": ' + HUGE_INT + "}}"))
    proc = evalkit_cmd("validate", path)
    assert_one_error(proc, str(path), "the integer at items[0].extensions.n has 5,000 digits", "as a string")


@pytest.mark.parametrize("number", ["1e999", "-1e400", "1" + "0" * 400 + ".5"])
def test_run_refuses_a_number_that_would_be_infinity(tmp_path, number):
    path = _doc(tmp_path, _item_doc('{"prompt": "a", "extensions": {"x": [1, ' + number + "]}}"))
    proc = evalkit_cmd("run", path, "--out", tmp_path / "out")
    assert_one_error(proc, str(path), "at items[0].extensions.x[1] is too large for a finite value")
    assert not (tmp_path / "out").exists()


def test_ordinary_large_numbers_still_load(tmp_path):
    import evalkit

    item = '{"prompt": "a", "extensions": {"t": 1764633601000000000, "e": 1e300, "s": "' + "1" * 400 + '"}}'
    frame = evalkit.load(_doc(tmp_path, _item_doc(item)))
    assert frame.loc[0, "extensions"] == {"t": 1764633601000000000, "e": 1e300, "s": "1" * 400}


def test_a_span_line_with_1e999_is_a_problem_of_its_line(tmp_path):
    from evalkit import spans

    good = '{"traceId": "t1", "spanId": "s1", "name": "n", "startTimeUnixNano": 1, "endTimeUnixNano": 2, '
    good += '"attributes": {"session.id": "a"}}'
    bad = good.replace('"s1"', '"s2"').replace('"session.id": "a"', '"session.id": "a", "x": 1e999')
    frame = spans.load(_doc(tmp_path, good + "\n" + bad + "\n", "spans.jsonl"), warn=False)
    assert len(frame) == 1
    assert any("line 2" in p and "x is too large for a finite value" in p for p in frame.attrs["problems"])


@pytest.mark.parametrize("number", [HUGE_INT, "1e999"])
def test_receiver_answers_numbers_it_cannot_keep_with_400_not_503(tmp_path, number):
    body = ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "name": "n", '
            '"startTimeUnixNano": ' + number + ', "endTimeUnixNano": 2}]}]}]}').encode()  # fmt: skip
    status, message = _post_traces(tmp_path, body)
    assert status == 400, message
    assert b"startTimeUnixNano" in message


# ----------------------------------------------------------------------------------------- lone surrogates


def test_validate_refuses_a_lone_surrogate_escape(tmp_path):
    path = _doc(tmp_path, _item_doc(r'{"prompt": "hi \ud800", "expected_response": "x"}'))
    proc = evalkit_cmd("validate", path)
    assert_one_error(proc, f"{path}: items[0].prompt holds a lone surrogate escape (\\ud800)")
    assert "OK" not in proc.stdout


def test_run_refuses_a_lone_surrogate_before_any_work(tmp_path):
    item = (
        r'{"prompt": "a", "response": "a", "expected_response": "a\udc00b", "evaluators": {"ExactMatch": {}}}'
    )
    path = _doc(tmp_path, _item_doc(item))
    proc = evalkit_cmd("run", path, "--out", tmp_path / "out")
    assert_one_error(proc, "items[0].expected_response holds a lone surrogate escape (\\udc00)")
    assert not (tmp_path / "out").exists()


def test_surrogate_pairs_and_escaped_backslashes_are_kept(tmp_path):
    """A complete pair is a character (json.dumps writes emoji so); ``\\\\ud800`` is a backslash and text."""
    item = json.dumps({"prompt": "smile \U0001f600", "expected_response": "\\ud800"})  # ensure_ascii: a pair
    path = _doc(tmp_path, _item_doc(item))
    proc = evalkit_cmd("validate", path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"OK {path}\n"


def test_a_lone_surrogate_in_a_key_is_refused(tmp_path):
    path = _doc(tmp_path, _item_doc(r'{"prompt": "a", "extensions": {"k\ud83d": 1}}'))
    assert_one_error(
        evalkit_cmd("validate", path), "the key 'k\\ud83d' of items[0].extensions holds a lone surrogate"
    )


# ------------------------------------------------------------------------------------------ duplicate keys


def test_validate_refuses_duplicate_keys_naming_the_key_and_its_path(tmp_path):
    path = _doc(tmp_path, _item_doc('{"prompt": "a"}, {"prompt": "first", "prompt": "second"}'))
    proc = evalkit_cmd("validate", path)
    assert_one_error(proc, f"{path}: duplicate key 'prompt' in items[1]:")


def test_run_refuses_duplicate_keys_in_a_nested_object(tmp_path):
    item = '{"prompt": "a", "evaluators": {"ExactMatch": {"case_sensitive": true, "case_sensitive": false}}}'
    path = _doc(tmp_path, _item_doc(item))
    proc = evalkit_cmd("run", path, "--out", tmp_path / "out")
    assert_one_error(proc, "duplicate key 'case_sensitive' in items[0].evaluators.ExactMatch")


def test_duplicate_root_keys_are_refused(tmp_path):
    path = _doc(tmp_path, '{"schemaVersion": "1.11.0", "items": [{"prompt": "a"}], "items": []}')
    assert_one_error(evalkit_cmd("validate", path), "duplicate key 'items' in the top-level object")


def test_spans_eval_reports_a_span_line_with_duplicate_keys(tmp_path):
    span = '{"traceId": "%032x", "spanId": "%016x", "name": "a", "name": "b"}'
    path = _doc(tmp_path, span % (1, 1) + "\n" + span % (1, 2) + "\n", "spans.jsonl")
    proc = evalkit_cmd(
        "spans",
        "eval",
        path,
        "--evaluator",
        "pii_leak",
        "--custom-dir",
        SPAN_EVALUATORS,
        "--out",
        tmp_path / "o",
    )
    assert_one_error(proc, "no valid span found", "line 1: duplicate key 'name' in the top-level object")


def test_receiver_refuses_duplicate_keys_and_lone_surrogates_with_400():
    from evalkit.spans.online.intake import BadRequest, decode_request

    for body, message in (
        (b'{"resourceSpans": [], "resourceSpans": []}', "duplicate key 'resourceSpans'"),
        (rb'{"resourceSpans": [{"x": "\udfff"}]}', "resourceSpans[0].x holds a lone surrogate"),
    ):
        with pytest.raises(BadRequest, match=message.replace("[", r"\[").replace("]", r"\]")) as caught:
            decode_request(body, "application/json", "")
        assert caught.value.status == 400


# ------------------------------------------------------------------------------------------------ size limit


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_validate_refuses_dev_zero_without_reading_it():
    proc = evalkit_cmd("validate", "/dev/zero", env={"EVALKIT_MAX_DOCUMENT_BYTES": "1MiB"}, timeout=60)
    assert_one_error(proc, "/dev/zero: is a character device, not a regular file;")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_spans_eval_refuses_dev_zero_without_reading_it(tmp_path):
    proc = evalkit_cmd(
        "spans", "eval", "/dev/zero", "--evaluator", "pii_leak", "--custom-dir", SPAN_EVALUATORS,
        "--out", tmp_path / "o", env={"EVALKIT_MAX_DOCUMENT_BYTES": "1MB"}, timeout=60,
    )  # fmt: skip
    assert_one_error(proc, "/dev/zero: is a character device, not a regular file;")


def test_run_refuses_a_multi_gb_document_without_reading_it(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:  # sparse: 3 GB on paper, no disk space used
        handle.truncate(3 * 2**30)
    proc = evalkit_cmd("run", path, "--out", tmp_path / "out", timeout=60)
    assert_one_error(
        proc, f"{path}: is larger than the limit of 256 MiB (3 GiB);", "EVALKIT_MAX_DOCUMENT_BYTES=4GB"
    )


def test_the_size_limit_is_configurable(tmp_path):
    path = _doc(tmp_path, _item_doc(json.dumps({"prompt": "x" * 2000})))
    assert evalkit_cmd("validate", path, env={"EVALKIT_MAX_DOCUMENT_BYTES": "3KB"}).returncode == 0
    proc = evalkit_cmd("validate", path, env={"EVALKIT_MAX_DOCUMENT_BYTES": "1000"})
    assert_one_error(proc, f"{path}: is larger than the limit of 1 KB (2,0")
    proc = evalkit_cmd("validate", path, env={"EVALKIT_MAX_DOCUMENT_BYTES": "lots"})
    assert_one_error(proc, "EVALKIT_MAX_DOCUMENT_BYTES='lots' is not a size")


def test_a_gzip_span_file_is_limited_after_decompression(tmp_path):
    import gzip

    path = tmp_path / "spans.jsonl.gz"
    path.write_bytes(gzip.compress(b" " * 2_000_000))
    proc = evalkit_cmd(
        "spans", "eval", path, "--evaluator", "pii_leak", "--custom-dir", SPAN_EVALUATORS,
        "--out", tmp_path / "o", env={"EVALKIT_MAX_DOCUMENT_BYTES": "1MB"},
    )  # fmt: skip
    assert_one_error(proc, f"{path} (decompressed): is larger than the limit of 1 MB;")


# ------------------------------------------------------------------------------------ long names and values


def test_run_refuses_an_evaluator_name_longer_than_the_file_system_allows(tmp_path):
    (tmp_path / "custom-evaluators").mkdir()
    name = "a" * 300
    item = {"prompt": "a", "evaluators": {name: {}}, "evaluators_mode": "replace"}
    path = _doc(tmp_path, _item_doc(json.dumps(item)))
    proc = evalkit_cmd("run", path, "--out", tmp_path / "out", cwd=tmp_path)
    assert_one_error(
        proc,
        "items[0]: evaluator name 'aaaa",
        "…(300 characters) is longer than the file system allows",
        "247",
    )


def test_new_refuses_an_evaluator_name_longer_than_the_file_system_allows(tmp_path):
    proc = evalkit_cmd("new", "b" * 5000, cwd=tmp_path)
    assert_one_error(proc, "…(5,000 characters) is longer than the file system allows")
    assert not (tmp_path / "custom-evaluators").exists()


def test_a_name_at_the_length_limit_is_scaffolded_and_runs(tmp_path):
    name = "c" * 247
    assert evalkit_cmd("new", name, cwd=tmp_path).returncode == 0
    item = {"prompt": "a", "response": "a", "evaluators": {name: {}}, "evaluators_mode": "replace"}
    path = _doc(tmp_path, _item_doc(json.dumps(item)))
    proc = evalkit_cmd("run", path, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_a_50_mb_schema_version_is_quoted_cut_short(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"schemaVersion": "9" * 50_000_000, "items": [{"prompt": "a"}]}))
    proc = evalkit_cmd("validate", path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert (
        "schemaVersion: '99999" in proc.stderr
        and "…(50,000,000 characters) is not a valid version" in proc.stderr
    )
    assert len(proc.stderr) < 500


# ------------------------------------------------------------------------------------------- corrupt store


def _corrupt_stores(tmp_path) -> dict[str, Path]:
    """Store folders whose store.sqlite3 is: random bytes, a truncated real store, another SQLite database."""
    import random
    import sqlite3

    from evalkit.spans.online.store import Store

    stores = {}
    noise = tmp_path / "noise"
    noise.mkdir()
    (noise / "store.sqlite3").write_bytes(random.Random(1).randbytes(64 * 1024))
    stores["noise"] = noise

    truncated = tmp_path / "truncated"
    store = Store(truncated)
    docs = [{"traceId": f"{i:032x}", "spanId": f"{i:016x}", "name": "x" * 2000} for i in range(200)]
    store.add_spans(docs, ["s"] * len(docs), lambda s: True)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    path = truncated / "store.sqlite3"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    stores["truncated"] = truncated

    other = tmp_path / "other"
    other.mkdir()
    with sqlite3.connect(other / "store.sqlite3") as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    stores["other"] = other
    return stores


def test_spans_status_on_a_corrupt_store_is_one_error_line(tmp_path):
    for kind, folder in _corrupt_stores(tmp_path).items():
        proc = evalkit_cmd("spans", "status", "--store", folder)
        assert_one_error(
            proc, f"{folder / 'store.sqlite3'}: cannot be read as an evalkit store", "move it aside"
        )
        assert kind  # which store failed shows in the assertion's traceback


def test_spans_serve_on_a_corrupt_store_is_one_error_line(tmp_path):
    custom = tmp_path / "custom"
    (custom / "check").mkdir(parents=True)
    (custom / "check" / "check.py").write_text(
        'def lambda_handler(event, context):\n    return {"label": "A"}\n'
    )
    for kind, folder in _corrupt_stores(tmp_path).items():
        if kind == "other":  # another program's SQLite file: serve adds its tables beside the others
            continue
        proc = evalkit_cmd(
            "spans", "serve", "--store", folder, "--port", "0", "--evaluator", "check", "--custom-dir", custom,
            timeout=60,
        )  # fmt: skip
        assert_one_error(proc, f"{folder / 'store.sqlite3'}: cannot be read as an evalkit store")


# ------------------------------------------------------------------------------- other JSON the user writes


def test_spans_eval_refuses_deep_reference_inputs(tmp_path):
    spans_file = REPO / "tests" / "data" / "spans" / "small_otlp.json"
    references = _doc(tmp_path, "[" * DEEP + "]" * DEEP, "references.json")
    proc = evalkit_cmd(
        "spans", "eval", spans_file, "--evaluator", "pii_leak", "--custom-dir", SPAN_EVALUATORS,
        "--reference-inputs", references, "--out", tmp_path / "o",
    )  # fmt: skip
    assert_one_error(proc, f"{references}: the reference inputs are not valid JSON", "nested more than 100")


def test_a_labels_file_with_a_repeated_key_is_refused(tmp_path):
    from evalkit.analysis.labels import Labels
    from evalkit.errors import EvalkitError

    path = _doc(tmp_path, '{"version": 1, "labels": [], "labels": [{"item": 0}]}', "doc.labels.json")
    with pytest.raises(EvalkitError, match="duplicate key 'labels' in the top-level object"):
        Labels.load(path)


def test_spans_serve_with_a_file_as_the_store_folder_says_so(tmp_path):
    custom = tmp_path / "custom"
    (custom / "check").mkdir(parents=True)
    (custom / "check" / "check.py").write_text(
        'def lambda_handler(event, context):\n    return {"label": "A"}\n'
    )
    not_a_folder = tmp_path / "store"
    not_a_folder.write_text("")
    proc = evalkit_cmd(
        "spans", "serve", "--store", not_a_folder, "--port", "0", "--evaluator", "check", "--custom-dir", custom,
        timeout=60,
    )  # fmt: skip
    assert_one_error(proc, f"{not_a_folder}: cannot be used as the store folder")
    assert "cannot listen" not in proc.stderr
