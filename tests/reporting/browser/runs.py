"""Runs the page tests open: the bundled demos, evaluated by the real CLI into a temporary folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def evalkit_run(document: str, out: Path, *extra: str) -> Path:
    """``evalkit run DOCUMENT --out OUT`` from the repository root (custom evaluators found there); OUT."""
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", document, "--out", str(out), *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # exit 1 means "some rows failed", which the demos do on purpose
    assert done.returncode in (0, 1), done.stderr
    return out
