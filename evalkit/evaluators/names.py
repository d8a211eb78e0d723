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

_BUILTIN_BY_FOLDED = {name.casefold(): name for name in BUILTIN_NAMES}
#: Case-table columns a custom evaluator's output columns would overwrite.
RESERVED_NAMES = frozenset(
    "item turn thread prompt expected_response context response citations retrieval_executions spans "
    "evaluators extensions source thread_source status error_code error_message".split()
)
NAME_PATTERN = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")


def default_custom_dir() -> Path:
    """``<project>/custom-evaluators``, where the project is the current directory."""
    return Path(os.getcwd()) / "custom-evaluators"


def builtin_collision(name: str) -> str | None:
    """The built-in name that ``name`` collides with case-insensitively (but not exactly), if any."""
    builtin = _BUILTIN_BY_FOLDED.get(name.casefold())
    return builtin if builtin is not None and builtin != name else None
