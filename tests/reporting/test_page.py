"""evalkit.reporting.page: the one report page's pieces that do not need a browser (the page itself is tested
in Chromium, tests/reporting/browser/)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from evalkit.reporting import charts
from evalkit.reporting.page import COMPACT_ROWS, compact, figure_specs, rate_text


def test_compact_keeps_small_and_varied_columns_as_lists():
    assert compact(["a", "b"]) == ["a", "b"]
    varied = [f"text {i}" for i in range(COMPACT_ROWS)]
    assert compact(varied) is varied
    nested = [[1]] * COMPACT_ROWS
    assert compact(nested) is nested  # unhashable values stay as they are


def test_compact_at_its_limit_of_distinct_values():
    """A quarter of the rows distinct is compacted, one more is not, wherever the values repeat (the prefix
    check must not decide early)."""
    most = COMPACT_ROWS // 4
    at_limit = [f"v{i}" for i in range(most)] * 4
    packed = compact(at_limit)
    assert packed["k"] == "dict" and [packed["v"][i] for i in packed["i"]] == at_limit
    over = [f"v{i}" for i in range(most + 1)] + ["v0"] * (COMPACT_ROWS - most - 1)
    assert compact(over) is over
    late = ["v0"] * (COMPACT_ROWS - most - 1) + [f"v{i}" for i in range(most + 1)]
    assert compact(late) is late


def test_compact_encodes_repeated_values_by_type():
    values = (["pass", "fail", None, True, 1] * COMPACT_ROWS)[: COMPACT_ROWS * 2]
    packed = compact(values)
    assert packed["k"] == "dict" and packed["v"] == ["pass", "fail", None, True, 1]
    assert [packed["v"][i] for i in packed["i"]] == values  # True and 1 stay apart
    assert compact([None] * COMPACT_ROWS) == {"k": "const", "v": None, "n": COMPACT_ROWS}


def test_figures_carry_binned_counts_and_one_shared_template():
    n = 100_000
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"item": range(n), "check": rng.random(n), "check_result": ["pass"] * n})
    df.attrs["evalkit"] = {
        "scored": [{"name": "check", "key": "check", "score_field": "check", "has_threshold": True}]
    }
    specs, template = figure_specs([charts.score_distribution(df, "check"), charts.pass_rates(df)])
    first = json.loads(str(specs[0]))
    assert len(first["data"][0]["x"]) == charts.SCORE_BINS and sum(first["data"][0]["y"]) == n
    assert len(str(specs[0])) < 5_000  # not 100,000 scores (about 2 MB)
    assert "template" not in first["layout"] and json.loads(str(template))["layout"]
    assert first["layout"]["height"] == 300


def test_rate_text():
    assert rate_text(0.875) == "87.5%" and rate_text(float("nan")) == "\u2013" and rate_text(None) == "\u2013"


def test_trace_entries_are_offsets_durations_and_depths():
    from evalkit.reporting.page_details import trace

    spans = [
        {"spanId": "c", "parentSpanId": "b", "name": "child", "startTimeUnixNano": 3_000_000,
         "endTimeUnixNano": 4_500_000, "status": {"code": "ERROR"}, "attributes": {"k": "v" * 5000}},
        {"spanId": "a", "name": "root", "startTimeUnixNano": 1_000_000, "endTimeUnixNano": 9_000_000},
        {"spanId": "b", "parentSpanId": "a", "name": "tool", "startTimeUnixNano": 2_000_000,
         "endTimeUnixNano": 5_000_000, "status": {"code": "OK"}},
    ]  # fmt: skip
    entries = trace(spans)
    assert [(e["n"], e["s"], e["d"], e["l"], e["st"]) for e in entries] == [
        ("root", 0.0, 8.0, 0, "UNSET"),
        ("tool", 1.0, 3.0, 1, "OK"),
        ("child", 2.0, 1.5, 2, "ERROR"),
    ]
    assert len(entries[2]["a"]["k"]) == 1001  # attribute values cut (and marked) like every text
    assert trace([]) is None and trace(None) is None


def test_detail_columns_only_when_something_is_there():
    from evalkit.reporting.page_details import detail_columns

    df = pd.DataFrame(
        {
            "item": [0, 1],
            "context": ["", ""],
            "citations": [[{"index": 1, "text": "t", "source": "s"}], None],
            "source": [{"tags": ["hr", "leave"]}, {}],
            "thread_source": [None, {"tags": ["thread"]}],
        }
    )
    columns = dict(detail_columns(df))
    assert set(columns) == {"tags", "citations"}  # empty contexts cost nothing
    assert columns["tags"] == [["hr", "leave"], ["thread"]]
    assert columns["citations"] == [[{"index": 1, "text": "t", "source": "s"}], None]


def test_plotly_js_goes_in_as_the_bytes_plotly_ships_once(tmp_path):
    """plotly.js is handed to the writer as bytes (never template text): the same text as plotly's own
    get_plotlyjs (``</script`` made safe), read and hashed once per process, once in the page, where the
    template has its mark; write_page and render_page give the same page."""
    from plotly.offline import get_plotlyjs

    from evalkit.reporting import inline
    from evalkit.reporting.page import PLOTLY_MARK, render_page, write_page
    from tests.reporting.test_reports import scored_table

    expected = get_plotlyjs().replace("</script", "<\\/script").encode("utf-8")
    assert inline.plotly_js_bytes() == expected and inline.plotly_js() == expected.decode("utf-8")
    assert inline.plotly_js_bytes() is inline.plotly_js_bytes()
    assert inline.plotly_js_hash() == inline.csp_hash(inline.plotly_js())
    path = tmp_path / "report.html"
    write_page(scored_table(), path)
    raw = path.read_bytes()
    assert raw.count(expected) == 1 and PLOTLY_MARK.encode() not in raw
    assert raw.index(expected) > raw.index(b'id="evalkit-data"')  # after the item data, as before
    assert render_page(scored_table()) == raw.decode("utf-8")
