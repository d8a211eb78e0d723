"""The comparison on the one report page (``evalkit compare A B --out``), in headless Chromium."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import SCREENSHOTS
from playwright.sync_api import expect
from runs import REPO, evalkit_run

WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """The demo (A) against a copy whose item 2 answer was fixed and item 0 answer broken (B); B's document
    differs, so the page must say so."""
    folder = tmp_path_factory.mktemp("compare")
    document = json.loads((REPO / "data" / "demo.json").read_text("utf-8"))
    document["items"][2]["response"] = "Form HR-12"
    document["items"][0]["response"] = "New employees get 15 vacation days per year."
    changed = folder / "demo-changed.json"
    changed.write_text(json.dumps(document), "utf-8")
    a = evalkit_run("data/demo.json", folder / "a")
    b = evalkit_run(str(changed), folder / "b")
    out = folder / "compare.html"
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "compare", str(a), str(b), "--out", str(out), "--resamples", "200"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_comparison_page_warns_colours_nothing_unsupported_and_diffs_words(open_page, compared):
    watched = open_page(compared, WIDTH, HEIGHT)
    page = watched.page
    banners = page.locator(".banner.warning").all_inner_texts()
    assert any(b.startswith("Different documents.") for b in banners), banners
    # 12 paired rows, a handful changed: no test supports a change, so nothing is coloured
    assert page.locator(".deltas td.up, .deltas td.down").count() == 0
    assert "McNemar's exact test" in page.locator("#comparison-method").inner_text()
    regressed = page.locator("h3#regressed + table.changes tbody tr")
    improved = page.locator("h3#improved + table.changes tbody tr")
    assert regressed.count() >= 1 and improved.count() >= 1
    row = regressed.filter(has_text="#0").first
    assert row.locator(".diff del").first.inner_text().strip() != ""
    assert "15" in row.locator(".diff ins").all_inner_texts()
    fixed = improved.filter(has_text="#2").first
    assert fixed.locator(".diff del").all_inner_texts() and fixed.locator(".diff ins").all_inner_texts()
    for k in range(page.locator("div.evalkit-figure").count()):
        assert page.locator("div.evalkit-figure").nth(k).locator("svg.main-svg").count() >= 1
    # run B's items below, with the same item view
    assert page.locator("#items-body tr").count() == 12
    row.locator("a").click()
    expect(page.locator("#item-view")).to_be_visible()  # opens on the hashchange event
    assert page.evaluate("location.hash") == "#item-0"
    page.keyboard.press("Escape")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=SCREENSHOTS / "comparison.png")  # the banner and the deltas
    page.evaluate("document.getElementById('regressed').scrollIntoView()")
    page.screenshot(path=SCREENSHOTS / "comparison-diff.png")
    assert watched.problems() == []


def test_chart_titles_fit_and_name_the_interval_their_bars_draw(open_page, compared):
    """Each chart title is whole inside its card; the pass-rate bars are McNemar's exact interval (the table's),
    the mean bars the paired bootstrap (issue 18, item 4)."""
    watched = open_page(compared, WIDTH, HEIGHT)
    page = watched.page
    figures = page.locator("div.charts div.evalkit-figure")
    assert figures.count() == 2
    titles = [f.locator(".gtitle").first.text_content() for f in figures.all()]
    subtitles = [f.locator(".gtitle-subtitle").first.text_content() for f in figures.all()]
    assert titles == ["Pass rate, B - A", "Mean score, B - A"]
    assert subtitles == ["bars: 95% McNemar exact interval", "bars: 95% paired bootstrap interval"]
    for figure in figures.all():
        card = figure.bounding_box()
        for text in figure.locator(".gtitle, .gtitle-subtitle").all():
            box = text.bounding_box()
            assert box["x"] >= card["x"] and box["x"] + box["width"] <= card["x"] + card["width"], box
    assert "bootstrap" not in titles[0] + subtitles[0]
    assert watched.problems() == []
