"""Issue 18 item 15: where labels live. The widget says "your label: 2" for a row's label and "4 of 11 rows
labelled" for the count (two words, two meanings); an unattended notebook run (papermill, nbconvert) gets a
fresh labels file of its own unless the ``labels_file`` parameter names one. ``unattended()`` is checked on a
real IPython kernel, sent execute requests as JupyterLab (allow_stdin true) and nbclient (false) send them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import evalkit
from evalkit.notebook import LabellingWidget
from evalkit.notebook.parameters import UNATTENDED_LABELS, labels_path_for, unattended

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    shutil.copy(REPO / "data" / "demo.json", folder / "demo.json")
    return evalkit.evaluate(
        evalkit.load(folder / "demo.json"), custom_dir=REPO / "custom-evaluators", progress=False
    )


def test_the_label_and_the_count_use_different_words(judged, tmp_path):
    model = LabellingWidget(judged, "forbidden_terms", labels_path=tmp_path / "x.labels.json")
    view = model.view
    assert "0 of 11 rows labelled" in view.header.value
    assert view.status.value.startswith("no label yet &middot; labels are saved as you give them in ")
    model.set_label(4)
    model.next()
    model.set_label(2)
    view.refresh()
    assert "2 of 11 rows labelled" in view.header.value
    assert view.status.value == (
        f"your label: 2 &middot; labels are saved as you give them in {tmp_path / 'x.labels.json'} (a widget "
        "opened on that file shows them again)"
    )
    assert "labelled 2" not in view.status.value + view.header.value


def test_labels_path_for_keeps_a_persons_labels_apart_from_unattended_runs(tmp_path, monkeypatch):
    import evalkit.notebook.parameters as parameters

    (tmp_path / "demo.labels.json").write_text('{"version": 2, "labels": []}')
    monkeypatch.setattr(parameters, "unattended", lambda: False)
    assert labels_path_for(None, tmp_path, "data/demo.json") == tmp_path / "demo.labels.json"
    monkeypatch.setattr(parameters, "unattended", lambda: True)
    earlier = tmp_path / UNATTENDED_LABELS
    earlier.write_text('{"version": 2, "labels": [{"item": 0}]}')  # a previous unattended run's labels
    assert labels_path_for(None, tmp_path, "data/demo.json") == earlier
    assert not earlier.exists()  # emptied: the run starts with no labels
    assert (
        tmp_path / "demo.labels.json"
    ).read_text() == '{"version": 2, "labels": []}'  # the person's: untouched
    shared = tmp_path / "shared.labels.json"
    shared.write_text("{}")
    assert labels_path_for(shared, tmp_path, "data/demo.json") == shared and shared.read_text() == "{}"


def test_unattended_is_false_outside_a_kernel_and_true_with_injected_parameters():
    assert unattended([]) is False
    assert unattended(["# Parameters (papermill)\nx = 1", "# Parameters\nx = 2\n"]) is True


@pytest.mark.slow  # starts a real kernel
def test_unattended_on_a_real_kernel_follows_allow_stdin():
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        seen = {}
        for allow_stdin in (True, False):
            msg_id = client.execute(
                "from evalkit.notebook.parameters import unattended; print(unattended())",
                allow_stdin=allow_stdin,
            )
            out = []
            while True:
                msg = client.get_iopub_msg(timeout=60)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "stream":
                    out.append(msg["content"]["text"])
                if msg["msg_type"] == "error":
                    raise AssertionError("\n".join(msg["content"]["traceback"]))
                if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    break
            seen[allow_stdin] = "".join(out).strip()
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert seen == {True: "False", False: "True"}


@pytest.mark.slow  # runs the judge-studio notebook with papermill
def test_a_papermill_run_does_not_bring_back_interactive_labels(tmp_path):
    import papermill

    project = tmp_path / "project"
    for folder in ("notebooks", "data", "custom-evaluators"):
        shutil.copytree(REPO / folder, project / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", project / "pyproject.toml")
    out = project / "results" / "judge_studio"
    out.mkdir(parents=True)
    mine = json.dumps(
        {
            "version": 2,
            "labels": [
                {"item": i, "turn": None, "evaluator": "hr_answer_quality", "score": 1, "note": "mine",
                 "prompt_sha256": None}
                for i in (5, 6, 7)
            ],
        }
    )  # fmt: skip
    (out / "demo.labels.json").write_text(mine)
    executed = papermill.execute_notebook(
        str(project / "notebooks" / "judge_studio.ipynb"),
        str(tmp_path / "out.ipynb"),
        cwd=str(project),
        kernel_name="python3",
        progress_bar=False,
    )
    text = "".join(
        "".join(o.get("text", "")) + json.dumps(o.get("data", {}))
        for c in executed.cells
        for o in c.get("outputs", [])
    )
    assert f"labels file: {out / UNATTENDED_LABELS}" in text
    assert re.search(r"2 of \d+ rows labelled", text) and "mine" not in text
    assert (out / "demo.labels.json").read_text() == mine  # the person's labels: neither read nor changed
    labels = json.loads((out / UNATTENDED_LABELS).read_text())["labels"]
    assert [label["score"] for label in labels] == [4, 2]
