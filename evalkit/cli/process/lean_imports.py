"""Import pandas without letting it import pyarrow, for the ``evalkit`` command's process (issue 20).

pandas 2 imports pyarrow whenever it is installed, only to offer its pyarrow-backed dtypes. No evalkit command
uses them (a run's tables are numpy and object columns), yet pyarrow's libraries add 57 MB to the resident
memory of every command and its forked writers: 115 MB for ``import pandas`` with it, 58 MB without, measured
with ``VmRSS`` on pandas 2.3.3 and pyarrow installed. So the command imports pandas first, with pyarrow
hidden for that one import.

pyarrow stays importable afterwards: the Spark engine and its Parquet files import it themselves, as before.
What the process gives up is pandas' own use of it (``dtype_backend="pyarrow"``, ``pd.ArrowDtype`` arrays,
``string[pyarrow]``), which pandas then reports as "pyarrow is not installed". A program that imports
evalkit as a library is not affected: only :func:`evalkit.cli.main` calls this (once it has parsed the command
line and started reading its input ahead), and it does nothing when pandas or pyarrow is imported already.
"""

from __future__ import annotations

import importlib
import sys


class _HidePyarrow:
    """A meta path finder that answers "no such module" for pyarrow and its submodules."""

    def find_spec(self, name, path=None, target=None):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ModuleNotFoundError(
                f"No module named {name!r} (hidden while pandas is imported)", name=name
            )
        return None


def import_pandas_without_pyarrow() -> None:
    """Import pandas with pyarrow hidden, then stop hiding it; nothing when either is imported already."""
    if "pandas" in sys.modules or "pyarrow" in sys.modules:
        return
    hide = _HidePyarrow()
    sys.meta_path.insert(0, hide)
    try:
        importlib.import_module("pandas")
    finally:
        sys.meta_path.remove(hide)
