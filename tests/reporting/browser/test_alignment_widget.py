"""The judge studio's alignment panel in Chromium, laid out with JupyterLab's and ipywidgets' CSS at a notebook's
width: after "Align to labels", the held-out table, the verdict and the versions on disk are shown and readable
(no cell cut off, text left-aligned), and the page makes no request and raises no error."""

from __future__ import annotations

import json

from geometry import overflowing
from jupyterlab import notebook_page, widget_html

import evalkit
from evalkit.notebook import JudgeStudio
from evalkit.testing.labelled import synthetic_labelled

OUTPUT_WIDTH = 900


def test_the_alignment_panel_shows_the_held_out_table_and_the_versions(open_page, model_server, tmp_path):
    document, labels = synthetic_labelled(24, seed=3, evaluator="answer_quality")
    (tmp_path / "set.json").write_text(json.dumps(document), encoding="utf-8")
    (tmp_path / "set.labels.json").write_text(json.dumps(labels), encoding="utf-8")
    studio = JudgeStudio(
        "answer_quality",
        custom_dir=tmp_path / "custom-evaluators",
        df=evalkit.load(tmp_path / "set.json"),
        model_config={"base_url": model_server.openai_base_url, "model": "judge", "api_key": "k"},
    )
    studio.save()
    view = studio.view
    view.align_button.click()
    page = open_page(
        notebook_page(tmp_path / "lab.html", [("widget", widget_html(view.container))], OUTPUT_WIDTH)
    )
    lab = page.page
    panel = lab.locator(".evalkit-alignment")
    assert panel.count() == 1
    table = panel.locator("table").first
    assert table.locator("th").all_inner_texts() == ["metric", "before", "after", "after - before", "verdict"]
    assert [r.locator("td").first.inner_text() for r in table.locator("tr").all()[1:]] == [
        "kappa",
        "Spearman",
        "exact agreement",
    ]
    assert "Verdict:" in panel.inner_text()
    versions = lab.locator("table").filter(has=lab.locator("th", has_text="kappa_after")).first
    assert "answer_quality_aligned" in versions.inner_text()
    for cell in table.locator("td").all():
        assert cell.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
    assert overflowing(lab, ".evalkit-alignment td") == []
    assert page.problems() == []
