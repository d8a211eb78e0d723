"""The batch run itself: passes over the judges, batches between them, answers in the judge cache at the end.

``judge_in_batches(score_pass, pool, config)`` runs ``score_pass`` (the engine's scoring of every evaluator)
with the pool's ``StandIn`` set:

1. Pass 1 records every judge request and defers it (``Deferred``): nothing is sent, nothing cached.
2. The recorded lines go out in JSONL batches (``api.pack``: one model a file, within the service's
   limits), each batch id kept in the journal (``journal``) before waiting on it (``waiting``).
3. The next pass answers each request from the batch results (each library parses its own reply) and defers
   any request it has no answer for: a failed or expired line (sent again, once, in a new batch; a second
   failure is an error result naming both batches and the line), or a request that depends on an answer
   (a judge that asks twice in a row). Steps 2-3 repeat until a pass defers nothing, at most ``MAX_PASSES``.
4. Only that last pass counts: the pool's counters and token meters are put back before every pass, and the
   judge cache keeps the pass's results back until it has deferred nothing, then stores them all. So the
   run's judge calls are the batch lines answered (and the retried lines' failed tries), its tokens those
   of the batch replies, and a re-run is all cache hits.

A run killed while waiting finds its lines in the journal when run again and polls those batches instead of
paying again; a kept batch's file is removed once its answers are in the cache.

May import: ``evalkit.judges.batch``, ``evalkit.judges.cache``.
"""

from __future__ import annotations

import copy
import logging
import sys
import time
from collections import Counter
from pathlib import Path

from evalkit.judges.batch.api import BatchAPI, pack
from evalkit.judges.batch.journal import Journal
from evalkit.judges.batch.stand_in import StandIn, service_url
from evalkit.judges.batch.waiting import wait_for
from evalkit.judges.cache import cache_dir, is_error_result

log = logging.getLogger("evalkit.judges")

MAX_PASSES = 6
FOLDER = "batches"


class HeldCache:
    """The judge cache during the passes: each key is read once (later passes see the same answer, and the
    cache's hit counts are not multiplied by the passes), and writes wait for ``flush`` (the last pass's)."""

    def __init__(self, cache):
        self.cache = cache
        self.held: list[tuple[str, str, dict]] = []
        self._read: dict[str, dict | None] = {}

    def new_pass(self) -> None:
        self.held.clear()

    def get_many(self, keys):
        wanted = [k for k in dict.fromkeys(keys) if k not in self._read]
        if wanted:
            found = self.cache.get_many(wanted)
            self._read.update({k: found.get(k) for k in wanted})
        return {k: self._read[k] for k in keys if self._read.get(k) is not None}

    def get(self, key):
        return self.get_many([key]).get(key)

    def put(self, key: str, evaluator: str, value: dict) -> bool:
        if is_error_result(value):
            return self.cache.put(key, evaluator, value)  # counted as refused, stores nothing
        self.held.append((key, evaluator, value))
        return True

    def flush(self) -> int:
        return sum(bool(self.cache.put(*entry)) for entry in self.held)


def batch_folder(cache) -> Path:
    """``batches/`` beside the judge cache's database (the user's cache folder without one)."""
    path = getattr(cache, "path", None)
    return (Path(path).parent if path else cache_dir()) / FOLDER


class _Run:
    """What one batch run knows across its passes."""

    def __init__(self, api: BatchAPI, journal: Journal, progress):
        self.api, self.journal, self.progress = api, journal, progress
        self.stand_in = StandIn()
        self.tries: dict[str, int] = {}  # line key -> batches it went out in
        self.first: dict[str, str] = {}  # line key -> what its first try ended as
        self.retried = Counter()  # evaluator -> failed tries sent again
        self.processed: set[str] = set()
        self.report = {"batches": [], "resumed": [], "lines": 0, "retried": 0, "failed": 0, "waited_s": 0.0}

    def round(self, pending: dict) -> None:
        kept = {}
        for entry in self.journal.entries():
            if entry["batch"] not in self.processed:
                kept.update({key: entry for key in entry["lines"]})
        waiting, fresh = {}, []
        for key, line in pending.items():
            entry = kept.get(key)
            if entry is not None:
                waiting[entry["batch"]] = entry
                self.tries[key] = max(self.tries.get(key, 0), int(entry.get("attempt", 1)) - 1)
            else:
                fresh.append(line)
        resumed = [b for b in waiting if b not in self.report["batches"]]
        self.report["resumed"] += resumed
        for batch_id in resumed:
            log.info("judge batch %s: resuming (kept in %s)", batch_id, self.journal.folder)
        self.evaluators = {key: line.evaluator for key, line in pending.items()}
        for entry in self._submit(fresh):
            waiting[entry["batch"]] = entry
        started = time.monotonic()
        try:
            finals = wait_for(self.api, list(waiting), progress=self.progress)
        except KeyboardInterrupt:
            print(
                f"Stopped waiting for {', '.join(waiting)}: the batch ids are kept in {self.journal.folder}; "
                "run the same command again to pick the batches up without paying again.",
                file=sys.stderr,
            )
            raise
        self.report["waited_s"] += time.monotonic() - started
        for batch_id, batch in finals.items():
            self._read(waiting[batch_id], batch)

    def _submit(self, lines) -> list[dict]:
        encoded = [self.api.line(line.key, line.body) for line in lines]
        key_of = {id(data): line.key for line, (_, data) in zip(lines, encoded)}  # pack keeps the same bytes
        attempt_of = {line.key: self.tries.get(line.key, 0) + 1 for line in lines}
        entries = []
        for file in pack(encoded, self.api.max_lines, self.api.max_bytes):
            data = b"".join(d for _, d in file)
            keys = [key_of[id(d)] for _, d in file]
            batch_id = self.api.submit(data)
            attempt = max(attempt_of[k] for k in keys)
            entries.append(self.journal.keep(batch_id, keys, attempt))
            self.report["batches"].append(batch_id)
            self.report["lines"] += len(keys)
        return entries

    def _read(self, entry: dict, batch) -> None:
        batch_id = entry["batch"]
        self.processed.add(batch_id)
        if batch is None:  # the service forgot it: its lines go out again, not counted as a try
            log.warning("judge batch %s is unknown to the service: its lines are sent again", batch_id)
            self.journal.drop(batch_id)
            return
        answers, failures = self.api.results(batch)
        whole = failures.pop("*", None)
        for key in entry["lines"]:
            if key in answers:
                self.stand_in.answers[key] = answers[key]
                continue
            if key not in self.evaluators:  # a line of a kept batch that this run does not ask for
                continue
            why = failures.get(key) or whole or f"no result in batch {batch_id} (status {batch.status})"
            self._failed(key, batch_id, why)

    def _failed(self, key: str, batch_id: str, why: str) -> None:
        tries = self.tries.get(key, 0) + 1
        self.tries[key] = tries
        where = f"batch {batch_id}, line {key}"
        if tries < 2:
            self.first[key] = f"{why} ({where})"
            self.retried[self.evaluators.get(key, "")] += 1
            self.report["retried"] += 1
            return
        earlier = f"; first try: {self.first[key]}" if key in self.first else ""
        self.stand_in.failures[key] = f"the judge's batch line failed twice: {why} ({where}){earlier}"
        self.report["failed"] += 1


def _counters(pool) -> tuple:
    return pool.calls_made, pool.cache_hits, pool.limit.cuts, copy.deepcopy(pool.usage.by_evaluator)


def _restore(pool, counters: tuple) -> None:
    pool.calls_made, pool.cache_hits, pool.limit.cuts, spent = counters
    with pool.usage._lock:
        pool.usage.by_evaluator = copy.deepcopy(spent)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass


def judge_in_batches(score_pass, pool, config: dict, progress: bool | None = None, folder=None):
    """``(score_pass's last result, report)``: every judge request of ``score_pass(bar)`` through the Batch
    API (the passes get a bar that shows nothing: the batches' bar is the run's)."""
    api = BatchAPI(config, timeout=pool.timeout)
    run = _Run(api, Journal(folder or batch_folder(pool.cache), api.endpoint), progress)
    run.stand_in.base_url = service_url(api.client.base_url)
    before = _counters(pool)
    real = pool.cache
    held = HeldCache(real) if real is not None else None
    for number in range(MAX_PASSES + 2):
        _restore(pool, before)
        run.stand_in.new_pass()
        if held is not None:
            held.new_pass()
        pool.cache, pool.usage.stand_in = held, run.stand_in
        try:
            result = score_pass(_NoBar())
        finally:
            pool.cache, pool.usage.stand_in = real, None
        pending = dict(run.stand_in.pending)
        if not pending:
            break
        if number >= MAX_PASSES - 1:  # a chain of requests longer than the passes: end it with errors
            if number == MAX_PASSES + 1:
                raise RuntimeError(
                    f"judge requests still deferred after {number + 1} passes: {list(pending)[:3]}"
                )
            for key in pending:
                run.stand_in.failures[key] = f"the judge still asked more after {MAX_PASSES} batch rounds"
            continue
        run.round(pending)
    if held is not None:
        held.flush()
    for evaluator, n in run.retried.items():
        for _ in range(n):
            pool.usage.request(evaluator)
    for batch_id in run.processed:
        run.journal.drop(batch_id)
    run.report["waited_s"] = round(run.report["waited_s"], 3)
    return result, run.report
