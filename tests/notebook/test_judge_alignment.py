"""The judge studio's alignment: ``align()``, the aligned versions beside the original, and the widget's button.

The studio's judge is evalkit's scaffold (saved by the studio), judged through promptflow against the local
model server in its rule-following mode; the labels are evalkit's synthetic set, written beside the document
as the labelling widget writes them. The widget is driven through its controls (``click()``), as the other
notebook widget tests do.
"""

from __future__ import annotations

import json

import pytest

import evalkit
from evalkit.errors import EvalkitError
from evalkit.notebook import JudgeStudio
from evalkit.testing.labelled import synthetic_labelled


def config(server) -> dict:
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


@pytest.fixture
def project(tmp_path):
    document, labels = synthetic_labelled(24, seed=3, evaluator="answer_quality")
    (tmp_path / "set.json").write_text(json.dumps(document), encoding="utf-8")
    return tmp_path, labels


@pytest.mark.slow  # builds the widget (ipywidgets)
def test_alignment_needs_a_saved_judge_and_labels(project, model_server):
    folder, _ = project
    studio = JudgeStudio("answer_quality", custom_dir=folder / "ce", df=evalkit.load(folder / "set.json"))
    with pytest.raises(EvalkitError, match="save the judge first"):
        studio.align()
    studio.save()
    with pytest.raises(EvalkitError, match="no labels file .*set.labels.json"):
        studio.align()
    with pytest.raises(EvalkitError, match="no aligned version yet"):
        studio.aligned_diff()
    assert list(studio.aligned_versions()["name"]) == ["answer_quality"]
    studio.view.align_button.click()
    assert "align failed: no labels file" in studio.view.alignment.value
    assert model_server.request_count == 0


@pytest.mark.slow
def test_the_align_button_writes_an_aligned_version_listed_beside_the_original_with_its_diff(
    project, model_server
):
    folder, labels = project
    (folder / "set.labels.json").write_text(json.dumps(labels), encoding="utf-8")
    studio = JudgeStudio(
        "answer_quality",
        custom_dir=folder / "ce",
        df=evalkit.load(folder / "set.json"),
        model_config=config(model_server),
    )
    studio.save()
    studio.view.align_button.click()
    html = studio.view.alignment.value
    assert "Verdict:" in html and "answer_quality_aligned" in html, html
    assert (
        studio.alignment is not None and studio.alignment.written == folder / "ce" / "answer_quality_aligned"
    )
    versions = studio.aligned_versions()
    assert list(versions["name"]) == ["answer_quality", "answer_quality_aligned"]
    assert versions.loc[1, "kappa_after"] > versions.loc[1, "kappa_before"]
    diff = studio.aligned_diff()
    assert diff.startswith("--- answer_quality.prompty\n+++ answer_quality_aligned.prompty")
    assert '+- When the response contains "' in diff
    assert "Alignment" in studio.view.snapshot_html()


def test_the_studio_and_the_labelling_widget_find_labels_in_one_place(project, monkeypatch):
    """The shipped notebook keeps labels in its output folder: the studio is opened on that file and the widget
    on ``studio.labels_path``, so "Align to labels" reads what was labelled (it looked beside the document)."""
    import evalkit.notebook.parameters as parameters
    from evalkit.analysis.labels import labels_path
    from evalkit.notebook import LabellingWidget
    from evalkit.notebook.parameters import labels_path_for

    folder, labels = project
    df = evalkit.load(folder / "set.json")
    beside = JudgeStudio("answer_quality", custom_dir=folder / "ce", df=df)
    assert beside.labels_path == labels_path(df) == folder / "set.labels.json"
    assert LabellingWidget(df, "answer_quality").labels_path == beside.labels_path

    monkeypatch.setattr(parameters, "unattended", lambda: False)  # a person's Jupyter session
    out = folder / "results" / "judge_studio"
    where = labels_path_for(None, out, folder / "set.json")
    assert where == out / "set.labels.json" == labels_path(df, out)
    studio = JudgeStudio("answer_quality", custom_dir=folder / "ce", df=df, labels_path=where)
    out.mkdir(parents=True)
    where.write_text(json.dumps(labels), encoding="utf-8")  # what labelling there wrote
    labelling = LabellingWidget(df, "answer_quality", labels_path=studio.labels_path)
    assert labelling.labels_path == where and labelling.labelled_count() == len(labels["labels"])
    studio.save()
    with pytest.raises(EvalkitError, match=r"no labels file .*other.labels.json yet: label rows with "):
        JudgeStudio(
            "answer_quality", custom_dir=folder / "ce", df=df, labels_path=out / "other.labels.json"
        ).align()


@pytest.mark.slow  # a whole alignment
def test_align_reads_the_labels_file_the_studio_was_opened_on(project, model_server):
    folder, labels = project
    where = folder / "results" / "set.labels.json"
    where.parent.mkdir()
    where.write_text(json.dumps(labels), encoding="utf-8")
    studio = JudgeStudio(
        "answer_quality",
        custom_dir=folder / "ce",
        df=evalkit.load(folder / "set.json"),
        model_config=config(model_server),
        labels_path=where,
    )
    studio.save()
    assert studio.align().written == folder / "ce" / "answer_quality_aligned"
