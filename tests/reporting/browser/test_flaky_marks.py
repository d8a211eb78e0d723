"""report.html of a run with ``--samples K`` in headless Chromium: flaky items are marked, filterable, findable.

The run is the real CLI (``evalkit run --samples 3``) judging through azure-ai-evaluation's Relevance prompt and
evalkit's shipped ``professional_tone`` ``.prompty`` (promptflow) against the local ``ModelServer``, whose
answers flip between pass and fail on some items, with HTML and script in the judge's reasons, the prompts and
the responses: the page must show them as text, run none of it and fetch nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading

import pytest
from conftest import SCREENSHOTS
from geometry import overflowing
from runs import REPO

from evalkit.testing import ModelServer

pytestmark = pytest.mark.slow  # an LLM-judged CLI run (3 samples) plus a browser

HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
#: Readable items first (the README's screenshots show them), the hostile one last: its prompt, response and
#: reasons carry HTML and script, which the page must show as text.
ITEMS = [{"prompt": f"Steady question {n}?", "response": f"A steady answer {n}."} for n in range(6)] + [
    {"prompt": "Is the refund window 30 days for flaky orders?", "response": "Yes, 30 days from delivery."},
    {"prompt": f"Another flaky question {HOSTILE}?", "response": f"Another flaky answer {HOSTILE}."},
]
#: What a flaky judgment says, judgment after judgment (a hostile one for the hostile item).
REASONS = {
    5: "The answer states the 30-day window directly.",
    1: "The answer does not say which orders qualify.",
}
#: The scores a judge gives a flaky item, judgment after judgment, per item and judge.
FLAKY = [5, 1, 5]


class Judge:
    """Steady items always get 5; a flaky item's judgments follow ``FLAKY`` (2 of 3 pass), per judge."""

    def __init__(self):
        self.asked: dict[tuple[str, str], int] = {}
        self.lock = threading.Lock()

    def __call__(self, request) -> dict:
        text = json.dumps(request["body"]["messages"])
        if "flaky" not in text.lower():
            return {"score": 5, "reason": "steady"}
        which = (
            "tone" if "tone" in text.lower() else "relevance",
            "Another" if "Another" in text else "first",
        )
        with self.lock:
            n = self.asked.get(which, 0)
            self.asked[which] = n + 1
        score = FLAKY[n % len(FLAKY)]
        reason = f"judgment {n} {HOSTILE}" if which[1] == "Another" else REASONS[score]
        return {"score": score, "reason": reason}


@pytest.fixture(scope="module")
def sampled_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("flaky")
    (root / "custom-evaluators").mkdir()
    shutil.copytree(
        REPO / "custom-evaluators" / "professional_tone", root / "custom-evaluators" / "professional_tone"
    )
    doc = root / "doc.json"
    doc.write_text(
        json.dumps(
            {
                "schemaVersion": "1.11.0",
                "metadata": {"name": "Flaky judges"},
                "default_evaluators": {"Relevance": {}, "professional_tone": {}},
                "items": ITEMS,
            }
        )
    )
    with ModelServer(script=Judge()) as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_MODEL": "judge",
            "OPENAI_API_KEY": "k",
            "EVALKIT_CACHE_DIR": str(root / "cache"),
        }
        done = subprocess.run(
            [sys.executable, "-m", "evalkit", "run", str(doc), "--out", str(root / "run"), "--samples", "3",
             "--fail-under", "1"],
            cwd=root, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # the flaky items fail the gate under the rule all
    flaky = "Flaky: 2 of 8 rows flipped between pass and fail over 3 samples (pass rule: all): Relevance 2, "
    assert flaky + "professional_tone 2\n" in done.stdout
    return root / "run"


def _outside_their_cell(page) -> list[str]:
    """The chips (and their flaky marks) that reach past the right edge of their table cell."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#items-body .chip, #items-body .chip-flaky')]
          .filter(c => c.getBoundingClientRect().right > c.closest('td').getBoundingClientRect().right + 0.5)
          .map(c => c.textContent)"""
    )


def _flaky_items(page) -> list[str]:
    rows = page.locator("#items-body tr").filter(has=page.locator(".chip.flaky"))
    return rows.locator("td.item a").all_inner_texts()


def test_flaky_items_are_marked_with_their_pass_share(open_page, sampled_run):
    watched = open_page(sampled_run / "report.html")
    page = watched.page
    page.wait_for_function("document.documentElement.dataset.rowsMs !== undefined")
    assert _flaky_items(page) == ["#6", "#7"]
    marks = page.locator("#items-body .chip.flaky .chip-flaky").all_inner_texts()
    assert marks == ["flaky 2/3 pass"] * 4  # both judges flipped on both items
    steady = page.locator("#items-body tr").first
    assert steady.locator(".chip").count() == 2 and steady.locator(".chip-flaky").count() == 0
    tip = page.locator("#items-body .chip.flaky").first.get_attribute("title")
    assert "flaky: 2 of 3 judgments passed (66.7%), scores 5, 1, 5; pass rule: all" in tip
    assert _outside_their_cell(page) == [] and overflowing(page, "#items-body .chip") == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    # the README's picture: the heading down to the readable flaky item #6 (the hostile #7 stays out of it)
    page.set_viewport_size({"width": 1280, "height": 2000})
    top = page.locator("#items-heading").bounding_box()
    last = page.locator("#items-body tr").nth(6).bounding_box()
    clip = {"x": 0, "y": top["y"] - 8, "width": 1280, "height": last["y"] + last["height"] - top["y"] + 16}
    page.screenshot(path=SCREENSHOTS / "report-flaky-items.png", clip=clip, full_page=True)
    # the hostile prompt, response and reasons are text, never markup; the title was not changed by them
    assert HOSTILE in page.locator("#items-body td.prompt").nth(7).inner_text()
    assert page.locator("#items-body img, #items-body script").count() == 0
    assert page.title() == "Flaky judges"  # the hostile texts changed nothing
    assert watched.problems() == []


def test_the_filter_and_the_search_find_flaky_items(open_page, sampled_run):
    watched = open_page(sampled_run / "report.html")
    page = watched.page
    page.wait_for_function("document.documentElement.dataset.rowsMs !== undefined")
    labels = page.locator("#f-eval option").all_inner_texts()
    assert "any evaluator: flaky" in labels and "professional_tone: flaky" in labels, labels
    page.select_option("#f-eval", "*:flaky")
    expect_items(page, ["#6", "#7"])
    assert page.locator("#f-count").inner_text() == "1\u20132 of 2 matching rows (8 in total)"
    page.select_option("#f-eval", "")
    expect_items(page, [f"#{n}" for n in range(8)])
    page.fill("#f-query", "flaky relevance")
    expect_items(page, ["#6", "#7"])
    assert watched.problems() == []


def expect_items(page, items: list[str]) -> None:
    page.wait_for_function(
        "n => document.querySelectorAll('#items-body td.item a').length === n", arg=len(items)
    )
    assert page.locator("#items-body td.item a").all_inner_texts() == items


def test_the_item_view_shows_every_judgment(open_page, sampled_run):
    watched = open_page(sampled_run / "report.html", fragment="#item-6")
    page = watched.page
    page.wait_for_function("document.documentElement.dataset.rowsMs !== undefined")
    view = page.locator("#item-view")
    view.wait_for(state="visible")
    lines = view.locator(".iv-samples").all_inner_texts()
    assert lines == ["flaky: 2 of 3 judgments passed (66.7%), scores 5, 1, 5; pass rule: all"] * 2, lines
    assert view.locator(".iv-samples.flaky").count() == 2
    # every judgment, in sample order, with its verdict, score and reason; the one that went the other way
    # from most judgments is highlighted as flipped
    for judge in range(2):
        listed = view.locator(".iv-judgments").nth(judge).locator(".iv-judgment")
        assert listed.count() == 3
        assert listed.locator(".iv-j-verdict").all_inner_texts() == ["pass", "fail", "pass"]
        assert listed.locator(".iv-j-score").all_inner_texts() == ["score 5", "score 1", "score 5"]
        assert [listed.nth(j).get_attribute("class") for j in range(3)] == [
            "iv-judgment", "iv-judgment flipped", "iv-judgment",
        ]  # fmt: skip
        assert listed.nth(1).locator(".iv-j-reason").inner_text() == REASONS[1]
    view.scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / "report-flaky-item-view.png")
    page.goto(page.url.split("#")[0] + "#item-7")
    page.wait_for_function("document.querySelectorAll('#item-view .iv-judgment').length === 6")
    assert HOSTILE in view.locator(".iv-evals").inner_text()  # the hostile reasons, as text
    assert view.locator("img, script").count() == 0
    page.goto(page.url.split("#")[0] + "#item-0")
    view.locator(".iv-samples").first.wait_for()
    assert (
        view.locator(".iv-samples").all_inner_texts()
        == ["3 of 3 judgments passed (100.0%), scores 5, 5, 5; pass rule: all"] * 2
    )
    assert watched.problems() == []
