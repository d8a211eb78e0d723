"""The judge cache and the online store hold prompts and completions: owner-only folders and files."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from evalkit.judges.cache import JudgeCache, cache_key
from evalkit.spans.online.store import Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def open_umask():
    """A permissive umask (as on many shared machines), so only evalkit's own modes can keep files private."""
    previous = os.umask(0o002)
    yield
    os.umask(previous)


def test_the_judge_cache_is_created_owner_only(tmp_path, open_umask):
    folder = tmp_path / "new" / "cache"
    with JudgeCache(folder / "judge.sqlite3") as cache:
        key = cache_key(evaluator="builtin:Relevance@1", model={"model": "m"}, inputs={"response": "r"})
        assert cache.put(key, "builtin:Relevance@1", {"score": 4, "reason": "the answer"})
        files = [p for p in folder.iterdir()]
        assert {p.name for p in files} >= {"judge.sqlite3", "judge.sqlite3-wal", "judge.sqlite3-shm"}
        assert mode(folder) == 0o700
        assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}


def test_an_existing_world_readable_cache_file_is_narrowed(tmp_path, open_umask):
    path = tmp_path / "judge.sqlite3"
    with JudgeCache(path):
        pass
    os.chmod(path, 0o644)
    with JudgeCache(path) as cache:
        assert cache.enabled
        assert mode(path) == 0o600


def test_an_existing_folder_is_left_as_it_is(tmp_path, open_umask):
    os.chmod(tmp_path, 0o755)
    with JudgeCache(tmp_path / "judge.sqlite3"):
        pass
    assert mode(tmp_path) == 0o755
    assert mode(tmp_path / "judge.sqlite3") == 0o600


def test_the_online_store_is_created_owner_only(tmp_path, open_umask):
    folder = tmp_path / "store"
    store = Store(folder)
    try:
        doc = {
            "traceId": "t1",
            "spanId": "s1",
            "name": "chat",
            "attributes": {"gen_ai.prompt": "secret plan"},
        }
        assert store.add_spans([doc], ["session-1"], lambda _: True) == 1
        files = list(folder.iterdir())
        assert {p.name for p in files} >= {"store.sqlite3", "store.sqlite3-wal", "store.sqlite3-shm"}
        assert mode(folder) == 0o700
        assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    finally:
        store.close()
