"""The batch ids a run is waiting for, kept in the cache folder so that a killed run resumes, not repays.

Each submitted batch is one owner-only JSON file, ``<cache folder>/batches/<batch id>.json``, written before
the run starts waiting: the batch id, the service it lives on (``api.endpoint_of``: no key, no credentials),
the custom ids of its lines, and which try it is for them (1, or 2 for the retry of failed lines). A run
that needs a line already in a kept batch of the same service polls that batch instead of sending the line
again. A batch's file is removed once its answers are in the judge cache (or its lines failed for good), and
when the service no longer knows the id.

A file is read through evalkit's one bounded JSON parser (``evalkit.documents.json_input``; regular files
only, so a named pipe is never waited on) and its fields checked; one that cannot be read or was changed by
hand (not JSON, lines that are not a list of ids, an attempt that is not a whole number) is skipped with a
warning naming it, never a traceback: its lines are then sent again.

May import: ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

from evalkit.documents.files.private import private_file, private_folder
from evalkit.documents.json_input import read_json
from evalkit.errors import EvalkitError

log = logging.getLogger("evalkit.judges")


class Journal:
    """The kept batches of one service in one folder."""

    def __init__(self, folder: Path, endpoint: str):
        self.folder = Path(folder)
        self.endpoint = endpoint

    def entries(self) -> list[dict]:
        """The kept batches of this service, oldest first (unreadable files are skipped with a warning)."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.glob("*.json"):
            try:
                entry = read_json(path)
                problem = _problem(entry)
            except (OSError, EvalkitError) as exc:
                entry, problem = None, str(exc)
            if problem is not None:
                log.warning("judge batch journal %s is unreadable and skipped: %s", path, problem)
                continue
            if entry["endpoint"] == self.endpoint:
                found.append(entry)
        return sorted(found, key=lambda e: e["created"])

    def keep(self, batch_id: str, lines: list[str], attempt: int) -> dict:
        entry = {
            "batch": batch_id,
            "endpoint": self.endpoint,
            "lines": lines,
            "attempt": attempt,
            "created": time.time(),
        }
        private_folder(self.folder)
        path = self._path(batch_id)
        partial = path.with_suffix(".part")
        private_file(partial)
        partial.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(partial, path)
        return entry

    def drop(self, batch_id: str) -> None:
        try:
            self._path(batch_id).unlink()
        except OSError:
            pass

    def _path(self, batch_id: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in batch_id)
        return self.folder / f"{safe}.json"


def _problem(entry) -> str | None:
    """What is wrong with a journal entry as read (None: it is one ``keep`` writes)."""
    if not isinstance(entry, dict):
        return "it is not a JSON object"
    checks = (
        ("batch", lambda v: isinstance(v, str) and v != "", "a batch id"),
        ("endpoint", lambda v: isinstance(v, str), "a service address"),
        ("lines", lambda v: isinstance(v, list) and all(isinstance(k, str) for k in v), "a list of line ids"),
        ("attempt", lambda v: type(v) is int and 1 <= v <= 2, "1 or 2"),
        ("created", lambda v: type(v) in (int, float) and v >= 0, "a time"),
    )
    for key, good, wanted in checks:
        if key not in entry:
            return f"it has no {key!r}"
        if not good(entry[key]):
            return f"its {key!r} is not {wanted}"
    return None
