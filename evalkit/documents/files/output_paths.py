"""Checks on the paths evalkit writes to: never through a dangling symbolic link, never over a link to a file.

``--out dangling`` where ``dangling -> /nonexistent/x`` used to be followed, and every missing folder on the
way created (a result set written at the file system's root). So:

* a path that is, or passes through, a **dangling** symbolic link is refused, naming the link and its target;
* an output **file** (``report --out``, ``compare --out``, ``runs --csv``, ``spans package --out``) that is a
  symbolic link at all is refused: evalkit replaces a file whole (a new file renamed over the old one), which
  would replace the link rather than the file it names, and writing through it instead would change a file
  somewhere else than the one given; the message names the target to give instead;
* an output **folder** (``run --out``, ``spans eval --out``) that is a link to an existing folder is written
  into, and the link kept (``results/latest -> results/2026-12-01`` is a common layout; see ``folder_swap``).

May import: ``evalkit.errors`` only.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.errors import EvalkitError, shown

__all__ = ["check_output_file", "refuse_dangling_links"]


def _target(link: Path) -> str:
    try:
        return shown(os.readlink(link))
    except OSError:
        return "?"


def refuse_dangling_links(path: str | os.PathLike) -> None:
    """Raise ``EvalkitError`` when ``path``, or a folder on the way to it, is a link to nothing."""
    full = Path(os.path.abspath(path))
    for candidate in (*reversed(full.parents), full):
        if os.path.islink(candidate) and not os.path.exists(candidate):
            named = shown(path) if candidate == full else f"{shown(candidate)} (in {shown(path)})"
            raise EvalkitError(
                f"{named}: is a symbolic link to {_target(candidate)}, which does not exist; "
                "evalkit does not write through it (that would create the missing folders there): create the "
                "target, remove the link, or give another path"
            )


def check_output_file(path: str | os.PathLike) -> None:
    """Raise ``EvalkitError`` when the output file ``path`` is a symbolic link or passes a dangling one."""
    refuse_dangling_links(path)
    if os.path.islink(path):
        raise EvalkitError(
            f"{shown(path)}: is a symbolic link to {_target(Path(path))}; evalkit replaces an output file "
            "whole, which would replace the link, not the file it names: give that file's path itself, or "
            "remove the link"
        )
