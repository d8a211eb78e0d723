"""Report page benchmark: write report.html for a 100,000-item run and load it in headless Chromium.

Prints numbers; asserts nothing (targets live in the issue, not in timed unit tests). Needs the `chromium`
package (scripts/browser.sh) and playwright (the dev extra).

    .venv/bin/python benchmarks/bench_report_page.py             # 100,000 rows
    .venv/bin/python benchmarks/bench_report_page.py --rows 20000 --keep /tmp/page

Measures: `evalkit run` wall time (which writes the page), the page's size, and in Chromium at 1280x800 the
time from navigation start to the first page of rows and to every chart drawn (the page records both), then how
long an evaluator filter, a search, a sort and opening an item take until the table (or item view) shows it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import PYTHON, make_rows, run_measured, write_inputs  # noqa: E402


def _timed(page, action, done) -> float:
    started = time.perf_counter()
    action()
    done()
    return (time.perf_counter() - started) * 1000


def one_load(browser, report: Path) -> dict[str, float]:
    """Open the page once in a fresh context and time the load and a few interactions, in ms."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    requests: list[str] = []

    def route(r) -> None:
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            requests.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    started = time.perf_counter()
    page.goto(report.resolve().as_uri())
    page.locator("html[data-ready=true]").wait_for(state="attached", timeout=120_000)
    out = {"load: goto to everything drawn (driver's clock)": (time.perf_counter() - started) * 1000}
    root = page.locator("html")
    out["load: navigation start to the first page of rows (page's clock)"] = float(
        root.get_attribute("data-table-ms")
    )
    out["load: navigation start to every chart drawn (page's clock)"] = float(
        root.get_attribute("data-charts-ms")
    )
    rows = page.locator("#items-body tr")
    out["filter evaluator outcome (ExactMatch: fail)"] = _timed(
        page,
        lambda: page.select_option("#f-eval", "0:fail"),
        lambda: expect(page.locator("#f-count")).to_contain_text("matching rows"),
    )
    page.select_option("#f-eval", "")
    out["search (the first one builds the index)"] = _timed(
        page,
        lambda: page.fill("#f-query", "question 4242:"),
        lambda: expect(rows).to_have_count(1, timeout=60_000),
    )
    page.fill("#f-query", "")
    expect(rows).to_have_count(50, timeout=60_000)
    out["sort by a score"] = _timed(
        page,
        lambda: page.select_option("#f-sort", index=2),
        lambda: expect(page.locator("#f-sort")).to_have_value("0:desc"),
    )
    out["open an item (click a row)"] = _timed(
        page,
        lambda: page.locator("#items-body td.prompt").first.click(),
        lambda: expect(page.locator("#item-view")).to_be_visible(),
    )
    context.close()
    if requests:
        raise SystemExit(f"the page tried the network: {requests[:3]}")
    return out


def measure(report: Path, repeats: int) -> dict[str, float]:
    """The best of ``repeats`` loads, per measurement (ms)."""
    from playwright.sync_api import sync_playwright

    results: dict[str, list[float]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        for _ in range(repeats):
            for name, value in one_load(browser, report).items():
                results.setdefault(name, []).append(value)
        browser.close()
    return {name: min(values) for name, values in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3, help="page loads; the best is printed")
    parser.add_argument("--keep", type=Path, help="write the run here (default: a temporary folder)")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="evalkit-page-"))
    folder.mkdir(parents=True, exist_ok=True)
    doc, _ = write_inputs(folder, make_rows(args.rows))
    wall, rss, _ = run_measured([PYTHON, "-m", "evalkit", "run", str(doc), "--out", str(folder / "run")])
    report = folder / "run" / "report.html"
    print(f"rows: {args.rows:,}")
    print(
        f"evalkit run (scores and writes results.json/csv and report.html): {wall:.1f} s, peak RSS {rss:.0f} MB"
    )
    print(f"report.html: {report.stat().st_size / 1e6:.1f} MB")
    for name, value in measure(report, args.repeats).items():
        print(f"{name}: {value:.0f} ms")
    if not args.keep:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
