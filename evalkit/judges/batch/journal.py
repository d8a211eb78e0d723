"""The batch ids a run is waiting for, kept in the cache folder so that a killed run resumes, not repays.

Each submitted batch is one owner-only JSON file, ``<cache folder>/batches/<batch id>.json``, written before
the run starts waiting: the batch id, the service it lives on (``api.endpoint_of``: no key, no credentials),
the custom ids of its lines, and which try it is for them (1, or 2 for the retry of failed lines). A run
that needs a line already in a kept batch of the same service polls that batch instead of sending the line
again. A batch's file is removed once its answers are in the judge cache (or its lines failed for good), and
when the service no longer knows the id.

May import: ``evalkit.documents``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from evalkit.documents.files.private import private_file, private_folder


class Journal:
    """The kept batches of one service in one folder."""

    def __init__(self, folder: Path, endpoint: str):
        self.folder = Path(folder)
        self.endpoint = endpoint

    def entries(self) -> list[dict]:
        """The kept batches of this service, oldest first (unreadable files are skipped)."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.glob("*.json"):
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(entry, dict) and entry.get("endpoint") == self.endpoint and entry.get("batch"):
                found.append(entry)
        return sorted(found, key=lambda e: e.get("created", 0))

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
