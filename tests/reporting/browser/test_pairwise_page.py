"""The pairwise section of the comparison page (``evalkit compare A B --pairwise --out``), in headless Chromium:
win / tie / loss with the interval, the rows that decided it, agent text shown as text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import SCREENSHOTS
from runs import REPO, evalkit_run

from evalkit.testing import ModelServer

#: B's answers that differ from the demo's: item 0 worse, item 2 better, item 1 carrying markup.
CHANGED = {
    0: "I do not know.",
    1: "<img src=x onerror=alert(1)> Contoso matches the first 5% of your salary in the 401(k).",
    2: "Use form HR-12 to update your direct deposit.",
}


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pairwise")
    document = json.loads((REPO / "data" / "demo.json").read_text("utf-8"))
    for item, response in CHANGED.items():
        document["items"][item]["response"] = response
    changed = folder / "demo-changed.json"
    changed.write_text(json.dumps(document), "utf-8")
    a = evalkit_run("data/demo.json", folder / "a")
    b = evalkit_run(str(changed), folder / "b")
    out = folder / "compare.html"
    with ModelServer() as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_MODEL": "judge",
            "OPENAI_API_KEY": "k",
            "EVALKIT_CACHE_DIR": str(folder / "cache"),
        }
        done = subprocess.run(
            [sys.executable, "-m", "evalkit", "compare", str(a), str(b), "--pairwise", "--out", str(out)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
    assert done.returncode == 0, done.stderr
    return out


def test_pairwise_section_shows_counts_interval_deciding_rows_and_inert_agent_text(open_page, compared):
    watched = open_page(compared, 1280, 900)
    page = watched.page
    section = page.locator("#pairwise")
    assert section.is_visible()
    cells = section.locator("table.pairwise-counts tbody td").all_inner_texts()
    assert cells[:5] == ["2", "8", "0", "1", "1"], cells  # wins, ties, of which disagreed, losses, not judged
    assert cells[5] == "66.7%" and cells[6] == "[9.4%, 99.2%]"  # one decimal, as every rate
    assert "no significant difference" in section.locator(".pairwise-verdict").inner_text()
    assert "Clopper-Pearson" in page.locator("#pairwise-method").inner_text()
    won = page.locator("h4#pairwise-wins + table tbody tr")
    assert won.count() == 2
    assert page.locator("h4#pairwise-losses + table tbody tr").first.inner_text().startswith("#0")
    # the agent's markup is text on the page, never an element
    assert "<img src=x onerror=alert(1)>" in won.filter(has_text="#1").first.inner_text()
    assert page.locator("#pairwise img").count() == 0
    section.scroll_into_view_if_needed()
    section.screenshot(path=SCREENSHOTS / "comparison-pairwise.png")
    assert watched.problems() == []


def test_the_page_names_runs_once_items_one_way_and_says_who_was_response_a(open_page, compared):
    """The header names A and B once (the sections do not repeat it); pairwise rows are "#1" as in the
    regressed rows; the swapped-order column says B was shown as "Response A", and its reasons say what
    "Response A" means there (issue 31, item 9)."""
    watched = open_page(compared, 1280, 900)
    page = watched.page
    body = page.locator("body").inner_text()
    assert body.count("A = a \u00b7 B = b") == 1 and body.count("12 paired rows") == 1
    items = page.locator("#pairwise table.pairwise-rows tbody tr td:first-child").all_inner_texts()
    regressed = page.locator("h3#regressed + table.changes tbody td:first-child a").all_inner_texts()
    assert items and regressed
    assert all(re.fullmatch(r"#\d+( \u00b7 turn \d+)?", name) for name in items + regressed), (
        items + regressed
    )
    heads = page.locator("h4#pairwise-wins + table thead th").all_inner_texts()
    assert heads[-2:] == ['A shown first (as "Response A")', 'B shown first (as "Response A")']
    swapped = page.locator("h4#pairwise-wins + table tbody tr").first.locator("td").last
    text = swapped.inner_text()
    assert text.startswith("B better") and 'in this reason "Response A" is B, "Response B" is A:' in text
    assert "Response A" in text.split("is A:")[1]  # the judge's own words, read with the note above them
    page.locator("#pairwise").scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "comparison-pairwise-names.png", full_page=True)
    assert watched.problems() == []
