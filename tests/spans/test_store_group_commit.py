"""Group commit: span batches that wait while a commit is under way share the next transaction."""

from __future__ import annotations

import threading
import time

import pytest

from evalkit.spans.online.store import Store


def _docs(first: int, count: int) -> list[dict]:
    return [{"traceId": f"{n:032x}", "spanId": f"{n:016x}", "name": "s"} for n in range(first, first + count)]


def test_waiting_batches_are_committed_in_one_transaction_and_each_gets_its_count(tmp_path):
    store = Store(tmp_path / "store")
    commits = []
    store.db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    results: dict[int, int] = {}

    def add(i: int) -> None:
        first = 1 if i == 0 else i * 100  # batch 0 repeats spans of batch 1: only the new ones count
        results[i] = store.add_spans(_docs(first, 10), [f"s{i}"] * 10, lambda s: True)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(1, 9)]
    with store.lock:  # a commit under way: every batch queues behind it
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(store._queue) < 8 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert len(store._queue) == 8
    for thread in threads:
        thread.join(10)
    assert commits == ["COMMIT"]  # one transaction for the eight batches
    assert results == dict.fromkeys(range(1, 9), 10)
    assert store.counts()["spans"] == 80 and store.counts()["open"] == 8
    assert store.add_spans(_docs(100, 10), ["s1"] * 10, lambda s: True) == 0  # already stored
    store.close()


def test_a_failed_group_commit_fails_every_batch_in_it(tmp_path):
    store = Store(tmp_path / "store")
    errors = []

    def sampled(session: str) -> bool:
        raise RuntimeError("disk full")  # fails inside the transaction, as a write error would

    def add(i: int) -> None:
        try:
            store.add_spans(_docs(i * 100, 5), [f"s{i}"] * 5, sampled)
        except RuntimeError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=add, args=(i,)) for i in range(1, 4)]
    with store.lock:
        for thread in threads:
            thread.start()
        while len(store._queue) < 3:
            time.sleep(0.005)
    for thread in threads:
        thread.join(10)
    assert errors == ["disk full"] * 3
    assert store.counts()["spans"] == 0  # rolled back: nothing acknowledged, nothing stored
    with pytest.raises(RuntimeError):
        store.add_spans(_docs(1, 1), ["s"], sampled)
    store.close()
