"""Custom evaluators to the executors: shipped with the job, or read from a path on shared storage.

Shipped (the default): the folders of the custom evaluators a run uses are copied into a staging folder named
by the hash of their content and added with ``SparkContext.addFile(..., recursive=True)``; each executor
fetches it once and reads it from ``SparkFiles``. An edited evaluator has another hash, so it is shipped (and
loaded) anew, while an unchanged one is never shipped twice.

Shared storage (``ship=False``): the executors read ``custom_dir`` itself, which must then be the same path on
every machine: a Databricks ``/dbfs/...`` or ``/Workspace/...`` path, an NFS mount, a volume baked into the
image.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

#: Prefix of the staging folders (and of their names in SparkFiles).
STAGE_PREFIX = "evalkit-custom-"


def _files(folder: Path):
    """The files of an evaluator folder that matter, in a stable order (no caches, no hidden files)."""
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in relative.parts):
            yield relative, path


def stage(custom_dir: Path, names: list[str]) -> Path | None:
    """A staging folder holding the folders of ``names`` under ``custom_dir``, named by their content hash.

    None when none of them is a folder there (built-ins only, or ad-hoc callables).
    """
    folders = [custom_dir / n for n in sorted(set(names)) if (custom_dir / n).is_dir()]
    if not folders:
        return None
    digest = hashlib.sha256()
    for folder in folders:
        for relative, path in _files(folder):
            digest.update(f"{folder.name}/{relative.as_posix()}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    target = Path(tempfile.gettempdir()) / f"{STAGE_PREFIX}{digest.hexdigest()[:20]}"
    if not target.is_dir():
        building = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
        for folder in folders:
            for relative, path in _files(folder):
                destination = building / folder.name / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, destination)
        try:
            os.replace(building, target)
        except OSError:  # another run staged the same content meanwhile
            shutil.rmtree(building, ignore_errors=True)
    return target


def ship(spark, custom_dir: Path, names: list[str]) -> dict:
    """Ship the folders of ``names`` with the job; what the executors need to find them (see ``locate``)."""
    staged = stage(custom_dir, names)
    if staged is None:
        return {"path": str(custom_dir)}
    spark.sparkContext.addFile(str(staged), recursive=True)
    return {"shipped": staged.name}


def locate(where: dict) -> str:
    """On an executor: the custom evaluators folder that ``ship`` (or a shared path) points to."""
    if "shipped" in where:
        from pyspark import SparkFiles

        return SparkFiles.get(where["shipped"])
    return where["path"]
