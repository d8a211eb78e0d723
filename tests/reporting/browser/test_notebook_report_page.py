"""``evalkit report`` (the papermill notebook exported onto the one report page), in headless Chromium."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import SCREENSHOTS
from geometry import broken_words, overflowing
from playwright.sync_api import expect
from runs import REPO, evalkit_run

WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    run = evalkit_run("data/demo.json", folder / "run")
    out = folder / "report.html"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "evalkit", "report", str(run), "--baseline", str(run)),
            *("--history", str(folder), "--out", str(out)),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_notebook_report_has_its_sections_charts_and_the_items_table(open_page, report_page):
    watched = open_page(report_page, WIDTH, HEIGHT)
    page = watched.page
    headings = page.locator("section.notebook h2").all_inner_texts()
    for heading in ("Provenance", "Summary", "Charts", "Failing rows", "Comparison with the baseline"):
        assert heading in headings, headings
    figures = page.locator("div.evalkit-figure")
    assert figures.count() >= 4
    for k in range(figures.count()):
        assert figures.nth(k).locator("svg.main-svg").count() >= 1, k
    # --history: the trend of pass rates across the runs under the folder (here the one run)
    titles = page.locator("div.evalkit-figure .gtitle").all_text_contents()
    assert "Pass rates across 1 run" in titles, titles
    # every item, not only the failing ones, with the same filters and item view as the run's page
    assert page.locator("#items-body tr").count() == 12
    page.select_option("#f-status", "fail")
    assert page.locator("#items-body tr").count() == 5
    page.locator("#items-body td.prompt").first.click()
    expect(page.locator("#item-view")).to_be_visible()  # opens on the hashchange event
    row = page.locator("#items-body tr").first.locator("td.prompt").bounding_box()
    assert row["width"] >= 180 and row["x"] + row["width"] <= WIDTH
    assert watched.problems() == []


def test_failing_rows_show_every_reason_whole_one_line_per_evaluator(open_page, report_page):
    """ "what failed" is wrapped in full, one block per failed evaluator, in a column wide enough to read; the
    item opens the whole row (issue 18, item 2)."""
    watched = open_page(report_page, WIDTH, HEIGHT)
    page = watched.page
    table = page.locator("div.evalkit-failing table.rows")
    row = table.locator("tbody tr").filter(has=page.locator("td.item", has_text="#5")).first
    reasons = row.locator("td.failed .reason")
    assert reasons.count() == 2
    assert reasons.nth(0).inner_text().startswith("RetrievalQuery: fail")
    assert reasons.nth(0).inner_text().endswith("contains the excluded term(s) 'FileType:OneNote'.")
    assert reasons.nth(1).inner_text().endswith("missing 'per diem', 'GSA'.")
    assert overflowing(page, "div.evalkit-failing td.failed, div.evalkit-failing td.failed .reason") == []
    assert overflowing(page, "div.evalkit-failing td.status .err") == []
    assert broken_words(page, "div.evalkit-failing td.failed, div.evalkit-failing td.status") == []
    for cell in table.locator("td.failed").all():
        box = cell.bounding_box()
        assert box["width"] >= 300 and box["x"] + box["width"] <= WIDTH, box
        assert cell.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
    row.locator("td.item a").click()
    page.locator("#item-view").wait_for(
        state="visible", timeout=10_000
    )  # the view opens after the click handler
    assert page.locator("#item-view").is_visible() and page.evaluate("location.hash") == "#item-5"
    assert watched.problems() == []


def test_baseline_comparison_fits_the_window(open_page, report_page):
    """At 1280 px the page is no wider than the window: the deltas' last column is on screen (issue 18, item 5)."""
    watched = open_page(report_page, WIDTH, HEIGHT)
    page = watched.page
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    improved = page.locator("table.deltas thead th").last
    assert improved.inner_text() == "improved"
    box = improved.bounding_box()
    assert box["x"] + box["width"] <= WIDTH, box
    assert watched.problems() == []


def test_score_distributions_count_whole_rows_in_rows_of_charts_close_together(open_page, report_page):
    """The grid of score distributions: whole row counts on every y axis, rows of charts no more than 80 px
    apart, failing scores red, and keyword_coverage's one value one normal bar (issue 31, item 9)."""
    watched = open_page(report_page, WIDTH, HEIGHT)
    page = watched.page
    grid = page.locator("div.evalkit-figure").filter(
        has=page.locator(".gtitle", has_text="Score distributions")
    )
    # every subplot's y ticks (g.ytick, g.y2tick, ...)
    ticks = [t.replace(",", "") for t in grid.locator("g.yaxislayer-above text").all_text_contents()]
    assert len(ticks) >= 2 * 8 and all(t.isdigit() for t in ticks), ticks
    plots = grid.evaluate(
        """g => Array.from(g.querySelectorAll('rect.nsewdrag')).map(r => {
             const b = r.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, width: b.width};
           })"""
    )
    rows = sorted({(round(p["top"]), round(p["bottom"])) for p in plots})
    assert len(rows) == 4, rows  # the demo's 8 evaluators in two columns
    gaps = [below[0] - above[1] for above, below in zip(rows, rows[1:])]
    assert all(40 <= gap <= 80 for gap in gaps), gaps
    fills = grid.evaluate(
        """g => Array.from(g.querySelectorAll('g.point path')).filter(p => p.getBBox().height > 0.5)
                 .map(p => [getComputedStyle(p).fill, p.getBBox().width])"""
    )
    assert {fill for fill, _ in fills} == {"rgb(207, 34, 46)", "rgb(26, 127, 55)"}
    widest = max(width for _, width in fills)
    assert widest <= 0.5 * plots[0]["width"]  # ExactMatch's two bars; no bar fills its plot
    grid.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    grid.screenshot(path=SCREENSHOTS / "notebook-report-scores.png")
    assert watched.problems() == []
