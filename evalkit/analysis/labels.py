"""Human labels of judged rows, kept in a small JSON file beside the eval document.

    from evalkit.analysis.labels import Labels
    labels = Labels.for_document("data/demo.json")       # data/demo.labels.json (empty if it does not exist)
    labels.set(0, None, "Relevance", score=4, note="misses the second question", labeller="ana")
    labels.set(3, 1, "Relevance", verdict="fail")
    labels.save()                                        # atomic: readers never see half a file
    labels.frame()                                       # one row per label, for evalkit.analysis.calibration

Humans label what the LLM judges score, so that :func:`evalkit.analysis.calibration.calibrate` can say how far a judge
can be trusted. A label is keyed by ``(item, turn, evaluator)``: the row's position in the document (``turn`` is
``None`` for single-turn items) and the evaluator's name as the document writes it. Setting the same key again
replaces the label. A label carries a 1-5 ``score``, a ``pass`` / ``fail`` ``verdict`` or both (at least one),
a free ``note``, who labelled (``labeller``) and when (``at``, ISO 8601, UTC).

**Prompt fingerprints.** A position says nothing about *what* was labelled: after the document's items are
reordered or edited, item 3 may be another question. So a label also records ``prompt_sha256``, the sha256 of
the labelled row's prompt (:func:`prompt_fingerprint`; give ``prompt=`` to :meth:`Labels.set`), and
:func:`label_matches` / :func:`evalkit.analysis.calibration.calibrate` pair a label with a row only when the
row's prompt still has that fingerprint. Labels without one (version 1 files, labels made without a prompt)
pair by position, as before.

The file (``<document stem>.labels.json``, or any path) is::

    {"version": 2, "labels": [{"item": 0, "turn": null, "evaluator": "Relevance", "score": 4, "verdict": null,
                               "note": "...", "labeller": "ana", "at": "2026-05-09T07:35:25+00:00",
                               "prompt_sha256": "9f86d0..."}]}

Version 1 files (no ``prompt_sha256``) still load; they are written back as version 2.

Labels are written sorted by item, turn and evaluator so that the file diffs well under version control. Every
mistake (a score of 6, a verdict of "ok", a duplicate key, a file that is not a labels file) raises
:class:`~evalkit.errors.EvalkitError` naming the label and the fix.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.analysis.formatting import count
from evalkit.documents.json_input import JsonInputError, parse_json, read_limited
from evalkit.errors import EvalkitError, shown

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "LABEL_COLUMNS",
    "LABELS_VERSION",
    "Labels",
    "label_matches",
    "labels_frame",
    "labels_path",
    "prompt_fingerprint",
]

#: The version written; every version in READABLE_VERSIONS loads (1: no ``prompt_sha256``).
LABELS_VERSION = 2
READABLE_VERSIONS = (1, 2)
#: Suffix of the labels file beside a document: ``demo.json`` -> ``demo.labels.json``.
LABELS_SUFFIX = ".labels.json"
#: Columns of :meth:`Labels.frame`, in order.
LABEL_COLUMNS = ("item", "turn", "evaluator", "score", "verdict", "note", "labeller", "at", "prompt_sha256")
SCORES = (1, 2, 3, 4, 5)
VERDICTS = ("pass", "fail")

Key = tuple[int, "int | None", str]
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def prompt_fingerprint(prompt: Any) -> str | None:
    """The sha256 (hex) of a row's prompt text, or None when the row has no prompt (missing / not text)."""
    if not isinstance(prompt, str):
        return None
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()


def label_matches(label: Mapping[str, Any], prompt: Any) -> bool:
    """Whether ``label`` belongs to a row with this prompt: True when the label has no fingerprint (an older
    label, paired by position only) or its ``prompt_sha256`` is the prompt's."""
    stored = label.get("prompt_sha256")
    return _missing(stored) or stored == prompt_fingerprint(prompt)


def labels_path(document: Any, folder: str | os.PathLike | None = None) -> Path:
    """Where the labels of ``document`` live: ``<folder>/<stem>.labels.json``, beside the document file unless
    ``folder`` is given (a notebook keeps them in its output folder). The labelling widget, the judge studio's
    "Align to labels" and :meth:`Labels.for_document` all find a document's labels through this function.

    ``document`` is the document's path or a case table loaded from it (its ``attrs["evalkit"]["source"]``).
    A table built in memory has no file to sit beside: pass an explicit path to :class:`Labels` instead.
    """
    source = document
    if not isinstance(document, (str, os.PathLike)):
        meta = getattr(document, "attrs", {}).get("evalkit") or {}
        source = meta.get("source") if isinstance(meta, Mapping) else None
        if not source or str(source).startswith("<"):
            raise EvalkitError(
                "this case table was not loaded from a file, so its labels have no default place: "
                "give the labels file path, e.g. Labels.load('my.labels.json', missing_ok=True)"
            )
    path = Path(source)
    if not path.name.endswith(LABELS_SUFFIX):
        path = path.with_name(path.stem + LABELS_SUFFIX)
    return path if folder is None else Path(folder) / path.name


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        import pandas as pd

        return value is pd.NA or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT
    except ImportError:  # pragma: no cover - pandas is a dependency
        return isinstance(value, float) and math.isnan(value)


def _whole(value: Any, what: str, where: str, *, optional: bool) -> int | None:
    """``value`` as a non-negative int (integral floats from a DataFrame column accepted), else a clear error."""
    if _missing(value):
        if optional:
            return None
        raise EvalkitError(f"{where}: {what} is missing; give the row's position in the document (0, 1, ...)")
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
        or float(value) != int(value)
    ):
        raise EvalkitError(f"{where}: {what} must be a whole number >= 0, not {value!r}")
    number = int(value)
    if number < 0:
        raise EvalkitError(f"{where}: {what} must be a whole number >= 0, not {value!r}")
    return number


def _score(value: Any, where: str) -> int | None:
    if _missing(value):
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
        or float(value) != int(value)
        or int(value) not in SCORES
    ):
        raise EvalkitError(f"{where}: score must be a whole number from 1 to 5 (or null), not {value!r}")
    return int(value)


def _verdict(value: Any, where: str) -> str | None:
    if _missing(value):
        return None
    if isinstance(value, str) and value.strip().lower() in VERDICTS:
        return value.strip().lower()
    raise EvalkitError(f"{where}: verdict must be 'pass' or 'fail' (or null), not {value!r}")


def _text(value: Any, what: str, where: str) -> str:
    if _missing(value):
        return ""
    if not isinstance(value, str):
        raise EvalkitError(f"{where}: {what} must be text, not {value!r}")
    return value


def _fingerprint(value: Any, where: str) -> str | None:
    if _missing(value):
        return None
    if not isinstance(value, str) or not _SHA256.match(value):
        raise EvalkitError(
            f"{where}: prompt_sha256 must be the 64-character lowercase hex sha256 of the prompt (or null), "
            f"not {value!r}"
        )
    return value


def _where(item: Any, turn: Any, evaluator: Any) -> str:
    turn_part = "" if _missing(turn) else f", turn {turn!r}"
    return f"label of item {item!r}{turn_part}, evaluator {evaluator!r}"


def _entry(
    item: Any,
    turn: Any,
    evaluator: Any,
    score: Any = None,
    verdict: Any = None,
    note: Any = "",
    labeller: Any = "",
    at: Any = None,
    prompt_sha256: Any = None,
    *,
    where: str | None = None,
) -> dict[str, Any]:
    """One validated label as the dict written to the file."""
    where = where or _where(item, turn, evaluator)
    if not isinstance(evaluator, str) or not evaluator.strip():
        raise EvalkitError(
            f"{where}: evaluator must be the evaluator's name, e.g. 'Relevance', not {evaluator!r}"
        )
    entry = {
        "item": _whole(item, "item", where, optional=False),
        "turn": _whole(turn, "turn", where, optional=True),
        "evaluator": evaluator,
        "score": _score(score, where),
        "verdict": _verdict(verdict, where),
        "note": _text(note, "note", where),
        "labeller": _text(labeller, "labeller", where),
        "at": _text(at, "at", where) or _now(),
        "prompt_sha256": _fingerprint(prompt_sha256, where),
    }
    if entry["score"] is None and entry["verdict"] is None:
        raise EvalkitError(f"{where}: give a score (1-5), a verdict ('pass' / 'fail') or both")
    return entry


def _key(entry: Mapping[str, Any]) -> Key:
    return (entry["item"], entry["turn"], entry["evaluator"])


def _order(key: Key) -> tuple[int, int, str]:
    item, turn, evaluator = key
    return (item, -1 if turn is None else turn, evaluator)


class Labels:
    """The human labels of one eval document: a mapping ``(item, turn, evaluator) -> label``.

    Build it with :meth:`load` / :meth:`for_document`, or ``Labels(path)`` for a new, empty file. ``labeller``
    is the default name written into the labels :meth:`set` adds (``""`` when not given).
    """

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        labels: list[Mapping[str, Any]] | None = None,
        *,
        labeller: str = "",
    ):
        self.path = None if path is None else Path(path)
        self.labeller = labeller
        self._labels: dict[Key, dict[str, Any]] = {}
        for position, raw in enumerate(labels or []):
            self._add(raw, f"label #{position}")

    # -------------------------------------------------------------------------------------------- reading

    @classmethod
    def load(cls, path: str | os.PathLike, *, missing_ok: bool = False, labeller: str = "") -> Labels:
        """Read a labels file. A missing file is an error, or an empty :class:`Labels` with ``missing_ok``."""
        target = Path(path)
        if not target.exists():
            if missing_ok:
                return cls(target, labeller=labeller)
            raise EvalkitError(
                f"labels file {shown(target)} does not exist; create one with Labels({str(target)!r}) "
                "or Labels.for_document(document)"
            )
        try:
            data = parse_json(read_limited(target))
        except JsonInputError as exc:  # malformed, too deep, a repeated key (a label silently lost)
            reason = f"is not valid JSON ({exc})" if exc.syntax else f"is refused: {exc}"
            raise EvalkitError(f"labels file {target} {reason}") from None
        if not isinstance(data, dict) or "labels" not in data:
            hint = ""
            if isinstance(data, (dict, list)) and (isinstance(data, list) or "items" in data):
                hint = f" (it looks like an eval document: its labels belong in {labels_path(target)})"
            raise EvalkitError(
                f'{target} is not a labels file: expected {{"version": {LABELS_VERSION}, "labels": [...]}}{hint}'
            )
        version = data.get("version")
        if isinstance(version, bool) or version not in READABLE_VERSIONS:
            readable = " and ".join(map(str, READABLE_VERSIONS))
            raise EvalkitError(
                f"labels file {target} has version {version!r}; this evalkit reads versions {readable}: "
                "upgrade evalkit to read it"
            )
        entries = data["labels"]
        if not isinstance(entries, list):
            raise EvalkitError(f'labels file {target}: "labels" must be a list of label objects')
        labels = cls(target, labeller=labeller)
        for position, raw in enumerate(entries):
            labels._add(raw, f"{shown(target)}: label #{position}")
        return labels

    @classmethod
    def for_document(cls, document: Any, *, labeller: str = "") -> Labels:
        """The labels beside ``document`` (a path or a loaded case table), empty if none were saved yet."""
        return cls.load(labels_path(document), missing_ok=True, labeller=labeller)

    def _add(self, raw: Any, where: str) -> None:
        if not isinstance(raw, Mapping):
            raise EvalkitError(
                f"{where}: a label must be an object with item, turn, evaluator, score / verdict"
            )
        unknown = sorted(set(map(str, raw)) - set(LABEL_COLUMNS))
        if unknown:
            raise EvalkitError(
                f"{where}: unknown field(s) {', '.join(unknown)}; a label has {', '.join(LABEL_COLUMNS)}"
            )
        if "item" not in raw or "evaluator" not in raw:
            raise EvalkitError(f"{where}: a label needs at least item, evaluator and a score or a verdict")
        fields = {name: raw.get(name) for name in LABEL_COLUMNS}
        where = f"{where} ({_where(fields['item'], fields['turn'], fields['evaluator'])})"
        entry = _entry(**fields, where=where)
        key = _key(entry)
        if key in self._labels:
            raise EvalkitError(f"{where}: a second label for the same item, turn and evaluator; keep one")
        self._labels[key] = entry

    # -------------------------------------------------------------------------------------------- editing

    def set(
        self,
        item: int,
        turn: int | None,
        evaluator: str,
        score: int | None = None,
        verdict: str | None = None,
        note: str = "",
        *,
        labeller: str | None = None,
        prompt: str | None = None,
    ) -> dict[str, Any]:
        """Add or replace the label of ``(item, turn, evaluator)``; returns the stored label (a copy).

        ``score`` is a whole number from 1 to 5, ``verdict`` ``"pass"`` or ``"fail"``; give one or both. ``at``
        is set to now (UTC). ``prompt``: the labelled row's prompt, stored as its fingerprint
        (``prompt_sha256``) so the label never pairs with another prompt at that position. Nothing is
        written until :meth:`save`.
        """
        entry = _entry(
            item,
            turn,
            evaluator,
            score,
            verdict,
            note,
            self.labeller if labeller is None else labeller,
            prompt_sha256=prompt_fingerprint(prompt),
        )
        self._labels[_key(entry)] = entry
        return dict(entry)

    def get(self, item: int, turn: int | None, evaluator: str) -> dict[str, Any] | None:
        """The label of ``(item, turn, evaluator)`` (a copy), or None."""
        entry = self._labels.get((item, turn, evaluator))
        return None if entry is None else dict(entry)

    def remove(self, item: int, turn: int | None, evaluator: str) -> bool:
        """Drop the label of ``(item, turn, evaluator)``; False if there was none."""
        return self._labels.pop((item, turn, evaluator), None) is not None

    # -------------------------------------------------------------------------------------------- output

    def to_dict(self) -> dict[str, Any]:
        """The file's content: ``{"version": 2, "labels": [...]}``, labels sorted by item, turn, evaluator."""
        return {
            "version": LABELS_VERSION,
            "labels": [dict(self._labels[key]) for key in sorted(self._labels, key=_order)],
        }

    def save(self, path: str | os.PathLike | None = None) -> Path:
        """Write the labels (atomically) to ``path`` or to the path they were loaded from; returns it."""
        from evalkit.documents.files.atomic import atomic_write

        target = Path(path) if path is not None else self.path
        if target is None:
            raise EvalkitError(
                "these labels have no file yet: give a path, e.g. labels.save('demo.labels.json')"
            )
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"
        with atomic_write(target) as handle:
            handle.write(text)
        self.path = target
        return target

    def frame(self) -> pd.DataFrame:
        """One row per label, columns :data:`LABEL_COLUMNS` (``turn`` and ``score`` as nullable Int64,
        ``prompt_sha256`` None for labels without a fingerprint)."""
        import pandas as pd

        entries = [self._labels[key] for key in sorted(self._labels, key=_order)]
        frame = pd.DataFrame(entries, columns=list(LABEL_COLUMNS))
        return frame.astype(
            {"item": "int64", "turn": "Int64", "score": "Int64", "verdict": object, "prompt_sha256": object}
        )

    def evaluators(self) -> list[str]:
        """The evaluator names that have labels, in order of first label."""
        return list(dict.fromkeys(key[2] for key in self._labels))

    def __len__(self) -> int:
        return len(self._labels)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (dict(self._labels[key]) for key in sorted(self._labels, key=_order))

    def __contains__(self, key: object) -> bool:
        return key in self._labels

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path is not None else ""
        names = ", ".join(self.evaluators()) or "none"
        return f"<Labels{where}: {count(len(self), 'label')}; evaluators: {names}>"


def labels_frame(labels: Labels | str | os.PathLike | pd.DataFrame) -> pd.DataFrame:
    """Human labels as a validated frame with the columns of :data:`LABEL_COLUMNS`.

    ``labels`` is a :class:`Labels`, the path of a labels file, or a DataFrame with ``item``, ``score`` and / or
    ``verdict`` columns (``turn``, ``evaluator``, ``note``, ``labeller``, ``prompt_sha256`` optional; a missing ``evaluator``
    column means "labels of the judge being calibrated", written as ``""``). Every row goes through the same
    checks as :meth:`Labels.set`.
    """
    import pandas as pd

    if isinstance(labels, Labels):
        return labels.frame()
    if isinstance(labels, (str, os.PathLike)):
        return Labels.load(labels).frame()
    if not isinstance(labels, pd.DataFrame):
        raise TypeError(
            f"labels must be a Labels, a labels file path or a DataFrame, not {type(labels).__name__}"
        )
    if "item" not in labels.columns or not ({"score", "verdict"} & set(labels.columns)):
        raise EvalkitError(
            "a labels DataFrame needs an 'item' column and a 'score' and / or 'verdict' column "
            f"(it has: {', '.join(map(str, labels.columns)) or 'no columns'})"
        )
    rows = []
    seen: dict[Key, int] = {}
    columns = {name: labels[name].tolist() if name in labels.columns else None for name in LABEL_COLUMNS}
    for position in range(len(labels)):
        fields = {name: (None if values is None else values[position]) for name, values in columns.items()}
        if columns["evaluator"] is None:
            fields["evaluator"] = "(labels)"
        where = f"labels row {position} ({_where(fields['item'], fields['turn'], fields['evaluator'])})"
        entry = _entry(**fields, where=where)
        if columns["evaluator"] is None:
            entry["evaluator"] = ""
        key = _key(entry)
        if key in seen:
            raise EvalkitError(f"{where}: same item, turn and evaluator as row {seen[key]}; keep one")
        seen[key] = position
        rows.append(entry)
    frame = pd.DataFrame(rows, columns=list(LABEL_COLUMNS))
    return frame.astype(
        {"item": "int64", "turn": "Int64", "score": "Int64", "verdict": object, "prompt_sha256": object}
    )
