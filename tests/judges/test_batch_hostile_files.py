"""Batch judging with hostile or broken files (issue 29 items 8 and 10): output lines that are not JSON objects,
repeated custom ids, and batch journals changed by hand. Through the model server's Batch API and the real
``openai`` client; nothing is mocked."""

from __future__ import annotations

import json
import logging
import os

import pytest

import evalkit
from evalkit.judges.batch.journal import Journal
from evalkit.judges.cache import JudgeCache
from tests.judges.test_batch_judging import small_document
from tests.judges.test_judge_usage import config

pytest_plugins = ["evalkit.testing.pytest_plugin"]


def batched(server, tmp_path):
    return evalkit.evaluate(
        evalkit.load(small_document()),
        model_config=config(server),
        cache=JudgeCache(tmp_path / "c.sqlite3"),
        progress=False,
        batch=True,
    )


@pytest.mark.parametrize("text", ["not json", "[1, 2]", "[" * 3000 + "]" * 3000, '{"custom_id": ["x"]}'])
def test_an_output_line_that_is_not_a_json_object_is_a_failed_line_retried_once(model_server, tmp_path, text):
    model_server.batches.garble_lines(1, text)
    scored = batched(model_server, tmp_path)
    report = scored.attrs["evalkit"]["judge"]["batch"]
    assert report["retried"] == 1 and report["failed"] == 0 and len(report["batches"]) == 2
    assert scored["relevance"].notna().sum() == 3


def test_an_output_line_unreadable_twice_is_an_error_naming_the_batch_and_the_line(model_server, tmp_path):
    model_server.batches.garble_lines(
        4, "[1, 2]"
    )  # the 3 lines of the first batch, and the first retried one
    scored = batched(model_server, tmp_path)
    report = scored.attrs["evalkit"]["judge"]["batch"]
    assert report["retried"] == 3 and report["failed"] == 1
    (message,) = scored["relevance_error"].dropna().tolist()
    first, second = report["batches"]
    key = model_server.batches.lines[3]["custom_id"]  # the first line of the second batch
    files = model_server.batches.batches
    assert message == (
        f"the judge's batch line failed twice: no result read from batch {second}: line 1 of its file "
        f"{files[second]['output_file_id']} is not a JSON object: '[1, 2]' (batch {second}, line {key}); "
        f"first try: no result read from batch {first}: line 1 of its file {files[first]['output_file_id']} is "
        f"not a JSON object: '[1, 2]' (and 2 more) (batch {first}, line {key})"
    )
    assert scored["relevance"].notna().sum() == 2


def test_an_output_with_every_custom_id_twice_is_warned_about(model_server, tmp_path, caplog):
    model_server.batches.repeat_output = True
    with caplog.at_level(logging.WARNING, logger="evalkit.judges"):
        scored = batched(model_server, tmp_path)
    assert scored["relevance"].notna().sum() == 3
    (batch,) = scored.attrs["evalkit"]["judge"]["batch"]["batches"]
    warned = [r.getMessage() for r in caplog.records if "more than one line" in r.getMessage()]
    assert len(warned) == 1
    assert warned[0].startswith(
        f"judge batch {batch}: its results name 3 custom id(s) on more than one line ("
    )
    assert warned[0].endswith("); the last line of each is kept")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "malformed JSON at line 1, column 2"),
        ('{"batch": "b", "endpoint": "E", "lines": 5, "attempt": 1, "created": 1}', "its 'lines' is not"),
        (
            '{"batch": "b", "endpoint": "E", "lines": [["k"]], "attempt": 1, "created": 1}',
            "its 'lines' is not",
        ),
        (
            '{"batch": "b", "endpoint": "E", "lines": ["k"], "attempt": "x", "created": 1}',
            "its 'attempt' is not",
        ),
        (
            '{"batch": "b", "endpoint": "E", "lines": ["k"], "attempt": 1, "created": "x"}',
            "its 'created' is not",
        ),
        ('{"batch": "b", "endpoint": "E", "lines": ["k"], "attempt": 1}', "it has no 'created'"),
        ("[" * 3000 + "]" * 3000, "nested more than 100 levels deep"),
        ("[]", "it is not a JSON object"),
    ],
)
def test_a_tampered_journal_is_skipped_as_unreadable_with_a_warning(tmp_path, caplog, content, problem):
    journal = Journal(tmp_path / "batches", "E")
    journal.keep("good", ["k1"], 1)
    (tmp_path / "batches" / "tampered.json").write_text(content, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="evalkit.judges"):
        assert [e["batch"] for e in journal.entries()] == ["good"]
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning.startswith(f"judge batch journal {tmp_path / 'batches' / 'tampered.json'} is unreadable")
    assert problem in warning


def test_a_journal_that_is_a_named_pipe_is_skipped_not_waited_on(tmp_path, caplog):
    journal = Journal(tmp_path / "batches", "E")
    journal.keep("good", ["k1"], 1)
    os.mkfifo(tmp_path / "batches" / "pipe.json")
    with caplog.at_level(logging.WARNING, logger="evalkit.judges"):
        assert [e["batch"] for e in journal.entries()] == ["good"]
    assert "pipe.json is unreadable and skipped" in caplog.records[0].getMessage()


def test_a_tampered_journal_does_not_stop_a_batch_run(model_server, tmp_path):
    folder = tmp_path / "batches"
    folder.mkdir()
    endpoint = model_server.openai_base_url.rstrip("/")
    entry = {"batch": "b", "endpoint": endpoint, "lines": 5, "attempt": 1, "created": 1}
    (folder / "b.json").write_text(json.dumps(entry), encoding="utf-8")
    scored = evalkit.evaluate(
        evalkit.load(small_document()),
        model_config=config(model_server),
        cache=JudgeCache(tmp_path / "c.sqlite3"),
        progress=False,
        batch=True,
    )
    assert scored["relevance"].notna().sum() == 3
