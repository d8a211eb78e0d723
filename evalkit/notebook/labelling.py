"""LabellingWidget: humans label judged rows one at a time, so a judge can be checked against people.

    lw = LabellingWidget(scored, "professional_tone")          # labels in data/demo.labels.json
    lw.widget()                                                  # prompt, response, judge score and reason,
                                                                 # buttons 1-5, a note, previous / next
    lw.set_label(4, note="polite but curt")                      # the same, from code
    lw.labels_frame()                                            # this evaluator's labels as a DataFrame

Labels are stored with ``evalkit.analysis.labels.Labels`` (keyed by item, turn and evaluator) in the labels file
beside the eval document (``<stem>.labels.json``) or at ``labels_path``; every label is saved at once, so
closing the notebook loses nothing, and opening the widget again shows the labels already given. All the
storage goes through ``_load_labels`` / ``_store_label``, the only two methods that know the file.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import pandas as pd

#: The label scales: what a button sets, and which field of a label it is stored in.
SCALES = {"1-5": ("score", (1, 2, 3, 4, 5)), "pass/fail": ("verdict", ("pass", "fail"))}


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
        advance: whether the widget's label buttons move on to the next row.
    """

    def __init__(
        self,
        df: pd.DataFrame,
        evaluator: str,
        labels_path: str | os.PathLike | None = None,
        scale: str = "1-5",
        *,
        labeller: str = "",
        advance: bool = True,
    ):
        if scale not in SCALES:
            raise ValueError(f"scale={scale!r}: choose one of {', '.join(map(repr, SCALES))}")
        self.evaluator = evaluator
        self.scale = scale
        self.field, self.choices = SCALES[scale]
        self.labeller = labeller
        self.advance = advance
        self.rows = _rows_to_label(df, evaluator)
        if not len(self.rows):
            raise ValueError(
                f"no rows to label: {evaluator} judged none of these rows and none has a response"
            )
        self.labels_path = Path(labels_path) if labels_path is not None else _default_path(df)
        self.position = 0
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

    def _stored_label(self, key: tuple) -> dict | None:
        return self._labels.get(key[0], key[1], self.evaluator)

    def _store_label(self, key: tuple, value: Any, note: str) -> dict:
        """Set the label of row ``key`` (item, turn) and write the labels file at once."""
        label = self._labels.set(key[0], key[1], self.evaluator, note=note, **{self.field: value})
        self._labels.save(self.labels_path)
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
        """Move to the first unlabelled row after this one (wrapping around; stays when all are labelled)."""
        for step in range(1, len(self) + 1):
            position = (self.position + step) % len(self)
            if self._stored_label(self._key(position)) is None:
                return self.go(position)
        return self.current()

    # The current row ---------------------------------------------------------------------------------
    def _key(self, position: int | None = None) -> tuple:
        row = self.rows.iloc[self.position if position is None else position]
        turn = row.get("turn")
        return (int(row["item"]), None if turn is None or _is_missing(turn) else int(turn))

    def current(self) -> dict:
        """The row on show: item, turn, prompt, response, the judge's score / result / reason, and the
        human label and note given so far (None / "" when not labelled)."""
        row = self.rows.iloc[self.position]
        key = self._key()
        stored = self._stored_label(key) or {}
        score_column = _score_column(self.evaluator)
        return {
            "position": self.position,
            "item": key[0],
            "turn": key[1],
            "prompt": _text(row.get("prompt")),
            "response": _text(row.get("response")),
            "judge_score": _value(row.get(score_column)),
            "judge_result": _value(row.get(f"{self.evaluator}_result")),
            "judge_reason": _text(row.get(f"{self.evaluator}_reason"))
            or _text(row.get(f"{self.evaluator}_error")),
            "label": stored.get(self.field),
            "note": stored.get("note", self._notes.get(key, "")),
        }

    def set_label(self, value: Any, note: str | None = None) -> dict:
        """Label the current row ``value`` (1-5, or "pass" / "fail") and save; ``note`` replaces the note
        (None keeps the one given so far). Returns the stored label."""
        value = self._check(value)
        key = self._key()
        if note is None:
            stored = self._stored_label(key)
            note = stored["note"] if stored else self._notes.get(key, "")
        label = self._store_label(key, value, note)
        self._notes.pop(key, None)
        self._refresh()
        return label

    def set_note(self, note: str) -> None:
        """Set the current row's note: saved with its label at once, or kept until the row is labelled."""
        key = self._key()
        stored = self._stored_label(key)
        if stored is not None:
            self._store_label(key, stored[self.field], note)
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
        return sum(self._stored_label(self._key(p)) is not None for p in range(len(self)))

    def labels_frame(self) -> pd.DataFrame:
        """This evaluator's labels of the rows on show, beside the judge: item, turn, label, note,
        judge_score, judge_result, agrees (label equal to the judge's score, or to its pass/fail)."""
        import pandas as pd

        records = []
        for position in range(len(self)):
            key = self._key(position)
            stored = self._stored_label(key)
            if stored is None:
                continue
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

    # The view ----------------------------------------------------------------------------------------
    def widget(self):
        """The ipywidgets view: the row, the judge's verdict, label buttons, a note, previous / next."""
        if self._view is None:
            self._view = _LabellingView(self)
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


class _LabellingView:
    """ipywidgets over a ``LabellingWidget``; ``buttons`` (one per label value), ``note``, ``previous``,
    ``next``, ``next_unlabelled``, ``header``, ``body`` and ``status`` are its controls."""

    def __init__(self, model: LabellingWidget):
        import ipywidgets as w

        self.model = model
        self._syncing = False
        self.header = w.HTML()
        self.body = w.HTML(layout=w.Layout(width="100%"))
        self.buttons = {}
        for choice in model.choices:
            button = w.Button(description=str(choice), layout=w.Layout(width="64px"))
            button.on_click(lambda _b, choice=choice: self._label_clicked(choice))
            self.buttons[choice] = button
        self.note = w.Textarea(placeholder="note (optional)", continuous_update=False,
                               layout=w.Layout(width="100%", height="60px"))  # fmt: skip
        self.note.observe(self._note_edited, names="value")
        self.previous = w.Button(description="Previous", icon="arrow-left")
        self.previous.on_click(lambda _b: model.previous())
        self.next = w.Button(description="Next", icon="arrow-right")
        self.next.on_click(lambda _b: model.next())
        self.next_unlabelled = w.Button(description="Next unlabelled", icon="forward")
        self.next_unlabelled.on_click(lambda _b: model.next_unlabelled())
        self.status = w.HTML()
        from evalkit.notebook.snapshot import SnapshotBox

        self.container = SnapshotBox(
            [
                self.header,
                self.body,
                w.HBox(
                    [w.HTML(f"<b>Your label ({html.escape(model.scale)})</b>&nbsp;"), *self.buttons.values()]
                ),
                self.note,
                w.HBox([self.previous, self.next, self.next_unlabelled]),
                self.status,
            ],
            layout=w.Layout(width="100%"),
            snapshot=lambda: self.header.value + self.body.value + self.status.value,
            text=lambda: (
                f"<LabellingWidget {model.evaluator!r}: {model.labelled_count()} of {len(model)} labelled>"
            ),
        )
        self.refresh()

    def _label_clicked(self, choice) -> None:
        try:
            self.model.set_label(choice)
        except Exception as exc:  # noqa: BLE001 - the widget's only way to report it
            self.status.value = f"<span style='color:#842029'>{html.escape(str(exc))}</span>"
            return
        if self.model.advance and self.model.position < len(self.model) - 1:
            self.model.next()

    def _note_edited(self, change) -> None:
        if not self._syncing:
            self.model.set_note(change["new"])

    def refresh(self) -> None:
        model = self.model
        row = model.current()
        where = f"item {row['item']}" + ("" if row["turn"] is None else f", turn {row['turn']}")
        self.header.value = (
            f"<b>{html.escape(model.evaluator)}</b> &middot; row {model.position + 1} of {len(model)} "
            f"({html.escape(where)}) &middot; {model.labelled_count()} labelled"
        )
        judge = "not judged" if row["judge_score"] is None else f"{row['judge_score']:g}"
        verdict = f" ({row['judge_result']})" if row["judge_result"] else ""
        self.body.value = (
            _block("Prompt", row["prompt"])
            + _block("Response", row["response"])
            + _block(f"Judge: {judge}{verdict}", row["judge_reason"])
        )
        for choice, button in self.buttons.items():
            button.button_style = "info" if row["label"] == choice else ""
        self._syncing = True
        try:
            if self.note.value != row["note"]:
                self.note.value = row["note"]
        finally:
            self._syncing = False
        label = "no label yet" if row["label"] is None else f"labelled {row['label']}"
        self.status.value = f"{label} &middot; saved in {html.escape(str(model.labels_path))}"
        self.previous.disabled = model.position == 0
        self.next.disabled = model.position == len(model) - 1


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


def _block(title: str, text: str) -> str:
    return (
        f"<div style='margin:4px 0'><b>{html.escape(title)}</b>"
        f"<div style='white-space:pre-wrap;border-left:3px solid #ccc;padding-left:8px'>"
        f"{html.escape(text) or '<i>(empty)</i>'}</div></div>"
    )
