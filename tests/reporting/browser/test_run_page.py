"""report.html in headless Chromium: geometry at 1280x800, charts, filters, search, sort, paging, item view.

Each test opens the page through the ``open_page`` fixture, which blocks and records any request that is not a
local file, and ends by asserting that nothing was requested and nothing was logged as an error.
"""

from __future__ import annotations

import pytest
from conftest import SCREENSHOTS
from geometry import broken_words, overflowing
from playwright.sync_api import expect
from runs import evalkit_run

from evalkit.reporting.html_page import write_html

WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    return evalkit_run("data/demo.json", tmp_path_factory.mktemp("demo") / "run")


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("agent") / "run"
    return evalkit_run("data/agent_demo.json", out, "--agent", "data/demo_agent/agent.py:answer")


def _row(page, item: int):
    return page.locator("#items-body tr").filter(has=page.locator("td.item", has_text=f"#{item}")).first


def _visible_items(page) -> list[str]:
    return page.locator("#items-body td.item a").all_inner_texts()


def test_prompt_and_response_of_a_row_are_readable_at_1280(open_page, demo_run):
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    row = _row(page, 6)
    for cell in (row.locator("td.prompt"), row.locator("td.response")):
        box = cell.bounding_box()
        assert box is not None
        assert box["width"] >= 180, box
        assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    widths = [row.locator(f"td.{c}").bounding_box()["width"] for c in ("prompt", "response")]
    assert sum(widths) >= WIDTH / 3  # together at least a third of the width
    assert "Can you promise my bonus" in row.locator("td.prompt").inner_text()
    # evaluator outcomes are compact chips in one column, not one wide column each
    chips = row.locator("td.evals .chip")
    assert chips.count() >= 3 and row.locator("td.evals .chip.fail").count() >= 1
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "report-page.png")
    page.locator("#items-heading").scroll_into_view_if_needed()
    page.evaluate("document.getElementById('items-heading').scrollIntoView()")
    page.screenshot(path=SCREENSHOTS / "report-items.png")
    assert watched.problems() == []


def test_every_chart_drew_an_svg(open_page, demo_run):
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    figures = page.locator("div.evalkit-figure")
    # row status, pass rates, one score distribution per evaluator (8 in the demo)
    assert figures.count() == 2 + 8
    for k in range(figures.count()):
        assert figures.nth(k).locator("svg.main-svg").count() >= 1, k
        assert figures.nth(k).locator("g.trace.bars, g.bars").count() >= 1, k
    assert watched.problems() == []


def test_filters_search_and_sort_change_the_visible_rows(open_page, demo_run):
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    assert len(_visible_items(page)) == 12
    page.select_option("#f-status", "fail")
    failing = _visible_items(page)
    assert len(failing) == 5 and set(page.locator("#items-body td.status .badge").all_inner_texts()) == {
        "fail"
    }
    page.click("#count-all")
    assert len(_visible_items(page)) == 12
    page.select_option("#f-eval", label="ExactMatch: fail")
    assert _visible_items(page) == ["#2"]
    page.select_option("#f-eval", "")
    page.select_option("#f-tag", "safety")
    assert _visible_items(page) == ["#6"]
    page.select_option("#f-tag", "")
    page.fill("#f-query", "BONUS")  # case-insensitive, over prompts, responses, expected and reasons
    expect(page.locator("#items-body tr")).to_have_count(1)  # after the search's debounce
    assert _visible_items(page) == ["#6"]
    page.fill("#f-query", "no forbidden terms")  # a reason, not shown in the table
    expect(page.locator("#items-body tr")).not_to_have_count(1)
    assert 1 < len(_visible_items(page)) < 12
    page.fill("#f-query", "")
    expect(page.locator("#items-body tr")).to_have_count(12)
    page.select_option("#f-sort", label="PartialMatch score \u2193")
    chip = page.locator("#items-body tr").first.locator(".chip", has_text="PartialMatch")
    assert chip.locator("b").inner_text() == "0.957"
    page.select_option("#f-size", "25")
    assert page.locator("#p-label").inner_text() == "page 1 of 1"
    assert watched.problems() == []


def test_item_view_shows_the_whole_item_and_its_trace(open_page, agent_run):
    watched = open_page(agent_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    _row(page, 0).locator("td.prompt").click()
    assert page.evaluate("location.hash") == "#item-0"
    view = page.locator("#item-view")
    expect(view).to_be_visible()  # the view opens on the hashchange event, after the click returns
    text = view.inner_text()
    for heading in (
        "PROMPT",
        "RESPONSE",
        "EXPECTED RESPONSE",
        "CITATIONS",
        "RETRIEVAL",
        "TOOL CALLS",
        "EVALUATORS",
    ):
        assert heading in text.upper(), heading
    assert "Leave-Policy.docx" in text and "rank 1" in text
    spans = view.locator(".waterfall details.span-row")
    assert spans.count() >= 2
    names = spans.locator(".span-name").all_inner_texts()
    assert names[0].startswith("invoke_agent") and any(n.strip().startswith("execute_tool") for n in names)
    bar = spans.nth(1).locator(".span-bar").bounding_box()
    assert bar is not None and bar["width"] > 1
    # attributes on demand: hidden until the span is opened
    attributes = spans.nth(1).locator(".span-attrs")
    assert not attributes.is_visible()
    spans.nth(1).locator("summary").click()
    assert attributes.is_visible() and "gen_ai.tool.name" in attributes.inner_text()
    view.locator(".waterfall").scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / "item-view.png")
    page.click("#iv-close")
    assert not view.is_visible() and page.evaluate("location.hash") == ""
    assert watched.problems() == []


def test_deep_link_opens_every_turn_of_a_thread_in_order(open_page, demo_run):
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT, fragment="#item-9")
    page = watched.page
    view = page.locator("#item-view")
    assert view.is_visible()
    assert "demo-onboarding-1" in page.locator("#iv-title").inner_text()
    turns = view.locator(".iv-turn h3").all_inner_texts()
    assert [t.split()[0:2] for t in turns] == [["Turn", "0"], ["Turn", "1"], ["Turn", "2"]]
    prompts = view.locator(".iv-turn .iv-grid .iv-field:first-child .iv-text").all_inner_texts()
    assert prompts[0].startswith("I start next Monday") and prompts[2].startswith("Do I need")
    page.keyboard.press("Escape")
    assert not view.is_visible()
    assert watched.problems() == []


def test_hostile_text_is_shown_as_text(open_page, tmp_path):
    from tests.reporting.test_reports import XSS_IMG, XSS_SCRIPT, scored_table

    path = tmp_path / "report.html"
    write_html(scored_table(), path)
    watched = open_page(path, WIDTH, HEIGHT)
    page = watched.page
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    first = page.locator("#items-body tr").first
    assert first.locator("td.prompt").inner_text() == XSS_SCRIPT
    assert first.locator("td.response").inner_text() == XSS_IMG
    assert page.locator("#items-body img").count() == 0
    first.locator("td.prompt").click()
    expect(page.locator("#item-view")).to_contain_text(XSS_SCRIPT)  # opens on the hashchange event
    assert dialogs == [] and page.evaluate("typeof window.alert") == "function"
    assert watched.problems() == []


def test_a_large_page_expands_compacted_columns_and_pages(open_page, tmp_path):
    from tests.reporting.test_reports import big_table

    path = tmp_path / "report.html"
    write_html(big_table(3000), path)  # statuses and results embedded as distinct values plus codes
    watched = open_page(path, WIDTH, HEIGHT)
    page = watched.page
    assert page.locator("#f-count").inner_text() == "1\u201350 of 3000 rows"
    assert page.locator("#items-body tr").first.locator("td.status").inner_text().strip() == "error"
    page.select_option("#f-status", "error")
    errors = 3000 // 7 + 1  # rows 0, 7, ..., 2996
    assert page.locator("#f-count").inner_text().endswith(f"of {errors} matching rows (3000 in total)")
    page.click("#p-last")
    assert page.locator("#p-label").inner_text() == f"page {-(-errors // 50)} of {-(-errors // 50)}"
    assert page.locator("#items-body tr").count() == errors % 50
    page.click("#count-all")
    page.fill("#f-query", "reply 2999")
    expect(page.locator("#items-body tr")).to_have_count(1)
    assert _visible_items(page) == ["#2999"]
    assert watched.problems() == []


def test_the_row_count_reads_with_the_right_plural(open_page, demo_run):
    """One matching row is "1 of 1 matching row", as the CLI and summary() count (issue: "1-1 of 1 matching rows")."""
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    page.fill("#f-query", "BONUS")
    expect(page.locator("#items-body tr")).to_have_count(1)
    assert page.locator("#f-count").inner_text().endswith("of 1 matching row (12 in total)")
    page.fill("#f-query", "")
    expect(page.locator("#items-body tr")).to_have_count(12)
    assert page.locator("#f-count").inner_text().endswith("of 12 rows")
    assert watched.problems() == []


def test_status_and_thread_labels_keep_their_words_whole(open_page, demo_run):
    """The status column shows error codes and messages, the item column thread labels, without breaking a
    word ("evaluation Crashed", "demo-onboarding -1") or cutting a short message (issue 18, item 3)."""
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    assert "evaluationCrashed:" in _row(page, 8).locator("td.status .err").inner_text()
    assert broken_words(page, "#items-body td.status, #items-body td.item .thread") == []
    partial = _row(page, 7).locator("td.status .err")
    assert "2 of 4 evaluators failed to run." in partial.inner_text()
    assert overflowing(page, "#items-body tr:nth-child(8) td.status .err") == []  # row #7, shown whole
    threads = page.locator("#items-body td.item .thread")
    assert threads.count() == 3 and set(threads.all_inner_texts()) == {"demo-onboarding-1"}
    assert watched.problems() == []


def test_chart_axes_count_rows_in_whole_numbers(open_page, demo_run):
    """The row-count axes of the status chart and the score histograms tick 0, 1, 2, never 0.2 (issue 18, item 8)."""
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    counted = 0
    for figure in page.locator("div.evalkit-figure").all():
        if figure.locator(".ytitle").all_text_contents() != ["rows"]:
            continue
        ticks = [t.replace(",", "") for t in figure.locator("g.ytick text").all_text_contents()]
        assert ticks and all(t.isdigit() for t in ticks), ticks
        counted += 1
    assert counted == 1 + 8  # the row status and one histogram per evaluator
    assert watched.problems() == []


RED, GREEN = "rgb(207, 34, 46)", "rgb(26, 127, 55)"  # STATUS_COLORS["fail"], ["pass"]


def _figure(page, title: str):
    return page.locator("div.evalkit-figure").filter(has=page.locator(".gtitle", has_text=title)).first


def _bars(figure) -> list[dict]:
    """The drawn bars of a figure (zero-height ones left out): fill colour and box."""
    return figure.evaluate(
        """f => Array.from(f.querySelectorAll('g.point path')).map(p => {
             const b = p.getBBox();
             return {fill: getComputedStyle(p).fill, width: b.width, height: b.height, x: b.x};
           }).filter(b => b.height > 0.5)"""
    )


def test_score_bars_are_red_where_rows_failed_and_one_value_is_one_normal_bar(open_page, demo_run):
    """Histograms are coloured as the statuses: keyword_coverage's one row (score 0.75 under its threshold 0.8)
    failed, so its bar is red, and it is one bar of a judge's width, not the whole plot; ExactMatch's false bar
    is red, its true bar green (issue 31, item 9)."""
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    single = _figure(page, "Scores of keyword_coverage")
    (bar,) = _bars(single)
    plot = single.locator("rect.nsewdrag").bounding_box()
    assert bar["fill"] == RED
    assert 0.1 * plot["width"] <= bar["width"] <= 0.25 * plot["width"], (bar, plot)
    exact = sorted(_bars(_figure(page, "Scores of ExactMatch")), key=lambda b: b["x"])
    assert [b["fill"] for b in exact] == [RED, GREEN]
    legend = single.locator("g.legend text.legendtext").all_text_contents()
    assert legend == ["pass", "fail"]
    single.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("div.charts").first.screenshot(path=SCREENSHOTS / "report-charts.png")
    assert watched.problems() == []


def test_labels_above_bars_keep_one_size_at_100_percent(open_page, demo_run):
    """The pass-rate labels of 100% are as large as the others, at least 10 px, and drawn whole (plotly shrank
    the ones with no room above the axis to a tiny font)."""
    watched = open_page(demo_run / "report.html", WIDTH, HEIGHT)
    page = watched.page
    texts = _figure(page, "Pass rate per evaluator").evaluate(
        """f => Array.from(f.querySelectorAll('text.bartext')).map(t => ({
             text: t.textContent, height: t.getBoundingClientRect().height}))"""
    )
    assert any(t["text"] == "100.0%" for t in texts) and len(texts) == 8
    heights = {round(t["height"]) for t in texts}
    assert len(heights) == 1 and min(heights) >= 10, texts
    assert watched.problems() == []
