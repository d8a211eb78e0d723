"""LabellingWidget: people label judged rows one at a time, honestly, so a judge can be checked against them.

    lw = LabellingWidget(scored, "professional_tone")          # labels in data/demo.labels.json
    lw.widget()                                                  # the row, label buttons 1-5, a note, navigation
    lw.press("4"); lw.set_note("polite but curt"); lw.next()     # the same, from code (or lw.set_label(4, note=...))
    lw.agreement()                                               # calibrate() on the rows labelled so far
    lw.labels_frame()                                            # this evaluator's labels as a DataFrame

**Honest labels.** The widget is *blind* by default: the judge's score, result and reason stay hidden on a row
until the person has labelled it (or turns blind mode off with ``set_blind(False)`` / the Blind checkbox), so the
judge cannot anchor the label. Each row shows what the judge was given: prompt, response, expected response and
context. A label does not move on by itself (``advance=False``): label, then note, then Next, or note first; a
note typed before the label is kept and saved with it. ``next_unlabelled`` visits every unlabelled row in order.

**Storage.** Labels go to :class:`evalkit.analysis.labels.Labels` (keyed by item, turn and evaluator) in the labels
file beside the eval document (``<stem>.labels.json``) or at ``labels_path``, written at once, so closing the
notebook loses nothing. Each label records its row's prompt fingerprint (``prompt_sha256``): a stored label whose
fingerprint is not the row's prompt (the document's items were reordered or edited) does not count as a label of
that row; the row shows as unlabelled and says why. Only ``_load_labels``, ``_label_at`` and ``_store_label``
know the file.

**Keys.** ipywidgets has no global key handler (and ``ipyevents`` is not a dependency), so the view has a small
key box: click into it and type ``1``-``5`` (or ``p`` / ``f`` on the pass/fail scale) to label, ``n`` next, ``b``
back, ``u`` next unlabelled. Every key goes through :meth:`LabellingWidget.press`. The view itself is
:mod:`evalkit.notebook.labelling_view`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.analysis.calibration import Calibration

#: The label scales: what a button sets, and which field of a label it is stored in.
SCALES = {"1-5": ("score", (1, 2, 3, 4, 5)), "pass/fail": ("verdict", ("pass", "fail"))}
#: Keys that label, per scale (key -> label value); navigation keys are NAVIGATION.
LABEL_KEYS = {"1-5": {str(n): n for n in range(1, 6)}, "pass/fail": {"p": "pass", "f": "fail"}}
NAVIGATION = {"n": "next", "b": "previous", "u": "next_unlabelled"}


class LabellingWidget:
    """Label the rows ``evaluator`` judged in ``df`` (a table from ``evalkit.evaluate``), one at a time.

    Args:
        df: the scored case table; rows the evaluator judged (its ``<evaluator>_result`` is set) are
            labelled, or every row with a response when the table has no result for it.
        evaluator: the evaluator's name as the document writes it (the label key).
        labels_path: the labels file (default: ``<document stem>.labels.json`` beside the document the
            table was loaded from).
        scale: ``"1-5"`` (a score, like an LLM judge's) or ``"pass/fail"`` (a verdict).
        labeller: who labels, written into each label.
        advance: whether a label (button or key) moves on to the next row at once; off by default so a note
            can follow the label.
        blind: hide the judge's verdict on a row until it is labelled (default on).
    """

    def __init__(
        self,
        df: pd.DataFrame,
        evaluator: str,
        labels_path: str | os.PathLike | None = None,
        scale: str = "1-5",
        *,
        labeller: str = "",
        advance: bool = False,
        blind: bool = True,
    ):
        if scale not in SCALES:
            raise ValueError(f"scale={scale!r}: choose one of {', '.join(map(repr, SCALES))}")
        self.evaluator = evaluator
        self.scale = scale
        self.field, self.choices = SCALES[scale]
        self.label_keys = LABEL_KEYS[scale]  # key -> label value, for press() and the view's key box
        self.labeller = labeller
        self.advance = advance
        self.blind = bool(blind)
        self.df = df
        self.rows = _rows_to_label(df, evaluator)
        if not len(self.rows):
            raise ValueError(
                f"no rows to label: {evaluator} judged none of these rows and none has a response"
            )
        self.labels_path = Path(labels_path) if labels_path is not None else _default_path(df)
        self.position = 0
        self.changes = 0  # labels given here (the view recomputes its agreement panel when it changes)
        self._notes: dict[tuple, str] = {}  # notes typed before the row's label, kept until it is given
        self._view = None
        self._load_labels()

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return (
            f"<LabellingWidget {self.evaluator!r}: row {self.position + 1} of {len(self)}, "
            f"{self.labelled_count()} labelled, {self.labels_path}>"
        )

    # Storage (the only code that knows the labels file) ----------------------------------------------
    def _load_labels(self) -> None:
        """(Re)read the labels file; a missing file means no labels yet."""
        from evalkit.analysis.labels import Labels

        self._labels = Labels.load(self.labels_path, missing_ok=True, labeller=self.labeller)

    def _label_at(self, position: int) -> dict | None:
        """The stored label of row ``position`` if it was given for this row's prompt (any scale), else None."""
        from evalkit.analysis.labels import label_matches

        key = self._key(position)
        stored = self._labels.get(key[0], key[1], self.evaluator)
        if stored is None or not label_matches(stored, self._prompt(position)):
            return None
        return stored

    def _stale_at(self, position: int) -> bool:
        """Whether a label is stored at row ``position``'s place but for another prompt."""
        key = self._key(position)
        return (
            self._labels.get(key[0], key[1], self.evaluator) is not None and self._label_at(position) is None
        )

    def _stored_label(self, position: int) -> dict | None:
        """The row's label on this widget's scale (its ``field`` set), or None: the row is unlabelled."""
        stored = self._label_at(position)
        return stored if stored is not None and stored.get(self.field) is not None else None

    def _store_label(self, position: int, value: Any, note: str, *, new_value: bool = True) -> dict:
        """Set the label of row ``position`` with the prompt's fingerprint and write the labels file at once.
        The other scale's field of a label given for the same prompt is kept (a score beside a verdict).
        ``new_value`` False (a note edit) leaves ``changes`` alone, so the agreement panel is not recomputed
        for every key typed in a note."""
        key = self._key(position)
        fields = {"score": None, "verdict": None}
        fields.update({k: v for k, v in (self._label_at(position) or {}).items() if k in fields})
        fields[self.field] = value
        label = self._labels.set(
            key[0], key[1], self.evaluator, note=note, prompt=self._prompt(position), **fields
        )
        self._labels.save(self.labels_path)
        self.changes += new_value
        return label

    # Navigation --------------------------------------------------------------------------------------
    def go(self, position: int) -> dict:
        """Show row ``position`` (clamped to the table); returns ``current()``."""
        self.position = max(0, min(int(position), len(self) - 1))
        self._refresh()
        return self.current()

    def next(self) -> dict:
        """Move to the next row (stays on the last one)."""
        return self.go(self.position + 1)

    def previous(self) -> dict:
        """Move to the previous row (stays on the first one)."""
        return self.go(self.position - 1)

    def next_unlabelled(self) -> dict:
        """Move to the first unlabelled row after this one, in table order, wrapping around (this row comes
        last; stays when every row is labelled). Unlabelled: no label on this widget's scale for the row's
        current prompt, so a stale label or one of the other scale does not make a row count as done."""
        for step in range(1, len(self) + 1):
            position = (self.position + step) % len(self)
            if self._stored_label(position) is None:
                return self.go(position)
        return self.current()

    def press(self, key: str) -> dict:
        """Act on one key as the view's key box does: ``1``-``5`` (``p`` / ``f`` on the pass/fail scale) label
        the row, ``n`` next, ``b`` back, ``u`` next unlabelled. Returns ``current()``."""
        pressed = str(key).strip().lower()
        labels = self.label_keys
        if pressed in labels:
            self.set_label(labels[pressed])
            if self.advance and self.position < len(self) - 1:
                self.next()
            return self.current()
        if pressed in NAVIGATION:
            return getattr(self, NAVIGATION[pressed])()
        keys = ", ".join(labels)
        raise EvalkitError(
            f"key {key!r} does nothing here: {keys} label the row, n next, b back, u next unlabelled"
        )

    def set_blind(self, blind: bool) -> None:
        """Blind mode on (the judge's verdict hidden until the row is labelled) or off (always shown)."""
        self.blind = bool(blind)
        self._refresh()

    # The current row ---------------------------------------------------------------------------------
    def _key(self, position: int | None = None) -> tuple:
        row = self.rows.iloc[self.position if position is None else position]
        turn = row.get("turn")
        return (int(row["item"]), None if turn is None or _is_missing(turn) else int(turn))

    def _prompt(self, position: int) -> str | None:
        prompt = self.rows.iloc[position].get("prompt")
        return prompt if isinstance(prompt, str) else None

    def current(self) -> dict:
        """The row on show: item, turn, prompt, response, expected_response, context, the judge's score /
        result / reason (None while ``judge_hidden``: blind mode and not labelled yet), the label and note
        given so far (None / "" when not labelled), and ``stale_label`` (a label stored here was given for
        another prompt)."""
        row = self.rows.iloc[self.position]
        key = self._key()
        labelled = self._stored_label(self.position)
        given = self._label_at(self.position) or {}
        hidden = self.blind and labelled is None
        judge = {
            "judge_score": _value(row.get(_score_column(self.evaluator))),
            "judge_result": _value(row.get(f"{self.evaluator}_result")),
            "judge_reason": _text(row.get(f"{self.evaluator}_reason"))
            or _text(row.get(f"{self.evaluator}_error")),
        }
        if hidden:
            judge = dict.fromkeys(judge)
        return {
            "position": self.position,
            "item": key[0],
            "turn": key[1],
            "prompt": _text(row.get("prompt")),
            "response": _text(row.get("response")),
            "expected_response": _text(row.get("expected_response")),
            "context": _text(row.get("context")),
            **judge,
            "judge_hidden": hidden,
            "label": None if labelled is None else labelled[self.field],
            "note": self._notes.get(key, given.get("note", "")),
            "stale_label": self._stale_at(self.position),
        }

    def set_label(self, value: Any, note: str | None = None) -> dict:
        """Label the current row ``value`` (1-5, or "pass" / "fail") and save; ``note`` replaces the note
        (None keeps the one typed or given so far). Stays on the row. Returns the stored label."""
        value = self._check(value)
        key = self._key()
        if note is None:
            note = self._notes.get(key, (self._label_at(self.position) or {}).get("note", ""))
        label = self._store_label(self.position, value, note)
        self._notes.pop(key, None)
        self._refresh()
        return label

    def set_note(self, note: str) -> None:
        """Set the current row's note: saved with its label at once, or kept until the row is labelled."""
        key = self._key()
        stored = self._stored_label(self.position)
        if stored is not None:
            self._store_label(self.position, stored[self.field], note, new_value=False)
            self._notes.pop(key, None)
        else:
            self._notes[key] = note
        self._refresh()

    def _check(self, value: Any) -> Any:
        if self.field == "score":
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = float("nan")
            if isinstance(value, bool) or number not in self.choices:
                raise EvalkitError(f"a {self.scale} label is a whole number from 1 to 5, not {value!r}")
            return int(number)
        verdict = str(value).strip().lower()
        if verdict not in self.choices:
            raise EvalkitError(f"a {self.scale} label is 'pass' or 'fail', not {value!r}")
        return verdict

    # Summaries ---------------------------------------------------------------------------------------
    def labelled_count(self) -> int:
        return sum(self._stored_label(p) is not None for p in range(len(self)))

    def labels_frame(self) -> pd.DataFrame:
        """This evaluator's labels of the rows on show, beside the judge: item, turn, label, note,
        judge_score, judge_result, agrees (label equal to the judge's score, or to its pass/fail)."""
        import pandas as pd

        records = []
        for position in range(len(self)):
            stored = self._stored_label(position)
            if stored is None:
                continue
            key = self._key(position)
            row = self.rows.iloc[position]
            judge_score = _value(row.get(_score_column(self.evaluator)))
            judge_result = _value(row.get(f"{self.evaluator}_result"))
            label = stored[self.field]
            agrees = (
                (judge_score is not None and label == judge_score)
                if self.field == "score"
                else (judge_result in ("pass", "fail") and label == judge_result)
            )
            records.append(
                {
                    "item": key[0],
                    "turn": key[1],
                    "label": label,
                    "note": stored.get("note", ""),
                    "judge_score": judge_score,
                    "judge_result": judge_result,
                    "agrees": bool(agrees),
                }
            )
        columns = ["item", "turn", "label", "note", "judge_score", "judge_result", "agrees"]
        frame = pd.DataFrame(records, columns=columns)
        return frame.astype({"turn": "Int64"})

    def agreement(self, *, resamples: int = 500, seed: int | None = None) -> Calibration | None:
        """:func:`evalkit.analysis.calibration.calibrate` of this evaluator on the rows labelled so far (on
        this widget's scale), or None while no row is labelled. Raises EvalkitError when the judge cannot be
        calibrated on this scale (e.g. no numeric scores to set beside 1-5 labels)."""
        import pandas as pd

        from evalkit.analysis.calibration import calibrate

        entries = [label for p in range(len(self)) if (label := self._stored_label(p)) is not None]
        if not entries:
            return None
        options = {} if seed is None else {"seed": seed}
        return calibrate(
            self.df,
            self.evaluator,
            pd.DataFrame(entries),
            evaluator=self.evaluator,
            on=self.field,
            resamples=resamples,
            **options,
        )

    # The view ----------------------------------------------------------------------------------------
    def widget(self):
        """The ipywidgets view (:class:`evalkit.notebook.labelling_view.LabellingView`)."""
        if self._view is None:
            from evalkit.notebook.labelling_view import LabellingView

            self._view = LabellingView(self)
        return self._view.container

    @property
    def view(self):
        if self._view is None:
            self.widget()
        return self._view

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget())

    def _refresh(self) -> None:
        if self._view is not None:
            self._view.refresh()


# Helpers ---------------------------------------------------------------------------------------------------
def _rows_to_label(df: pd.DataFrame, evaluator: str) -> pd.DataFrame:
    result = f"{evaluator}_result"
    if result in df.columns and df[result].notna().any():
        return df[df[result].notna()]
    if "response" in df.columns:
        return df[df["response"].map(lambda r: isinstance(r, str) and bool(r.strip()))]
    return df


def _default_path(df: pd.DataFrame) -> Path:
    from evalkit.analysis.labels import labels_path

    return labels_path(df)


def _score_column(evaluator: str) -> str:
    from evalkit.evaluators.base import score_column

    return score_column(evaluator)


def _is_missing(value: Any) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _value(value: Any) -> Any:
    """A plain Python value, None for missing ones (NaN, pd.NA)."""
    if value is None or _is_missing(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
