"""Honest labels: blind by default, the whole row on show, notes kept with their label, keys, "next unlabelled"
that never skips, labels tied to their prompt, and the agreement panel (issue 11, item 6).

Everything is driven through the model's Python API (``press``, ``set_label``, ...) and through the view's
controls (``click()``, setting a widget's ``value`` runs its observers exactly as the browser does).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.errors import EvalkitError
from evalkit.notebook import LabellingWidget

REPO = Path(__file__).resolve().parents[2]
EV = "forbidden_terms"


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> pd.DataFrame:
    folder = tmp_path_factory.mktemp("demo")
    shutil.copy(REPO / "data" / "demo.json", folder / "demo.json")
    return evalkit.evaluate(evalkit.load(folder / "demo.json"), custom_dir=REPO / "custom-evaluators",
                            progress=False)  # fmt: skip


@pytest.fixture
def judged(scored) -> pd.DataFrame:
    return scored.copy()


def saved(path: Path) -> dict:
    """The labels file's labels by (item, turn)."""
    return {(e["item"], e["turn"]): e for e in json.loads(path.read_text())["labels"]}


def test_the_judge_is_hidden_until_the_row_is_labelled(judged, tmp_path):
    reason = judged.loc[0, f"{EV}_reason"]
    assert reason  # the demo judge explains every verdict
    model = LabellingWidget(judged, EV, labels_path=tmp_path / "l.json")
    view = model.view
    row = model.current()
    assert row["judge_hidden"] and row["judge_score"] is None and row["judge_reason"] is None
    assert (
        "hidden until you label this row" in view.body.value and html_escaped(reason) not in view.body.value
    )

    model.press("3")
    row = model.current()
    assert not row["judge_hidden"] and row["judge_score"] == 1.0 and row["judge_reason"] == reason
    assert html_escaped(reason) in view.body.value and "Judge: 1 (pass)" in view.body.value

    model.next()  # the next row is not labelled: hidden again
    assert model.current()["judge_hidden"] and "hidden until" in view.body.value
    view.blind.value = False  # the checkbox turns blind mode off
    assert not model.blind and model.current()["judge_score"] == 1.0
    assert "Judge: 1 (pass)" in view.body.value
    model.set_blind(True)
    assert view.blind.value is True and model.current()["judge_hidden"]
    assert not LabellingWidget(judged, EV, labels_path=tmp_path / "l.json", blind=False).current()[
        "judge_hidden"
    ]


def html_escaped(text: str) -> str:
    import html

    return html.escape(text)


def test_expected_response_and_context_are_shown(judged, tmp_path):
    judged.loc[0, "expected_response"] = "Fifteen days <b>a year</b>."
    judged.loc[0, "context"] = "Handbook section 4.2"
    model = LabellingWidget(judged, EV, labels_path=tmp_path / "l.json")
    row = model.current()
    assert (
        row["expected_response"] == "Fifteen days <b>a year</b>." and row["context"] == "Handbook section 4.2"
    )
    body = model.view.body.value
    assert "Expected response" in body and "Fifteen days &lt;b&gt;a year&lt;/b&gt;." in body
    assert "Context" in body and "Handbook section 4.2" in body


def test_label_then_note_then_next_keeps_the_note_with_its_label(judged, tmp_path):
    path = tmp_path / "l.json"
    model = LabellingWidget(judged, EV, labels_path=path)
    view = model.view
    view.buttons[3].click()
    assert model.position == 0  # a label does not move on: the note can follow
    view.note.value = "typed after the label"
    view.next.click()
    assert model.position == 1
    assert saved(path)[(0, None)]["score"] == 3 and saved(path)[(0, None)]["note"] == "typed after the label"

    view.note.value = "typed first"  # note first, then the label (by key), then Next
    assert (1, None) not in saved(path)
    view.keys.value = "2"
    assert view.keys.value == ""  # the key box empties itself after each key
    assert saved(path)[(1, None)]["score"] == 2 and saved(path)[(1, None)]["note"] == "typed first"
    view.keys.value = "n"
    assert model.position == 2 and view.note.value == ""
    view.previous.click()
    assert view.note.value == "typed first" and view.buttons[2].button_style == "info"


def test_keys_label_and_navigate_and_a_wrong_key_is_explained(judged, tmp_path):
    model = LabellingWidget(judged, EV, labels_path=tmp_path / "l.json")
    assert model.press("4")["label"] == 4 and model.position == 0
    assert model.press("n")["position"] == 1
    assert model.press("b")["position"] == 0
    assert model.press("u")["position"] == 1
    with pytest.raises(EvalkitError, match="key 'x' does nothing here: 1, 2, 3, 4, 5 label the row"):
        model.press("x")
    view = model.view
    view.keys.value = "7"
    assert "key &#x27;7&#x27; does nothing here" in view.status.value and model.current()["label"] is None
    view.keys.value = "5n"  # several keys typed at once run in order
    assert model.go(1)["label"] == 5 and model.position == 1

    advancing = LabellingWidget(judged, EV, labels_path=tmp_path / "a.json", advance=True)
    assert advancing.press("1")["position"] == 1
    verdicts = LabellingWidget(judged, EV, labels_path=tmp_path / "v.json", scale="pass/fail")
    assert verdicts.press("F")["label"] == "fail"


def test_next_unlabelled_visits_every_unlabelled_row_in_order(judged, tmp_path):
    path = tmp_path / "l.json"
    scores = LabellingWidget(judged, EV, labels_path=path)
    scores.go(2)
    scores.set_label(4)
    scores.go(4)
    scores.set_label(4)
    verdicts = LabellingWidget(judged, EV, labels_path=path, scale="pass/fail")
    verdicts.go(1)
    verdicts.set_label("pass")  # a verdict: row 1 is still unlabelled on the 1-5 scale
    edited = judged.copy()
    edited.loc[edited.index[3], "prompt"] = "an edited question"
    stale = LabellingWidget(edited, EV, labels_path=path)
    stale.go(3)
    stale.set_label(2)  # labelled for the edited prompt: on the original table row 3 is unlabelled

    model = LabellingWidget(judged, EV, labels_path=path)
    assert model.labelled_count() == 2
    visited = [model.next_unlabelled()["position"] for _ in range(len(model) - 2)]
    assert visited == [1, 3, 5, 6, 7, 8, 9, 10, 0]
    assert model.current()["position"] == 0
    model.set_label(5)
    model.go(1)
    model.set_label(3)
    assert saved(path)[(1, None)]["verdict"] == "pass"  # the verdict is kept beside the new score
    assert saved(path)[(1, None)]["score"] == 3


def test_labels_record_the_prompt_and_never_pair_with_another(judged, tmp_path):
    path = tmp_path / "l.json"
    model = LabellingWidget(judged, EV, labels_path=path)
    model.set_label(4, note="right")
    prompt = judged.loc[judged.index[0], "prompt"]
    assert saved(path)[(0, None)]["prompt_sha256"] == hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    assert json.loads(path.read_text())["version"] == 2

    reordered = judged.copy()  # items 0 and 1 swapped in the document
    first, second = reordered.index[0], reordered.index[1]
    reordered.loc[[first, second], "prompt"] = reordered.loc[[second, first], "prompt"].to_numpy()
    again = LabellingWidget(reordered, EV, labels_path=path)
    row = again.current()
    assert row["label"] is None and row["stale_label"] and row["judge_hidden"] and row["note"] == ""
    assert again.labelled_count() == 0 and again.labels_frame().empty
    assert "given for another prompt" in again.view.status.value
    again.set_label(2)
    assert not again.current()["stale_label"] and again.labelled_count() == 1


def test_a_version_1_labels_file_still_counts(judged, tmp_path):
    path = tmp_path / "old.labels.json"
    old = {"item": 1, "turn": None, "evaluator": EV, "score": 2, "verdict": None, "note": "old",
           "labeller": "", "at": "2026-05-09T07:35:25+00:00"}  # fmt: skip
    path.write_text(json.dumps({"version": 1, "labels": [old]}))
    model = LabellingWidget(judged, EV, labels_path=path)
    assert model.labelled_count() == 1 and model.go(1)["label"] == 2 and model.current()["note"] == "old"


def test_the_agreement_panel_shows_calibrate_on_the_rows_labelled_so_far(judged, tmp_path):
    model = LabellingWidget(judged, EV, labels_path=tmp_path / "l.json")
    view = model.view
    assert model.agreement() is None and "label some rows" in view.agreement.value
    model.set_label(1)  # the judge scored rows 0 and 6 as 1.0 and 0.0
    model.go(6)
    model.set_label(1)
    assert judged.loc[judged.index[0], EV] == 1.0 and judged.loc[judged.index[6], EV] == 0.0
    calibration = model.agreement(resamples=50)
    figures = calibration.table.loc[EV]
    assert (int(figures["n"]), int(figures["labels"]), figures["exact"]) == (2, 2, 0.5)
    assert figures["within_one"] == 1.0 and figures["bias"] == -0.5  # judge - human: (0 + -1) / 2
    assert "Agreement with the judge" in view.agreement.value and "2 / 2" in view.agreement.value
    # row 6 is the one disagreement: judge 0, human 1, shown as values, not as a dict method (issue 18, item 1)
    assert '<td class="num">0 vs 1</td>' in view.agreement.value
    assert "built-in method" not in view.agreement.value

    verdicts = LabellingWidget(judged, EV, labels_path=tmp_path / "v.json", scale="pass/fail")
    verdicts.set_label("fail")  # the judge said pass
    row = verdicts.agreement(resamples=50).table.loc[EV]
    assert row["on"] == "verdict" and int(row["n"]) == 1 and row["exact"] == 0.0
