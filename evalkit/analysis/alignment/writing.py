"""The aligned judge on disk: a new custom evaluator beside the original, runnable by ``evalkit run``.

**Naming.** The aligned version of judge ``NAME`` is the custom evaluator ``NAME_aligned`` in the project's
``custom-evaluators/`` (``NAME_aligned/NAME_aligned.prompty`` and ``.py``); when that exists, ``NAME_aligned2``,
``NAME_aligned3`` and so on: an alignment never overwrites an earlier one. Name it in a document's evaluators
(``"NAME_aligned": {}``) to run it. A built-in judge (``Relevance``) becomes ``Relevance_aligned``, a custom copy
of azure-ai-evaluation's prompt. ``alignment.json`` beside it records the source judge, the split (the held-out
items), the variants tried, the held-out table and the cost; ``aligned_versions`` reads those back for the judge
studio.

May import: ``evalkit.documents`` (atomic writes), ``evalkit.evaluators.names``, ``evalkit.errors``.
"""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.documents.files.atomic import atomic_write
from evalkit.documents.json_input import read_json
from evalkit.errors import EvalkitError
from evalkit.evaluators.names import name_too_long

__all__ = ["ALIGNMENT_FILE", "aligned_name", "aligned_versions", "write_aligned"]

ALIGNMENT_FILE = "alignment.json"


def aligned_name(judge: str, custom_dir: Path) -> str:
    """The first free ``<judge>_aligned``, ``<judge>_aligned2``, ... in ``custom_dir``."""
    base = f"{judge}_aligned"
    name, number = base, 1
    while (custom_dir / name).exists():
        number += 1
        name = f"{base}{number}"
    too_long = name_too_long(name)
    if too_long:
        raise EvalkitError(f"cannot name the aligned judge: {too_long}")
    return name


def write_aligned(custom_dir: Path, name: str, prompt: str, wrapper: str, record: dict) -> Path:
    """Write the aligned judge ``name`` (prompt, wrapper, ``alignment.json``) into ``custom_dir``; its folder."""
    home = custom_dir / name
    try:
        home.mkdir(parents=True, exist_ok=False)
        for path, text in (
            (home / f"{name}.prompty", prompt),
            (home / f"{name}.py", wrapper),
            (home / ALIGNMENT_FILE, json.dumps(record, indent=2, ensure_ascii=False) + "\n"),
        ):
            with atomic_write(path) as out:
                out.write(text)
    except OSError as exc:
        raise EvalkitError(f"cannot write the aligned judge to {home}: {exc.strerror or exc}") from None
    return home


def aligned_versions(judge: str, custom_dir: Path) -> list[dict]:
    """The aligned versions of ``judge`` in ``custom_dir``, oldest name first: ``{"name", "folder", "record"}``."""
    found = []
    if not custom_dir.is_dir():
        return found
    for home in sorted(custom_dir.glob(f"{judge}_aligned*")):
        path = home / ALIGNMENT_FILE
        try:
            record = read_json(path)
        except (OSError, EvalkitError):  # unreadable or not JSON evalkit reads: not an aligned version
            continue
        if isinstance(record, dict) and record.get("judge") == judge:
            found.append({"name": home.name, "folder": home, "record": record})
    number = lambda v: int(v["name"][len(judge) + len("_aligned") :] or 1)  # noqa: E731
    return sorted(found, key=number)
