"""The tables the widgets and the report notebook emit, laid out with JupyterLab's and ipywidgets' CSS in
Chromium at a JupyterLab notebook's width (issue 18, item 7): reasons get room, text is left-aligned, the
Inputs panel shows every column."""

from __future__ import annotations

import pytest
from geometry import overflowing
from jupyterlab import notebook_page, widget_html
from runs import REPO

import evalkit
from evalkit.notebook import JudgeStudio
from evalkit.reporting import notebook_report

#: The output area of a notebook in JupyterLab at 1280 px with the file browser open.
OUTPUT_WIDTH = 900


@pytest.fixture
def studio(tmp_path, model_server):
    studio = JudgeStudio(
        "answer_quality",
        custom_dir=tmp_path / "custom-evaluators",
        df=evalkit.load(REPO / "data" / "demo.json"),
    )
    studio.model_config = {"base_url": model_server.openai_base_url, "model": "judge", "api_key": "k"}
    return studio


def test_studio_results_give_the_reason_room_and_the_inputs_show_every_column(open_page, studio, tmp_path):
    view = studio.view
    view.how.value, view.n.value = "random", 4
    view.sample_button.click()
    view.run_button.click()
    view.sections["system"].value = 'Be strict. Reply with JSON {"score": 1-5, "reason": "..."}'
    view.run_button.click()
    assert "v1_reason" in view.results.value
    page = open_page(
        notebook_page(tmp_path / "lab.html", [("widget", widget_html(view.container))], OUTPUT_WIDTH)
    )
    lab = page.page
    results = lab.locator("table").filter(has=lab.locator("th", has_text="v1_reason")).first
    headers = results.locator("thead th").all_inner_texts()
    reason = headers.index("v1_reason")
    for row in results.locator("tbody tr").all():
        cell = row.locator("td, th").nth(reason)
        assert cell.bounding_box()["width"] >= 180, cell.inner_text()
        assert row.bounding_box()["height"] <= 160, row.inner_text()
        assert cell.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
    inputs = lab.locator("table").filter(has=lab.locator("th", has_text="problem")).first
    panel = inputs.locator("xpath=ancestor::div[contains(@class, 'widget-html')][1]").bounding_box()
    for name in ("filled", "problem"):
        box = inputs.locator("thead th", has_text=name).bounding_box()
        assert box["x"] + box["width"] <= panel["x"] + panel["width"] + 1, (name, box, panel)
    assert page.problems() == []


def test_report_failing_rows_read_left_aligned_one_reason_a_line_in_jupyterlab(open_page, tmp_path):
    run = evalkit.evaluate(
        evalkit.load(REPO / "data" / "demo.json"), custom_dir=REPO / "custom-evaluators", progress=False
    )
    output = notebook_report.failing_html(run)
    page = open_page(notebook_page(tmp_path / "lab.html", [("html", output)], OUTPUT_WIDTH))
    lab = page.page
    row = lab.locator("table.rows tbody tr").filter(has_text="RetrievalQuery").first
    reasons = row.locator("td.failed .reason")
    assert reasons.count() == 2
    first, second = (r.bounding_box() for r in reasons.all())
    assert second["y"] >= first["y"] + first["height"] - 1  # one below the other, not run together
    for cell in lab.locator("table.rows td, table.rows th").all():
        assert cell.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
    assert lab.locator("table.rows").evaluate("e => getComputedStyle(e).tableLayout") == "auto"
    assert overflowing(lab, "table.rows td.failed .reason") == []
    assert page.problems() == []


def test_the_static_copy_hides_beside_a_drawn_widget_and_shows_beside_a_blank_one(
    open_page, studio, tmp_path
):
    """JupyterLab draws the widget: its static copy (the next output) is hidden. nbconvert's page without the
    widget manager leaves the widget's output a div of scripts: the copy shows (issue 18, item 9)."""
    box = studio.view.container
    copy = box.static_html()
    blank = '<div class="jupyter-widgets jp-OutputArea-output"><script type="text/javascript">var x;</script></div>'
    live = open_page(
        notebook_page(tmp_path / "live.html", [("widget", widget_html(box)), ("html", copy)], 900)
    )
    assert not live.page.locator("div.evalkit-widget-snapshot").is_visible()
    exported = open_page(notebook_page(tmp_path / "export.html", [("html", blank), ("html", copy)], 900))
    shown = exported.page.locator("div.evalkit-widget-snapshot")
    assert shown.is_visible() and "answer_quality" in shown.inner_text()
    assert live.problems() == [] and exported.problems() == []
