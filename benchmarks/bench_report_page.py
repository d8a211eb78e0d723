"""Report page benchmark: write report.html for a 100,000-item run and load it in headless Chromium.

Prints numbers; asserts nothing (targets live in the issue, not in timed unit tests). Needs the `chromium`
package (scripts/browser.sh) and playwright (the dev extra).

    .venv/bin/python benchmarks/bench_report_page.py             # 100,000 rows
    .venv/bin/python benchmarks/bench_report_page.py --rows 1000000 --repeats 1
    .venv/bin/python benchmarks/bench_report_page.py --rows 20000 --keep /tmp/page
    .venv/bin/python benchmarks/bench_report_page.py --page /tmp/page/report.html   # load an existing page only

Measures, in one run: the Python write time of report.html (``write_html`` on the scored table, in this
process) next to serialising the page's item data alone with orjson (the floor it is compared with), the page's
size, and in Chromium at 1280x800 the time from navigation start to the first page of rows in the table, to a
frame drawn with them, to every row read (filters, search and sort work from then on), to every chart drawn
(the page records these), then how long an evaluator filter, a search, a sort and opening an item take until
the table (or item view) shows it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import make_rows, write_inputs  # noqa: E402

#: What the page records on <html> (ms since navigation start), in the order it happens. A page written before
#: its first rows were embedded apart (issue 20) draws its table only once every row is read, and records
#: neither of the two middle ones (``--page`` loads such a page too, for a before/after comparison).
PAGE_CLOCK = {
    "table-ms": "first page of rows in the table",
    "table-paint-ms": "a frame drawn with the first rows",
    "rows-ms": "every row read (filter, search, sort work)",
    "charts-ms": "every chart drawn",
}


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
    page.goto(report.resolve().as_uri(), timeout=600_000)
    page.locator("html[data-ready=true]").wait_for(state="attached", timeout=600_000)
    out = {"load: goto to everything drawn (driver's clock)": (time.perf_counter() - started) * 1000}
    root = page.locator("html")
    page.wait_for_function(
        "document.documentElement.dataset.tablePaintMs || !document.getElementById('evalkit-first')"
    )
    for key, label in PAGE_CLOCK.items():
        value = root.get_attribute(f"data-{key}")
        if value is not None:
            out[f"load: navigation start to {label} (page's clock)"] = float(value)
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
        lambda: expect(rows).to_have_count(1, timeout=120_000),
    )
    page.fill("#f-query", "")
    expect(rows).to_have_count(50, timeout=120_000)
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


def write_page(folder: Path, rows: int) -> Path:
    """Score ``rows`` bench items in this process and write their report.html, printing the write times."""
    os.environ.setdefault("EVALKIT_MAX_DOCUMENT_BYTES", "4GB")  # a million bench rows are ~280 MB of JSON
    import evalkit
    from evalkit.reporting.html_page import write_html

    doc, _ = write_inputs(folder, make_rows(rows))
    started = time.perf_counter()
    df = evalkit.evaluate(evalkit.load(doc), progress=False)
    print(f"load + evaluate in this process: {time.perf_counter() - started:.1f} s")
    report = folder / "report.html"
    started = time.perf_counter()
    write_html(df, report)
    print(f"Python write time of report.html (write_html): {time.perf_counter() - started:.2f} s")
    floor = _orjson_floor(df)
    if floor is not None:
        print(f"  serialising the same item data alone with orjson (lists already built): {floor:.2f} s")
    return report


def _orjson_floor(df) -> float | None:
    """Seconds orjson takes to serialise the page's item columns, built beforehand (None without orjson)."""
    try:
        import orjson

        from evalkit.analysis.summaries import scored_evaluators
        from evalkit.reporting.page_data import TEXT_LIMIT, page_columns
    except ImportError:
        return None
    columns = dict(page_columns(df, scored_evaluators(df), TEXT_LIMIT))
    started = time.perf_counter()
    orjson.dumps(columns)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3, help="page loads; the best is printed")
    parser.add_argument("--keep", type=Path, help="write the run here (default: a temporary folder)")
    parser.add_argument("--page", type=Path, help="load this report.html instead of writing one")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="evalkit-page-"))
    folder.mkdir(parents=True, exist_ok=True)
    if args.page:
        report = args.page
    else:
        print(f"rows: {args.rows:,}")
        report = write_page(folder, args.rows)
    print(f"report.html: {report.stat().st_size / 1e6:.1f} MB")
    for name, value in measure(report, args.repeats).items():
        print(f"{name}: {value:.0f} ms")
    if not args.keep:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
