"""report.html shows its first rows before the browser has read the whole item data (issue 20).

A page cut just before the whole data (what the parser has read of a large page while it still reads the rest)
must already show the first page of rows, with the run's full row count, as text.
"""

from __future__ import annotations

from evalkit.reporting.html_page import write_html

WIDTH, HEIGHT = 1280, 800
DATA_TAG = '<script type="application/json" id="evalkit-data">'


def _cut_before_the_data(path, tmp_path):
    text = path.read_text(encoding="utf-8")
    assert text.count(DATA_TAG) == 1
    cut = tmp_path / "cut.html"
    cut.write_text(text.split(DATA_TAG, 1)[0], encoding="utf-8")
    return cut


def test_first_rows_show_before_the_whole_data_is_read(open_page, tmp_path):
    from tests.reporting.test_reports import big_table

    path = tmp_path / "report.html"
    write_html(big_table(3000), path)
    watched = open_page(_cut_before_the_data(path, tmp_path), WIDTH, HEIGHT)
    page = watched.page
    rows = page.locator("#items-body tr")
    assert rows.count() == 50
    assert page.locator("#items-body td.item a").first.inner_text() == "#0"
    assert rows.nth(49).locator("td.prompt").inner_text() == "question 49"
    assert page.locator("#f-count").inner_text() == "1\u201350 of 3000 rows"
    assert page.locator("#p-label").inner_text() == "page 1 of 60"
    assert page.locator("html").get_attribute("data-table-ms") is not None
    assert page.locator("html").get_attribute("data-rows-ms") is None  # the whole data is not there
    assert watched.problems() == []


def test_hostile_first_rows_are_text_before_the_whole_data(open_page, tmp_path):
    from tests.reporting.test_reports import XSS_IMG, XSS_SCRIPT, scored_table

    path = tmp_path / "report.html"
    write_html(scored_table(), path)
    watched = open_page(_cut_before_the_data(path, tmp_path), WIDTH, HEIGHT)
    page = watched.page
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    first = page.locator("#items-body tr").first
    assert first.locator("td.prompt").inner_text() == XSS_SCRIPT
    assert first.locator("td.response").inner_text() == XSS_IMG
    assert page.locator("#items-body img").count() == 0
    assert dialogs == [] and watched.problems() == []


def test_a_filter_chosen_early_applies_to_every_row(open_page, tmp_path):
    """The whole page: the table works on every row once loaded (the first block is only the first page)."""
    from tests.reporting.test_reports import big_table

    path = tmp_path / "report.html"
    write_html(big_table(3000), path)
    watched = open_page(path, WIDTH, HEIGHT)
    page = watched.page
    root = page.locator("html")
    assert int(root.get_attribute("data-table-ms")) <= int(root.get_attribute("data-rows-ms"))
    page.click("#p-last")
    assert page.locator("#p-label").inner_text() == "page 60 of 60"
    assert page.locator("#items-body td.item a").last.inner_text() == "#2999"
    page.select_option("#f-status", "error")
    assert page.locator("#f-count").inner_text().endswith("of 429 matching rows (3000 in total)")
    assert watched.problems() == []
