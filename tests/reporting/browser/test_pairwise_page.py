"""The pairwise section of the comparison page (``evalkit compare A B --pairwise --out``), in headless Chromium:
win / tie / loss with the interval, the rows that decided it, agent text shown as text."""

from __future__ import annotations

import json
import os
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
    assert cells[5] == "67%" and cells[6] == "[9%, 99%]"
    assert "no significant difference" in section.locator(".pairwise-verdict").inner_text()
    assert "Clopper-Pearson" in page.locator("#pairwise-method").inner_text()
    won = page.locator("h4#pairwise-wins + table tbody tr")
    assert won.count() == 2
    assert page.locator("h4#pairwise-losses + table tbody tr").first.inner_text().startswith("item 0")
    # the agent's markup is text on the page, never an element
    assert "<img src=x onerror=alert(1)>" in won.filter(has_text="item 1").first.inner_text()
    assert page.locator("#pairwise img").count() == 0
    section.scroll_into_view_if_needed()
    section.screenshot(path=SCREENSHOTS / "comparison-pairwise.png")
    assert watched.problems() == []
