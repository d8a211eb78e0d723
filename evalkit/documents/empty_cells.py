"""One read-only empty list and one read-only empty dict, shared by every case-table cell that holds nothing.

``load`` gives each row ``citations``, ``retrieval_executions`` and ``spans`` (lists) and ``extensions`` (a
dict). Most rows have none of them, and a fresh ``[]`` / ``{}`` per row cost 23 MB at 100,000 rows (issue 20's
peak-memory goal), so an empty cell holds :data:`EMPTY_LIST` or :data:`EMPTY_DICT` instead: a real ``list`` /
``dict`` (``isinstance`` holds, it equals ``[]`` / ``{}``, JSON writes it as ``[]`` / ``{}``) that refuses to be
changed in place. A shared mutable empty would let ``df.at[0, "citations"].append(c)`` change every row; this
one raises :class:`SharedCellError` saying how to give the row its own value (``df.at[row, column] = [...]``).
Its copies (``list(cell)``, ``cell.copy()``, ``copy.deepcopy`` gives the shared one back) are ordinary.
Pickling (Spark, forked workers) brings back the shared object, not a copy.

No evalkit code mutates a cell it did not create; writers copy (``write_back._put_list``).

May import: ``evalkit.errors`` only.
"""

from __future__ import annotations

from typing import Any, NoReturn

from evalkit.errors import EvalkitError

__all__ = ["EMPTY_DICT", "EMPTY_LIST", "EmptyDict", "EmptyList", "SharedCellError"]


class SharedCellError(EvalkitError, TypeError):
    """A shared empty cell was changed in place (it is read-only so that no other row changes with it)."""


def _refuse(cell: Any, *_args: Any, **_kwargs: Any) -> NoReturn:
    kind, example = ("list", "[...]") if isinstance(cell, list) else ("dict", "{...}")
    raise SharedCellError(
        f"this empty {kind} is shared by every row of the case table that has none, so it cannot be changed "
        f"in place (that would change them all); give the row its own: df.at[row, column] = {example}"
    )


class EmptyList(list):
    """The read-only empty list of :data:`EMPTY_LIST` (every method that would change it raises)."""

    __slots__ = ()
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __init__(self) -> None:  # never filled: no items to start from either
        super().__init__()

    def __reduce__(self) -> str:
        return "EMPTY_LIST"  # pickle and copy give back the module's one object


class EmptyDict(dict):
    """The read-only empty dict of :data:`EMPTY_DICT` (every method that would change it raises)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = setdefault = update = pop = popitem = clear = _refuse

    def __init__(self) -> None:
        super().__init__()

    def __reduce__(self) -> str:
        return "EMPTY_DICT"


EMPTY_LIST = EmptyList()
EMPTY_DICT = EmptyDict()
