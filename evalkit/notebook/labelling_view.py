"""The ipywidgets view of :class:`evalkit.notebook.labelling.LabellingWidget` (all state lives in the model).

Controls: ``header``; ``body`` (prompt, response, expected response, context, then the judge's verdict, or a
"hidden until you label" line in blind mode); ``buttons`` (one per label value, they never move on unless the
model's ``advance`` is set); ``note`` (sent as it is typed, so a note typed after the label is never lost);
``keys`` (a key box: ipywidgets has no global key handler, so typed keys go through ``model.press``);
``previous`` / ``next`` / ``next_unlabelled``; ``blind`` (a checkbox); ``agreement`` (the ``calibrate()``
figures of the rows labelled so far, recomputed when a label changes); ``status``.
"""

from __future__ import annotations

import html
from typing import Any


class LabellingView:
    """ipywidgets over a ``LabellingWidget``: every control calls the model, ``refresh`` redraws from it."""

    def __init__(self, model: Any):
        """``model``: the LabellingWidget (not imported here: the model imports this module)."""
        import ipywidgets as w

        from evalkit.notebook.snapshot import SnapshotBox

        self.model = model
        self._syncing = False
        self._agreement_at: int | None = None  # model.changes when the agreement panel was last computed
        self.header = w.HTML()
        self.body = w.HTML(layout=w.Layout(width="100%"))
        self.buttons = {}
        for choice in model.choices:
            button = w.Button(description=str(choice), layout=w.Layout(width="64px"))
            button.on_click(lambda _b, choice=choice: self._act(lambda: self._label(choice)))
            self.buttons[choice] = button
        self.note = w.Textarea(placeholder="note (optional): before or after the label, saved with it",
                               continuous_update=True, layout=w.Layout(width="100%", height="60px"))  # fmt: skip
        self.note.observe(self._note_edited, names="value")
        label_keys = "/".join(model.label_keys)
        self.keys = w.Text(placeholder=f"keys: {label_keys} label, n next, b back, u next unlabelled",
                           continuous_update=True, layout=w.Layout(width="360px"))  # fmt: skip
        self.keys.observe(self._keys_typed, names="value")
        self.previous = w.Button(description="Previous", icon="arrow-left")
        self.previous.on_click(lambda _b: self._act(model.previous))
        self.next = w.Button(description="Next", icon="arrow-right")
        self.next.on_click(lambda _b: self._act(model.next))
        self.next_unlabelled = w.Button(description="Next unlabelled", icon="forward")
        self.next_unlabelled.on_click(lambda _b: self._act(model.next_unlabelled))
        self.blind = w.Checkbox(value=model.blind, description="Blind (judge hidden until labelled)",
                                indent=False)  # fmt: skip
        self.blind.observe(self._blind_changed, names="value")
        self.agreement = w.HTML()
        self.status = w.HTML()
        self._error = ""
        self.container = SnapshotBox(
            [
                self.header,
                self.body,
                w.HBox(
                    [w.HTML(f"<b>Your label ({html.escape(model.scale)})</b>&nbsp;"), *self.buttons.values()]
                ),
                self.note,
                w.HBox([self.previous, self.next, self.next_unlabelled, self.blind]),
                self.keys,
                self.status,
                self.agreement,
            ],
            layout=w.Layout(width="100%"),
            snapshot=lambda: self.header.value + self.body.value + self.status.value + self.agreement.value,
            text=lambda: (
                f"<LabellingWidget {model.evaluator!r}: {model.labelled_count()} of {len(model)} labelled>"
            ),
        )
        self.refresh()

    # Events ------------------------------------------------------------------------------------------
    def _act(self, action) -> None:
        """Run a control's action; a mistake is shown in the status line (a widget has no other way)."""
        self._error = ""
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - the widget's only way to report it
            self._error = str(exc)
        self.refresh()

    def _label(self, choice) -> None:
        self.model.set_label(choice)
        if self.model.advance and self.model.position < len(self.model) - 1:
            self.model.next()

    def _note_edited(self, change) -> None:
        if not self._syncing:
            self._act(lambda: self.model.set_note(change["new"]))

    def _keys_typed(self, change) -> None:
        if self._syncing or not change["new"]:
            return
        typed = change["new"]
        self._syncing = True
        try:
            self.keys.value = ""
        finally:
            self._syncing = False
        for key in typed:
            if key.strip():
                self._act(lambda key=key: self.model.press(key))
                if self._error:
                    break

    def _blind_changed(self, change) -> None:
        if not self._syncing:
            self._act(lambda: self.model.set_blind(change["new"]))

    # Drawing -----------------------------------------------------------------------------------------
    def refresh(self) -> None:
        model = self.model
        row = model.current()
        where = f"item {row['item']}" + ("" if row["turn"] is None else f", turn {row['turn']}")
        self.header.value = (
            f"<b>{html.escape(model.evaluator)}</b> &middot; row {model.position + 1} of {len(model)} "
            f"({html.escape(where)}) &middot; {labelled_of(model.labelled_count(), len(model))}"
        )
        if row["judge_hidden"]:
            judge = _block("Judge", "", empty="hidden until you label this row (blind mode)")
        else:
            score = "not judged" if row["judge_score"] is None else f"{row['judge_score']:g}"
            verdict = f" ({row['judge_result']})" if row["judge_result"] else ""
            judge = _block(f"Judge: {score}{verdict}", row["judge_reason"])
        self.body.value = (
            _block("Prompt", row["prompt"])
            + _block("Response", row["response"])
            + _block("Expected response", row["expected_response"])
            + _block("Context", row["context"])
            + judge
        )
        for choice, button in self.buttons.items():
            button.button_style = "info" if row["label"] == choice else ""
        self._syncing = True
        try:
            if self.note.value != row["note"]:
                self.note.value = row["note"]
            self.blind.value = model.blind
        finally:
            self._syncing = False
        label = "no label yet" if row["label"] is None else f"your label: {row['label']}"
        if row["stale_label"]:
            label += (
                " (the label stored here was given for another prompt: the document changed; label it again)"
            )
        status = (
            f"{html.escape(label)} &middot; labels are saved as you give them in "
            f"{html.escape(str(model.labels_path))} (a widget opened on that file shows them again)"
        )
        if self._error:
            status = f"<span style='color:#842029'>{html.escape(self._error)}</span><br>{status}"
        self.status.value = status
        self.previous.disabled = model.position == 0
        self.next.disabled = model.position == len(model) - 1
        if self._agreement_at != model.changes:
            self._agreement_at = model.changes
            self.agreement.value = self._agreement_html()

    def _agreement_html(self) -> str:
        """The agreement panel: ``calibrate()`` on the rows labelled so far (escaped), or why there is none."""
        from evalkit.analysis.calibration_views import calibration_html
        from evalkit.errors import EvalkitError

        try:
            calibration = self.model.agreement()
        except EvalkitError as exc:
            return f"<b>Agreement</b>: <i>{html.escape(str(exc))}</i>"
        if calibration is None:
            return "<b>Agreement</b>: <i>label some rows to see how often the judge agrees with you</i>"
        return "<b>Agreement with the judge (rows labelled so far)</b>" + calibration_html(
            calibration, max_rows=5
        )


def _block(title: str, text: str, empty: str = "(empty)") -> str:
    return (
        f"<div style='margin:4px 0'><b>{html.escape(title)}</b>"
        f"<div style='white-space:pre-wrap;border-left:3px solid #ccc;padding-left:8px'>"
        f"{html.escape(text) or f'<i>{html.escape(empty)}</i>'}</div></div>"
    )


def labelled_of(labelled: int, rows: int) -> str:
    """The header's progress: ``"4 of 10 rows labelled"`` (the count of rows with a label, never a label value:
    the status line says the row's label as "your label: 2")."""
    return f"{labelled:,} of {rows:,} {'row' if rows == 1 else 'rows'} labelled"
