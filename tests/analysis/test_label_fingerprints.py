"""Labels record the fingerprint of the prompt they were given for, so they never pair with another prompt.

After the eval document's items are reordered or edited, item 3 may be a different question; a label made for
the old item 3 must then not count as a human judgment of the new one. Version 1 label files (no fingerprint)
still load and pair by position.
"""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from evalkit.analysis.calibration import calibrate
from evalkit.analysis.labels import Labels, label_matches, labels_frame, prompt_fingerprint
from evalkit.documents.versions import EvalkitWarning
from evalkit.errors import EvalkitError


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def table(prompts: list[str], scores: list[float]) -> pd.DataFrame:
    """Single-turn rows scored by the judge Relevance (key ``relevance``)."""
    df = pd.DataFrame(
        {
            "item": range(len(prompts)),
            "turn": pd.array([None] * len(prompts), dtype="Int64"),
            "prompt": prompts,
            "response": [f"answer to {p}" for p in prompts],
            "relevance": scores,
            "relevance_result": ["pass" if s >= 3 else "fail" for s in scores],
            "relevance_reason": "because",
            "relevance_threshold": 3.0,
        }
    )
    df.attrs["evalkit"] = {"scored": [{"name": "Relevance", "key": "relevance"}]}
    return df


def test_a_label_records_its_prompt_fingerprint_in_a_version_2_file(tmp_path):
    labels = Labels(tmp_path / "d.labels.json")
    stored = labels.set(0, None, "Relevance", score=4, prompt="How many vacation days?")
    assert stored["prompt_sha256"] == sha("How many vacation days?")
    labels.set(1, 2, "Relevance", verdict="pass")  # no prompt given: no fingerprint
    labels.save()

    data = json.loads((tmp_path / "d.labels.json").read_text())
    assert data["version"] == 2
    assert [e["prompt_sha256"] for e in data["labels"]] == [sha("How many vacation days?"), None]
    again = Labels.load(tmp_path / "d.labels.json")
    assert again.get(0, None, "Relevance")["prompt_sha256"] == sha("How many vacation days?")
    assert again.frame()["prompt_sha256"].tolist() == [sha("How many vacation days?"), None]
    assert prompt_fingerprint(None) is None and prompt_fingerprint(float("nan")) is None


def test_label_matches_compares_fingerprints_and_accepts_labels_without_one():
    label = {"item": 0, "prompt_sha256": sha("q0")}
    assert label_matches(label, "q0")
    assert not label_matches(label, "q0 (edited)")
    assert not label_matches(label, None)
    assert label_matches({"item": 0, "prompt_sha256": None}, "anything")
    assert label_matches({"item": 0}, "anything")


def test_a_version_1_file_still_loads_and_is_written_back_as_version_2(tmp_path):
    path = tmp_path / "old.labels.json"
    old = {"item": 0, "turn": None, "evaluator": "Relevance", "score": 4, "verdict": None, "note": "ok",
           "labeller": "ana", "at": "2026-05-09T07:35:25+00:00"}  # fmt: skip
    path.write_text(json.dumps({"version": 1, "labels": [old]}))
    labels = Labels.load(path)
    assert labels.get(0, None, "Relevance") == {**old, "prompt_sha256": None}
    labels.save()
    assert json.loads(path.read_text())["version"] == 2
    # an old label has no fingerprint: it pairs by position, as before
    cal = calibrate(table(["q0", "q1"], [4.0, 2.0]), "Relevance", path)
    assert int(cal.table.loc["Relevance", "n"]) == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"version": 3, "labels": []}, "has version 3; this evalkit reads versions 1 and 2"),
        ({"version": True, "labels": []}, "has version True"),
        (
            {
                "version": 2,
                "labels": [{"item": 4, "evaluator": "Relevance", "score": 3, "prompt_sha256": "abc"}],
            },
            "label #0 (label of item 4, evaluator 'Relevance'): prompt_sha256 must be the 64-character",
        ),
    ],
)
def test_unreadable_versions_and_bad_fingerprints_are_refused(tmp_path, data, message):
    path = tmp_path / "x.labels.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EvalkitError) as caught:
        Labels.load(path)
    assert message in str(caught.value)


def test_labels_never_pair_with_another_prompt_after_the_items_are_reordered(tmp_path):
    prompts = ["q0", "q1", "q2", "q3"]
    labels = Labels(tmp_path / "d.labels.json")
    for item, (prompt, human) in enumerate(zip(prompts, [4, 2, 5, 1])):
        labels.set(item, None, "Relevance", score=human, prompt=prompt)
    labels.save()

    before = calibrate(table(prompts, [4.0, 2.0, 5.0, 1.0]), "Relevance", labels)
    assert int(before.table.loc["Relevance", "n"]) == 4 and before.table.loc["Relevance", "exact"] == 1.0

    # items 1 and 2 swapped in the document (and q3 edited): the labels of items 1, 2 and 3 are of other prompts
    reordered = table(["q0", "q2", "q1", "q3 (edited)"], [4.0, 5.0, 2.0, 1.0])
    with pytest.warns(EvalkitWarning) as caught:
        after = calibrate(reordered, "Relevance", tmp_path / "d.labels.json")
    message = str(caught[0].message)
    assert "3 human label(s) not paired" in message and "item 1, item 2, item 3" in message
    assert "label these rows again" in message
    assert int(after.table.loc["Relevance", "n"]) == 1 and after.pairs["item"].tolist() == [0]
    assert int(after.table.loc["Relevance", "labels"]) == 4


def test_a_labels_dataframe_may_carry_fingerprints():
    given = pd.DataFrame({"item": [0, 1], "score": [4, 2], "prompt_sha256": [sha("q0"), None]})
    assert labels_frame(given)["prompt_sha256"].tolist() == [sha("q0"), None]
    with pytest.warns(EvalkitWarning, match="item 0"):
        cal = calibrate(table(["other", "q1"], [4.0, 2.0]), "Relevance", given)
    assert cal.pairs["item"].tolist() == [1]
