"""The rules an evaluator name must follow, and where custom evaluators live by default.

A custom evaluator's name must match ``NAME_PATTERN``, must not be a case-table column (``RESERVED_NAMES``:
its output columns would overwrite that column) and must not equal a built-in name case-insensitively
without being it (``builtin_collision``). Kept apart from ``registry`` so that the scaffold (``evalkit
new``) and the notebook check names without importing every evaluator.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from evalkit.documents.evaluator_maps import BUILTIN_NAMES
from evalkit.documents.json_input import quote

_BUILTIN_BY_FOLDED = {name.casefold(): name for name in BUILTIN_NAMES}
#: Case-table columns a custom evaluator's output columns would overwrite.
RESERVED_NAMES = frozenset(
    "item turn thread prompt expected_response context response citations retrieval_executions spans "
    "evaluators extensions source thread_source status error_code error_message".split()
)
NAME_PATTERN = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")
#: The longest file name most file systems allow, in bytes (ext4, XFS, APFS, NTFS).
NAME_MAX = 255
#: The longest suffix a custom evaluator's files add to its name.
_LONGEST_SUFFIX = len(".prompty")


def default_custom_dir() -> Path:
    """``<project>/custom-evaluators``, where the project is the current directory."""
    return Path(os.getcwd()) / "custom-evaluators"


def name_too_long(name: str) -> str | None:
    """Why ``name`` cannot be a custom evaluator on disk, or None when it fits.

    A custom evaluator is a folder ``<name>/`` holding ``<name>.py`` (and ``<name>.prompty``): a longer name
    fails with the file system's ``File name too long`` deep inside discovery.
    """
    if len(os.fsencode(name)) + _LONGEST_SUFFIX <= NAME_MAX:
        return None
    return (
        f"evaluator name {quote(name)} is longer than the file system allows: a custom evaluator is a folder "
        f"<name>/ holding <name>.py and <name>.prompty, and file names are at most {NAME_MAX} bytes; use a "
        f"name of at most {NAME_MAX - _LONGEST_SUFFIX} characters"
    )


def builtin_collision(name: str) -> str | None:
    """The built-in name that ``name`` collides with case-insensitively (but not exactly), if any."""
    builtin = _BUILTIN_BY_FOLDED.get(name.casefold())
    return builtin if builtin is not None and builtin != name else None
