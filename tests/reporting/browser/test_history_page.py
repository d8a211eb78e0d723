"""``--history DIR``: the report page shows the trend of pass rates across the runs under DIR (Chromium)."""

from __future__ import annotations

from runs import evalkit_run


def test_run_with_history_draws_the_trend_of_this_document_only(open_page, tmp_path):
    """Runs of another document under DIR are left out, and the chart says so; the legend is below the plot,
    whole, without a scrollbar of its own (issue 18, item 6)."""
    runs = tmp_path / "runs"
    evalkit_run("data/demo.json", runs / "monday")
    evalkit_run("data/agent_demo.json", runs / "tuesday", "--agent", "data/demo_agent/agent.py:answer")
    out = evalkit_run("data/demo.json", runs / "wednesday", "--history", str(runs))
    watched = open_page(out / "report.html")
    page = watched.page
    trend = page.locator("div.evalkit-figure").first
    assert trend.locator(".gtitle").text_content() == "Pass rates across 2 runs"
    note = trend.locator(".gtitle-subtitle").text_content()
    assert (
        "of Contoso HR assistant: recorded answers" in note and "1 run of another document left out" in note
    )
    assert trend.locator("svg.main-svg").count() >= 1
    # one line per evaluator the demo's runs scored, plus the row status; a point per run on each
    assert trend.locator("g.scatterlayer g.trace").count() == 1 + 8
    assert trend.locator("g.scatterlayer g.trace").first.locator("path.point").count() == 2
    ticks = trend.locator("g.xtick text").all_text_contents()
    assert ticks == ["monday", "wednesday"]
    card = trend.bounding_box()
    legend = trend.locator("g.legend").bounding_box()
    plot = trend.locator("g.cartesianlayer").bounding_box()
    assert legend["y"] >= plot["y"] + plot["height"] - 1  # below the plot, not beside it
    assert legend["y"] + legend["height"] <= card["y"] + card["height"]  # whole, inside the card
    scrollbars = trend.locator("g.legend rect.scrollbar").all()  # plotly draws one when the legend overflows
    assert all((bar.bounding_box() or {"height": 0})["height"] == 0 for bar in scrollbars)
    assert trend.locator("g.legend g.traces").count() == 1 + 8
    assert watched.problems() == []
