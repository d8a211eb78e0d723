"""The judge cache: keys that change exactly when a judgement could, a SQLite store that survives kill -9 and
threads, never holds a secret, and never makes a run fail; and the ``evalkit cache`` command."""

from __future__ import annotations

import argparse
import hashlib
import logging
import math
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evalkit.cli import cache as cache_command
from evalkit.errors import EvalkitError
from evalkit.judges import cache as cache_module
from evalkit.judges.cache import (
    DEFAULT_FILENAME,
    JudgeCache,
    NullCache,
    cache_dir,
    cache_key,
    is_error_result,
    is_secret_name,
    redact_secrets,
)

REPO = Path(__file__).resolve().parents[2]

MODEL = {
    "azure_endpoint": "https://judge.openai.azure.com",
    "azure_deployment": "gpt-4o",
    "api_version": "2024-10-21",
    "temperature": 0.0,
    "max_tokens": 800,
}
INPUTS = {
    "query": "What is the capital of France?",
    "response": "Paris.",
    "context": ["Paris is the capital."],
}
EVALUATOR = "builtin:Relevance@azure-ai-evaluation==1.18.10"
VALUE = {
    "relevance": 5.0,
    "relevance_result": "pass",
    "relevance_threshold": 3,
    "relevance_reason": "On topic.",
}


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path, monkeypatch):
    """No test touches the real user cache: the default location is a folder of the test's own."""
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "user-cache"))


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "cache" / "judge.sqlite3"


def key(**changes) -> str:
    args = {"evaluator": EVALUATOR, "model": MODEL, "inputs": INPUTS, "sample": 0}
    args.update(changes)
    return cache_key(**args)


# -- keys ------------------------------------------------------------------------------------------------


def test_key_is_sha256_of_canonical_json_and_ignores_dict_order():
    reordered_model = dict(reversed(list(MODEL.items())))
    reordered_inputs = dict(reversed(list(INPUTS.items())))
    assert key() == key() == key(model=reordered_model, inputs=reordered_inputs)
    canonical = (
        '{"evaluator":"builtin:Relevance@azure-ai-evaluation==1.18.10","inputs":{"context":["Paris is the '
        'capital."],"query":"What is the capital of France?","response":"Paris."},"model":{"api_version":'
        '"2024-10-21","azure_deployment":"gpt-4o","azure_endpoint":"https://judge.openai.azure.com",'
        '"max_tokens":800,"temperature":0.0},"sample":0,"v":1}'
    )
    assert key() == hashlib.sha256(canonical.encode()).hexdigest()


def test_key_keeps_non_ascii_and_float_repr():
    text = {"query": "Où est le café ☕?", "score": 0.1 + 0.2}
    expected = (
        '{"evaluator":"e","inputs":{"query":"Où est le café ☕?","score":0.30000000000000004},'
        '"model":{},"sample":0,"v":1}'
    )
    assert cache_key(evaluator="e", model={}, inputs=text) == hashlib.sha256(expected.encode()).hexdigest()


@pytest.mark.parametrize(
    "changes",
    [
        {"evaluator": "builtin:Relevance@azure-ai-evaluation==1.18.11"},
        {"evaluator": "custom:tone@" + "0" * 64},
        {"model": {**MODEL, "temperature": 0.1}},
        {"model": {**MODEL, "azure_deployment": "gpt-4o-mini"}},
        {"model": {**MODEL, "max_tokens": 801}},
        {"model": {**MODEL, "seed": 7}},
        {"inputs": {**INPUTS, "response": "Paris"}},
        {"inputs": {**INPUTS, "response": "Paris. "}},
        {"inputs": {**INPUTS, "context": ["Paris is the capital.", "More."]}},
        {"inputs": {**INPUTS, "ground_truth": "Paris"}},
        {"sample": 1},
    ],
    ids=lambda c: next(iter(c)) + ":" + str(c[next(iter(c))])[:40],
)
def test_key_changes_when_anything_that_decides_the_judgement_changes(changes):
    assert key(**changes) != key()


def test_int_and_float_are_different_inputs():
    assert key(inputs={"n": 1}) != key(inputs={"n": 1.0})


@pytest.mark.parametrize(
    "secret",
    [
        {"api_key": "sk-ONE"},
        {"API_KEY": "sk-ONE"},
        {"apiKey": "sk-ONE"},
        {"azure_ad_token": "eyJ-ONE"},
        {"password": "hunter2"},
        {"client_secret": "s3cr3t"},
        {"credential": "cred"},
        {
            "default_headers": {
                "Authorization": "Bearer ONE",
                "api-key": "ONE",
                "Ocp-Apim-Subscription-Key": "1",
            }
        },
        {"extra": [{"token": "ONE"}]},
    ],
    ids=lambda s: next(iter(s)),
)
def test_secret_fields_do_not_change_the_key(secret):
    base = {**MODEL, "default_headers": {}, "extra": [{}]}
    rotated = {**base, **secret}
    assert key(model=rotated) == key(model=base)
    assert key(model=rotated) != key(model=MODEL)  # the non-secret structure still counts


def test_api_key_rotation_keeps_the_key():
    assert key(model={**MODEL, "api_key": "sk-old"}) == key(model={**MODEL, "api_key": "sk-new"}) == key()


@pytest.mark.parametrize(
    "name, secret",
    [
        ("api_key", True),
        ("key", True),
        ("subscriptionKey", True),
        ("X-API-Key", True),
        ("access_token", True),
        ("azure_ad_token_provider", True),
        ("Authorization", True),
        ("credentials", True),
        ("max_tokens", False),
        ("max_completion_tokens", False),
        ("keywords", False),
        ("monkey", False),
        ("azure_deployment", False),
        ("temperature", False),
    ],
)
def test_secret_names_are_matched_by_word_not_substring(name, secret):
    assert is_secret_name(name) is secret


def test_redact_secrets_recurses_and_does_not_modify_its_argument():
    model = {
        "api_key": "x",
        "headers": {"Authorization": "y", "Accept": "json"},
        "list": [{"token": "z", "n": 1}],
    }
    assert redact_secrets(model) == {"headers": {"Accept": "json"}, "list": [{"n": 1}]}
    assert model["api_key"] == "x" and model["headers"]["Authorization"] == "y"


def test_key_refuses_values_it_cannot_spell_canonically():
    with pytest.raises(TypeError):
        key(inputs={"when": object()})
    with pytest.raises(TypeError):
        key(evaluator="")
    with pytest.raises(TypeError):
        key(sample="0")


def test_numpy_values_key_like_python_values():
    np = pytest.importorskip("numpy")
    assert key(inputs={"n": np.int64(3), "x": np.float32(0.5), "v": np.array([1, 2])}) == key(
        inputs={"n": 3, "x": 0.5, "v": [1, 2]}
    )


# -- the store -------------------------------------------------------------------------------------------


def test_put_get_round_trip(db):
    value = {**VALUE, "details": {"tokens": [1, 2], "note": "naïve ☕"}, "score": math.nan}
    with JudgeCache(db) as cache:
        assert cache.get(key()) is None
        assert cache.put(key(), EVALUATOR, value) is True
        got = cache.get(key())
    assert math.isnan(got.pop("score"))
    value.pop("score")
    assert got == value


def test_put_replaces_an_existing_entry(db):
    with JudgeCache(db) as cache:
        cache.put(key(), EVALUATOR, {"score": 1})
        cache.put(key(), EVALUATOR, {"score": 2})
        assert cache.get(key()) == {"score": 2}
        assert cache.info()["entries"] == 1


def test_hits_are_counted(db):
    with JudgeCache(db) as cache:
        cache.put(key(), EVALUATOR, VALUE)
        cache.get(key())
        cache.get(key())
        cache.get_many([key(), key(sample=1)])
        cache.get("missing")
        assert cache.info()["hits"] == 3
        assert cache.stats() == {"hits": 3, "misses": 2, "stored": 1, "refused": 0}


@pytest.mark.parametrize(
    "value",
    [
        {"result": "error", "error": "Timeout", "code": "evaluatorError"},
        {"relevance": None, "error": "RateLimitError: 429"},
        {"status": "error"},
        {"score": None, "result": "error", "error": None},
    ],
)
def test_error_results_are_never_cached(db, value):
    with JudgeCache(db) as cache:
        assert cache.put(key(), EVALUATOR, value) is False
        assert cache.get(key()) is None
        assert cache.info()["entries"] == 0
        assert cache.stats()["refused"] == 1


@pytest.mark.parametrize("empty", [None, "", math.nan])
def test_an_empty_error_column_is_not_an_error(db, empty):
    value = {"score": 1.0, "result": "pass", "error": empty}
    assert not is_error_result(value)
    with JudgeCache(db) as cache:
        assert cache.put(key(), EVALUATOR, value) is True


@pytest.mark.parametrize("value", [{"when": object()}, ["not", "a", "dict"], {"s": {1, 2}}])
def test_values_must_be_json_dicts(db, value):
    with JudgeCache(db) as cache:
        with pytest.raises(TypeError):
            cache.put(key(), EVALUATOR, value)
    with pytest.raises(TypeError):
        NullCache().put(key(), EVALUATOR, value)


def test_database_is_in_wal_mode_with_synchronous_normal(db):
    with JudgeCache(db) as cache:
        cache.put(key(), EVALUATOR, VALUE)
        assert cache._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        other = sqlite3.connect(db)
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        columns = [row[1:3] for row in other.execute("PRAGMA table_info(judge_cache)")]
        other.close()
    assert columns == [
        ("key", "TEXT"),
        ("evaluator", "TEXT"),
        ("value", "TEXT"),
        ("created", "REAL"),
        ("hits", "INTEGER"),
    ]


def test_entries_persist_across_reopen(db):
    with JudgeCache(db) as cache:
        cache.put(key(), EVALUATOR, VALUE)
    with JudgeCache(db) as cache:
        assert cache.get(key()) == VALUE


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_puts_survive_kill_9(db):
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(REPO)!r})
from evalkit.judges.cache import JudgeCache
cache = JudgeCache({str(db)!r})
for i in range(100):
    assert cache.put(f"key-{{i}}", "builtin:X", {{"score": i}})
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert Path(f"{db}-wal").exists()  # killed before any clean close: the entries live in the WAL
    with JudgeCache(db) as cache:
        found = cache.get_many(f"key-{i}" for i in range(100))
        assert cache.info()["entries"] == 100
    assert found == {f"key-{i}": {"score": i} for i in range(100)}


def test_concurrent_puts_and_gets_from_32_threads(db):
    per_thread = 100
    failures: list[BaseException] = []
    start = threading.Barrier(32)

    with JudgeCache(db) as cache:

        def work(t: int) -> None:
            try:
                start.wait()
                for i in range(per_thread):
                    k = key(sample=t * per_thread + i)
                    assert cache.put(k, f"builtin:T{t}", {"t": t, "i": i})
                    assert cache.get(k) == {"t": t, "i": i}
            except BaseException as exc:  # reported by the main thread
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures, failures[:3]
        assert cache.enabled
        info = cache.info()
    assert info["entries"] == 32 * per_thread
    assert info["hits"] == 32 * per_thread
    assert info["evaluators"] == {f"builtin:T{t}": per_thread for t in range(32)}


def test_get_many_beyond_sqlites_variable_limit(db):
    with JudgeCache(db) as cache:
        if hasattr(
            cache._db, "setlimit"
        ):  # Python 3.11+: the oldest limit, whatever this SQLite was built with
            cache._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
            total = 2_500
        else:  # above the default limit of SQLite 3.32+ (32,766)
            total = 40_000
        stored = {key(sample=i): {"i": i} for i in range(0, total, 5)}
        for k, v in stored.items():
            cache.put(k, EVALUATOR, v)
        found = cache.get_many([key(sample=i) for i in range(total)])
        assert cache.enabled
        assert found == stored
        assert cache.info()["hits"] == len(stored)


def test_get_many_with_duplicates_and_no_keys(db):
    with JudgeCache(db) as cache:
        cache.put(key(), EVALUATOR, VALUE)
        assert cache.get_many([]) == {}
        assert cache.get_many([key(), key()]) == {key(): VALUE}
        assert cache.info()["hits"] == 1


def test_info_and_clear_by_prefix(db):
    with JudgeCache(db) as cache:
        for i in range(3):
            cache.put(key(sample=i), "builtin:Relevance@1", VALUE)
        for i in range(2):
            cache.put(key(sample=10 + i), "custom:tone@abc", VALUE)
        cache.put(key(sample=20), "custom:Tone@abc", VALUE)
        info = cache.info()
        assert info["path"] == str(db)
        assert info["entries"] == 6
        assert info["size_bytes"] > 0
        assert info["evaluators"] == {"builtin:Relevance@1": 3, "custom:Tone@abc": 1, "custom:tone@abc": 2}
        assert cache.clear("custom:t_ne") == 0  # literal prefix, not a LIKE pattern
        assert cache.clear("custom:tone") == 2  # case-sensitive: custom:Tone stays
        assert cache.info()["evaluators"] == {"builtin:Relevance@1": 3, "custom:Tone@abc": 1}
        assert cache.get(key(sample=0)) == VALUE
        assert cache.clear() == 4
        assert cache.info()["entries"] == 0
        assert cache.clear() == 0


def test_clear_gives_space_back(db):
    with JudgeCache(db) as cache:
        for i in range(2000):
            cache.put(key(sample=i), EVALUATOR, {**VALUE, "reason": "x" * 500})
        full = cache.info()["size_bytes"]
        cache.clear()
        assert cache.info()["size_bytes"] < full / 10


def test_corrupt_file_gives_a_disabled_cache_and_is_left_alone(db, caplog):
    db.parent.mkdir(parents=True)
    garbage = b"this is not a SQLite database\n" * 200
    db.write_bytes(garbage)
    with caplog.at_level(logging.WARNING, logger="evalkit.judges.cache"):
        cache = JudgeCache(db)
    assert not cache.enabled
    assert "not a database" in cache.reason
    assert any("judge cache disabled" in r.getMessage() for r in caplog.records)
    assert cache.put(key(), EVALUATOR, VALUE) is False
    assert cache.get(key()) is None
    assert cache.get_many([key()]) == {}
    assert cache.clear() == 0
    assert cache.info()["enabled"] is False
    cache.close()
    assert db.read_bytes() == garbage


def test_unopenable_path_gives_a_disabled_cache(tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    cache = JudgeCache(folder)
    assert not cache.enabled
    assert cache.put(key(), EVALUATOR, VALUE) is False


def test_database_of_a_newer_layout_is_not_touched(db):
    with JudgeCache(db):
        pass
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    cache = JudgeCache(db)
    assert not cache.enabled and "newer evalkit" in cache.reason


def test_a_database_failure_in_use_disables_instead_of_raising(db, caplog):
    cache = JudgeCache(db)
    cache.put(key(), EVALUATOR, VALUE)
    other = sqlite3.connect(db)
    other.execute("DROP TABLE judge_cache")
    other.close()
    with caplog.at_level(logging.WARNING, logger="evalkit.judges.cache"):
        assert cache.get(key()) is None
    assert not cache.enabled
    assert cache.put(key(), EVALUATOR, VALUE) is False
    assert any("judge cache disabled" in r.getMessage() for r in caplog.records)


def test_disabled_and_null_caches_store_nothing(db):
    for cache in (JudgeCache.disabled(db, reason="test"), NullCache()):
        with cache:
            assert cache.put(key(), EVALUATOR, VALUE) is False
            assert cache.get(key()) is None
            assert cache.get_many([key()]) == {}
            assert cache.clear() == 0
            assert cache.info()["entries"] == 0 and cache.info()["enabled"] is False
    assert not db.exists()


def test_closed_cache_finds_and_stores_nothing(db):
    cache = JudgeCache(db)
    cache.put(key(), EVALUATOR, VALUE)
    cache.close()
    assert cache.get(key()) is None
    assert cache.put(key(sample=1), EVALUATOR, VALUE) is False
    cache.close()


def test_no_secret_ever_reaches_the_files(db):
    model = {
        **MODEL,
        "api_key": "sk-SECRET123",
        "default_headers": {"Authorization": "Bearer sk-SECRET123", "x-marker": "VISIBLE-MARKER"},
    }
    cache = JudgeCache(db)
    for i in range(50):
        k = cache_key(evaluator=EVALUATOR, model=model, inputs={**INPUTS, "i": i})
        assert cache.put(k, EVALUATOR, {**VALUE, "judge": redact_secrets(model), "i": i})
    assert cache.get(cache_key(evaluator=EVALUATOR, model=model, inputs={**INPUTS, "i": 0}))["i"] == 0

    def contents() -> bytes:
        files = [Path(f"{db}{suffix}") for suffix in ("", "-wal", "-shm")]
        return b"".join(f.read_bytes() for f in files if f.exists())

    while_open = contents()
    assert Path(f"{db}-wal").exists() and Path(f"{db}-shm").exists()
    cache.close()
    after_close = contents()
    for data in (while_open, after_close):
        assert b"VISIBLE-MARKER" in data  # the scan sees what was stored...
        assert b"SECRET123" not in data  # ...and the secret is not among it


# -- where the cache lives -----------------------------------------------------------------------------------


def test_evalkit_cache_dir_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    with JudgeCache() as cache:
        assert cache.path == tmp_path / "mine" / DEFAULT_FILENAME
        assert cache.put(key(), EVALUATOR, VALUE)
    assert (tmp_path / "mine" / DEFAULT_FILENAME).exists()


@pytest.mark.parametrize(
    "platform, env, expected",
    [
        ("linux", {"XDG_CACHE_HOME": "/xdg"}, "/xdg/evalkit"),
        ("linux", {"XDG_CACHE_HOME": "relative"}, "~/.cache/evalkit"),
        ("linux", {}, "~/.cache/evalkit"),
        ("darwin", {"XDG_CACHE_HOME": "/xdg"}, "~/Library/Caches/evalkit"),
        ("win32", {"LOCALAPPDATA": "/appdata"}, "/appdata/evalkit/Cache"),
    ],
)
def test_platform_cache_dirs(monkeypatch, tmp_path, platform, env, expected):
    monkeypatch.delenv("EVALKIT_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("LOCALAPPDATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "platform", platform)
    assert cache_dir() == Path(expected.replace("~", str(tmp_path)))


# -- evalkit cache info|clear --------------------------------------------------------------------------------


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="evalkit")
    cache_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    return args.func(args)


@pytest.fixture
def filled(tmp_path) -> Path:
    path = cache_dir() / DEFAULT_FILENAME
    with JudgeCache(path) as cache:
        for i in range(3):
            cache.put(key(sample=i), "builtin:Relevance@1", VALUE)
        cache.put(key(sample=9), "custom:tone@abc", VALUE)
        cache.get(key(sample=0))
    return path


def test_cli_info(filled, capsys):
    assert cli("cache", "info") == 0
    out = capsys.readouterr().out
    assert f"Path:     {filled}" in out
    assert "Entries:  4" in out
    assert "Hits:     1" in out
    assert "KiB" in out
    assert "  builtin:Relevance@1          3" in out
    assert "  custom:tone@abc              1" in out


def test_cli_info_without_a_cache_creates_nothing(capsys):
    assert cli("cache", "info") == 0
    assert "Entries:  0 (no cache yet)" in capsys.readouterr().out
    assert not cache_dir().exists()


def test_cli_clear_by_prefix_then_all(filled, capsys):
    assert cli("cache", "clear", "--evaluator", "custom:") == 0
    assert "Removed 1 entry for evaluators starting with 'custom:'" in capsys.readouterr().out
    assert cli("cache", "clear") == 0
    assert f"Removed 3 entries from {filled}" in capsys.readouterr().out
    with JudgeCache(filled) as cache:
        assert cache.info()["entries"] == 0


def test_cli_reports_a_corrupt_cache_and_refuses_to_clear_it(capsys):
    path = cache_dir() / DEFAULT_FILENAME
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage" * 100)
    assert cli("cache", "info") == 0
    assert "unusable" in capsys.readouterr().out
    with pytest.raises(EvalkitError, match="cannot clear"):
        cli("cache", "clear")
    assert path.read_bytes() == b"garbage" * 100


def test_cli_needs_an_action(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli("cache")
    assert exit_info.value.code == 2


def test_chunk_is_under_the_oldest_variable_limit():
    assert cache_module.CHUNK <= 999
