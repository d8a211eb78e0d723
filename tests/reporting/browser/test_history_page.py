"""``--history DIR``: the report page shows the trend of pass rates across the runs under DIR (Chromium)."""

from __future__ import annotations

from runs import evalkit_run


def test_run_with_history_draws_the_pass_rate_trend(open_page, tmp_path):
    runs = tmp_path / "runs"
    evalkit_run("data/demo.json", runs / "monday")
    evalkit_run("data/agent_demo.json", runs / "tuesday", "--agent", "data/demo_agent/agent.py:answer")
    out = evalkit_run("data/demo.json", runs / "wednesday", "--history", str(runs))
    watched = open_page(out / "report.html")
    page = watched.page
    trend = page.locator("div.evalkit-figure").first
    assert "Pass rates across 3 runs" in trend.locator(".gtitle").text_content()
    assert trend.locator("svg.main-svg").count() >= 1
    # one line per evaluator any run scored, plus the row status; three points on the row-status line
    assert trend.locator("g.scatterlayer g.trace").count() == 1 + 8
    assert trend.locator("g.scatterlayer g.trace").first.locator("path.point").count() == 3
    ticks = trend.locator("g.xtick text").all_text_contents()
    assert ticks == ["monday", "tuesday", "wednesday"]
    assert watched.problems() == []
