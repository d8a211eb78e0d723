"""Options of the column-wise string evaluators: rows grouped by their options, each option read and checked.

The string evaluators (``matching``, ``citations``) group the rows by their options (rows whose option dicts
are equal, type for type, share one validation), then compute once per setting that changes the computation
over all the rows that use it. A row whose options are unusable (wrong type, out of range, an unknown
choice) becomes an error result with code ``evaluatorConfigurationError`` and a message naming the option;
the other rows are still scored. Options set to ``None`` count as not set; unknown options are ignored (the
document schema is where typos are caught).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.evaluators.base import OptionError

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

_SEQUENCES = (list, tuple, np.ndarray)  # nested lists read back from Parquet arrive as object arrays


def _freeze(value: Any) -> Any:
    """A hashable form of an options value that keeps types apart (``True`` != ``1``, ``1`` != ``1.0``)."""
    if isinstance(value, dict):
        try:  # the usual flat dict of scalars, without recursion
            key = ("dict", tuple(sorted((k, v.__class__, v) for k, v in value.items())))
            hash(key)
            return key
        except TypeError:  # nested or unhashable values, or keys that do not sort
            return ("dict", tuple(sorted(((str(k), _freeze(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, _SEQUENCES):
        return ("list", tuple(_freeze(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return (type(value).__name__, value)


def group_rows(configs: list[dict[str, Any]]) -> list[tuple[Any, np.ndarray]]:
    """``[(options, positions)]``: the rows of each distinct options dict (empty options first).

    Rows sharing one config object (the document's default map) are found by the object's id in one numpy
    pass, and each distinct object is frozen once; empty and ``None`` configs, the common case, are group
    0. Groups are numbered in order of first appearance; positions are ascending within a group.
    """
    n = len(configs)
    by_key: dict[Any, int] = {_freeze({}): 0}
    options: list[Any] = [{}]
    ids = np.fromiter(map(id, configs), dtype=np.uint64, count=n)  # the objects live in configs
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    group_of_object = np.zeros(len(first), dtype=np.int64)
    for distinct in np.argsort(first, kind="stable").tolist():
        config = configs[int(first[distinct])]
        if not config:
            continue
        key = _freeze(config)
        group = by_key.get(key)
        if group is None:
            group = by_key[key] = len(options)
            options.append(config)
        group_of_object[distinct] = group
    if len(options) == 1:
        return [({}, np.arange(n))] if n else []
    codes = group_of_object[inverse.reshape(-1)]
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(options) + 1))
    return [
        (options[g], order[bounds[g] : bounds[g + 1]])
        for g in range(len(options))
        if bounds[g] < bounds[g + 1]
    ]


def read_options(evaluator: str, config: Any) -> dict[str, Any]:
    """The options dict itself (``None`` reads as no options)."""
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise OptionError(f"{evaluator} options must be an object, got {config!r}")
    return config


def bool_option(evaluator: str, options: dict, name: str, default: bool) -> bool:
    value = options.get(name)
    if value is None:
        return default
    if not isinstance(value, (bool, np.bool_)):
        raise OptionError(f"{evaluator} option '{name}' must be true or false, got {value!r}")
    return bool(value)


def fraction_option(evaluator: str, options: dict, name: str, default: float) -> float:
    value = options.get(name)
    if value is None:
        return default
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise OptionError(f"{evaluator} option '{name}' must be a number from 0 to 1, got {value!r}")
    return float(value)


def count_option(evaluator: str, options: dict, name: str, default: int) -> int:
    value = options.get(name)
    if value is None:
        return default
    integral = isinstance(value, numbers.Integral) or (
        isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer()
    )
    if isinstance(value, (bool, np.bool_)) or not integral or value < 0:
        raise OptionError(f"{evaluator} option '{name}' must be a whole number >= 0, got {value!r}")
    return int(value)


def choice_option(evaluator: str, options: dict, name: str, default: str, choices: Sequence[str]) -> str:
    value = options.get(name)
    if value is None:
        return default
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(f"'{c}'" for c in choices)
        raise OptionError(f"{evaluator} option '{name}' must be one of {valid}, got {value!r}")
    return value


def parse_groups(
    evaluator: str, rows: pd.DataFrame, configs: list[dict[str, Any]], parse: Callable[[dict], Any]
) -> tuple[list[tuple[Any, np.ndarray]], list[tuple[str, np.ndarray]]]:
    """Split the row groups into ``[(parsed options, positions)]`` and ``[(error message, positions)]``."""
    if len(configs) != len(rows):
        raise ValueError(f"{evaluator}: {len(configs)} option dicts for {len(rows)} rows")
    good, bad = [], []
    for config, positions in group_rows(configs):
        try:
            good.append((parse(read_options(evaluator, config)), positions))
        except OptionError as exc:
            bad.append((str(exc), positions))
    return good, bad
