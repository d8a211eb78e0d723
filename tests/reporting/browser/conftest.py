"""Headless Chromium for the page tests: Debian's ``chromium`` driven by playwright, offline and watched.

One browser per session (``executable_path`` is the ``chromium`` on the PATH: playwright cannot download its
own browser here; ``scripts/browser.sh`` installs the package when it is missing). :func:`open_page` opens a
file in a fresh context at a given viewport, aborts and records every request that is not ``file:`` or
``data:``, and records console errors and uncaught exceptions; a test asserts on ``page.problems()`` that
nothing of the kind happened.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: Where the tests' screenshots go: docs/screenshots (the README shows them) when EVALKIT_SCREENSHOTS is set,
#: else a scratch folder, so an ordinary test run leaves the repository's PNGs alone.
REPO_SCREENSHOTS = Path(__file__).resolve().parents[3] / "docs" / "screenshots"
SCREENSHOTS = (
    REPO_SCREENSHOTS
    if os.environ.get("EVALKIT_SCREENSHOTS")
    else Path(tempfile.gettempdir()) / f"evalkit-screenshots-{os.getpid()}"
)


@pytest.fixture(scope="session")
def browser():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail(
            "chromium is not on the PATH: run 'bash scripts/browser.sh' (apt-get install -y chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: CI and the developer machines run the tests as root, where Chromium's sandbox refuses
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser
        browser.close()


class Watched:
    """A playwright page plus what it tried to fetch from the network and the errors it logged."""

    def __init__(self, context, page):
        self.context = context
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []

    def problems(self) -> list[str]:
        """Network requests (blocked) and console errors / uncaught exceptions, as readable lines."""
        return [f"request: {u}" for u in self.requests] + [f"console: {e}" for e in self.errors]


@pytest.fixture
def open_page(browser):
    opened: list[Watched] = []

    def open_(path: str | Path, width: int = 1280, height: int = 800, fragment: str = "") -> Watched:
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        watched = Watched(context, page)

        def route(route):
            url = route.request.url
            if url.startswith(("file:", "data:", "blob:")):
                route.continue_()
            else:
                watched.requests.append(url)
                route.abort()

        context.route("**/*", route)
        page.on("console", lambda m: m.type == "error" and watched.errors.append(m.text))
        page.on("pageerror", lambda e: watched.errors.append(f"uncaught: {e}"))
        page.goto(Path(path).resolve().as_uri() + fragment)
        page.wait_for_load_state("load")
        opened.append(watched)
        return watched

    yield open_
    for watched in opened:
        watched.context.close()
