"""Tests of evalkit.summary and the CSV / HTML reports, on small scored case tables built by hand.

The table mimics what the engine produces: a custom evaluator (``forbidden_terms``), ExactMatch's boolean
scores, Citations' counts, an errored evaluator entry, rows that did not ask for an evaluator, a thread of two
turns, and hostile agent output (``</script>``, ``<img onerror>``, U+2028, ``]]>``) in every free-text place.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis.summaries import STATUS_ROW, SUMMARY_COLUMNS, status_counts, summary
from evalkit.reporting import html_page as html_report
from evalkit.reporting import inline, page
from evalkit.reporting.csv_file import write_csv
from evalkit.reporting.html_page import write_html
from evalkit.reporting.page import write_page
from evalkit.reporting.page_data import ELLIPSIS

XSS_SCRIPT = "</script><script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"
ODD = "quotes \" ' ]]> <!-- & \u2028 line sep \u2029 para sep \\ backslash é 😀"
TITLE = "Demo " + XSS_SCRIPT + XSS_IMG

SCORED = [
    {"name": "ExactMatch", "key": "exactMatch", "score_field": "match", "has_threshold": False},
    {"name": "Citations", "key": "citations", "score_field": "count", "has_threshold": False},
    {
        "name": "forbidden_terms",
        "key": "forbidden_terms",
        "score_field": "forbidden_terms",
        "has_threshold": True,
    },
]


def scored_table() -> pd.DataFrame:
    """Four rows: item 0 and 1 single-turn, item 2 a thread "t1" of two turns."""
    none4 = [None] * 4
    df = pd.DataFrame(
        {
            "item": [0, 1, 2, 2],
            "turn": pd.array([pd.NA, pd.NA, 0, 1], dtype="Int64"),
            "thread": [pd.NA, pd.NA, "t1", "t1"],
            "prompt": [XSS_SCRIPT, "What is 2+2?", "Say hello", ODD],
            "expected_response": ["Paris", "4", "Hello", ""],
            "context": ["", "", "", ""],
            "response": [XSS_IMG, None, "Hello damn", "Fine"],
            "status": ["pass", "error", "fail", "partial"],
            "error_code": [None, "AGENT_ERROR", None, None],
            "error_message": [None, XSS_IMG, None, None],
            # ExactMatch: asked everywhere; row 1 errored.
            "exactMatch": pd.Series([True, np.nan, False, True], dtype=object),
            "exactMatch_result": ["pass", "error", "fail", "pass"],
            "exactMatch_threshold": [np.nan] * 4,
            "exactMatch_reason": [None, None, "differs", None],
            "exactMatch_error": [None, XSS_SCRIPT, None, None],
            "exactMatch_code": [None, "EVALUATOR_ERROR", None, None],
            "exactMatch_details": [None, None, {"matched": []}, None],
            # Citations: asked by rows 0 and 2 only.
            "citations_score": [2.0, np.nan, 0.0, np.nan],
            "citations_result": ["pass", None, "fail", None],
            "citations_threshold": [np.nan] * 4,
            "citations_reason": [None, None, "no citations", None],
            "citations_error": none4,
            "citations_code": none4,
            "citations_details": [{"citations": ["a", "b"]}, None, {"citations": []}, None],
            # Custom evaluator: row 1 did not ask, row 3 errored.
            "forbidden_terms": [1.0, np.nan, 0.0, np.nan],
            "forbidden_terms_result": ["pass", None, "fail", "error"],
            "forbidden_terms_threshold": [0.5, np.nan, 0.5, 0.5],
            "forbidden_terms_reason": [XSS_SCRIPT, None, "found 'damn'", None],
            "forbidden_terms_error": [None, None, None, XSS_IMG],
            "forbidden_terms_code": [None, None, None, "EVALUATOR_ERROR"],
            "forbidden_terms_details": none4,
        }
    )
    df.attrs["evalkit"] = {
        "scored": [dict(entry) for entry in SCORED],
        "document": {"schemaVersion": "1.0", "metadata": {"name": TITLE}},
        "source": "/data/demo-eval.json",
    }
    return df


def big_table(n: int) -> pd.DataFrame:
    """``n`` single-turn rows with one evaluator; every 7th row errors, every 3rd other row fails."""
    status = np.where(np.arange(n) % 7 == 0, "error", np.where(np.arange(n) % 3 == 0, "fail", "pass"))
    df = pd.DataFrame(
        {
            "item": np.arange(n),
            "turn": pd.array([pd.NA] * n, dtype="Int64"),
            "thread": [pd.NA] * n,
            "prompt": [f"question {i}" for i in range(n)],
            "expected_response": [f"answer {i}" for i in range(n)],
            "context": [""] * n,
            "response": [f"reply {i}" for i in range(n)],
            "status": status,
            "error_code": None,
            "error_message": None,
            "exactMatch": pd.Series(np.where(status == "error", np.nan, status == "pass"), dtype=object),
            "exactMatch_result": status,
            "exactMatch_threshold": np.nan,
            "exactMatch_reason": None,
            "exactMatch_error": np.where(status == "error", "boom", None),
        }
    )
    df["exactMatch"] = [None if s == "error" else s == "pass" for s in status]
    df.attrs["evalkit"] = {"scored": [dict(SCORED[0])], "document": {}, "source": "big.json"}
    return df


def embedded_data(raw: bytes) -> dict:
    """The JSON between the evalkit-data script tags, parsed."""
    text = raw.decode("utf-8")
    start_tag = '<script type="application/json" id="evalkit-data">'
    assert text.count(start_tag) == 1
    body = text.split(start_tag, 1)[1].split("</script>", 1)[0]
    return json.loads(body)


# --------------------------------------------------------------------------------------------- summary


def test_summary_numbers_by_hand():
    table = summary(scored_table())
    assert list(table.index) == ["ExactMatch", "Citations", "forbidden_terms", STATUS_ROW]
    assert list(table.columns) == list(SUMMARY_COLUMNS)
    counts = table[["asked", "passed", "failed", "errored", "partial"]].to_dict("index")
    # partial: the rows asked whose row status is partial (row 3, where forbidden_terms failed to run)
    assert counts["ExactMatch"] == {"asked": 4, "passed": 2, "failed": 1, "errored": 1, "partial": 1}
    assert counts["Citations"] == {"asked": 2, "passed": 1, "failed": 1, "errored": 0, "partial": 0}
    assert counts["forbidden_terms"] == {"asked": 3, "passed": 1, "failed": 1, "errored": 1, "partial": 1}
    assert counts[STATUS_ROW] == {"asked": 4, "passed": 1, "failed": 1, "errored": 1, "partial": 1}
    # errors are excluded from an evaluator's rate; the status row divides by all rows
    assert table.loc["ExactMatch", "pass_rate"] == pytest.approx(2 / 3)
    assert table.loc["Citations", "pass_rate"] == pytest.approx(0.5)
    assert table.loc["forbidden_terms", "pass_rate"] == pytest.approx(0.5)
    assert table.loc[STATUS_ROW, "pass_rate"] == pytest.approx(0.25)
    # exactMatch True/NaN/False/True -> mean of 1, 0, 1; citations 2 and 0; forbidden_terms 1.0 and 0.0
    assert table.loc["ExactMatch", "mean_score"] == pytest.approx(2 / 3)
    assert table.loc["Citations", "mean_score"] == pytest.approx(1.0)
    assert table.loc["forbidden_terms", "mean_score"] == pytest.approx(0.5)
    assert math.isnan(table.loc[STATUS_ROW, "mean_score"])


def test_summary_rate_is_nan_when_only_errors():
    df = scored_table()
    df["citations_result"] = ["error", None, "error", None]
    df["citations_score"] = np.nan
    row = summary(df).loc["Citations"]
    assert (row["asked"], row["errored"]) == (2, 2)
    assert math.isnan(row["pass_rate"]) and math.isnan(row["mean_score"])


def test_status_counts():
    assert status_counts(scored_table()) == {"pass": 1, "fail": 1, "partial": 1, "error": 1, "total": 4}
    assert status_counts(pd.DataFrame({"prompt": ["a", "b"]})) == {
        "pass": 0,
        "fail": 0,
        "partial": 0,
        "error": 0,
        "total": 2,
    }


def test_summary_of_unscored_tables():
    only_status = summary(pd.DataFrame({"prompt": ["a", "b", "c"], "status": ["pass", "pass", "fail"]}))
    assert list(only_status.index) == [STATUS_ROW]
    assert only_status.loc[STATUS_ROW, ["asked", "passed", "failed"]].tolist() == [3, 2, 1]
    assert only_status.loc[STATUS_ROW, "pass_rate"] == pytest.approx(2 / 3)
    empty = summary(pd.DataFrame({"prompt": ["a"]}))
    assert empty.empty and list(empty.columns) == list(SUMMARY_COLUMNS)


def test_summary_recovers_evaluators_when_attrs_are_lost():
    df = scored_table()
    df.attrs = {}
    assert list(summary(df).index) == ["exactMatch", "citations", "forbidden_terms", STATUS_ROW]


# ------------------------------------------------------------------------------------------------- CSV


def test_csv_columns_and_values(tmp_path):
    path = tmp_path / "results.csv"
    write_csv(scored_table(), path)
    back = pd.read_csv(path, dtype=str, keep_default_na=False)
    base = ["item", "turn", "thread", "prompt", "expected_response", "context", "response", "status"]
    expected_columns = base + ["error_code", "error_message"]
    for key in ("exactMatch", "citations", "forbidden_terms"):
        expected_columns += [key, f"{key}_result", f"{key}_threshold", f"{key}_reason", f"{key}_error"]
    assert list(back.columns) == expected_columns
    assert back["item"].tolist() == ["0", "1", "2", "2"]
    assert back["turn"].tolist() == ["", "", "0", "1"]
    assert back["thread"].tolist() == ["", "", "t1", "t1"]
    assert back["prompt"].tolist() == [XSS_SCRIPT, "What is 2+2?", "Say hello", ODD]
    assert back["response"].tolist() == [XSS_IMG, "", "Hello damn", "Fine"]
    assert back["error_message"].tolist() == ["", XSS_IMG, "", ""]
    assert back["exactMatch"].tolist() == ["True", "", "False", "True"]
    assert back["exactMatch_error"].tolist() == ["", XSS_SCRIPT, "", ""]
    assert back["citations"].tolist() == ["2.0", "", "0.0", ""]
    assert back["citations_result"].tolist() == ["pass", "", "fail", ""]
    assert back["forbidden_terms"].tolist() == ["1.0", "", "0.0", ""]
    assert back["forbidden_terms_threshold"].tolist() == ["0.5", "", "0.5", "0.5"]
    assert back["forbidden_terms_reason"].tolist() == [XSS_SCRIPT, "", "found 'damn'", ""]
    # numbers read back as numbers with pandas' defaults
    numeric = pd.read_csv(path)
    assert numeric["forbidden_terms"].tolist()[:1] == [1.0] and numeric["item"].dtype.kind == "i"
    assert path.read_bytes().decode("utf-8")  # valid UTF-8


def test_csv_fills_absent_columns_and_unscored_table(tmp_path):
    path = tmp_path / "plain.csv"
    write_csv(pd.DataFrame({"item": [0], "prompt": ["p"], "status": ["pass"]}), path)
    back = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert list(back.columns) == [
        "item",
        "turn",
        "thread",
        "prompt",
        "expected_response",
        "context",
        "response",
        "status",
        "error_code",
        "error_message",
    ]
    assert back.loc[0, "prompt"] == "p" and back.loc[0, "response"] == ""


def test_csv_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "results.csv"
    write_csv(scored_table(), path)
    before = path.read_bytes()

    from evalkit.documents.encoding import csv_cells, csv_text

    real_rows = csv_text._row_text
    chunks = []

    def broken_rows(cells):  # the header and the first chunk of rows are written, the second chunk fails
        chunks.append(len(cells[0]))
        if len(chunks) > 2:
            raise OSError("disk full")
        return real_rows(cells)

    monkeypatch.setattr(csv_cells, "CHUNK_ROWS", 1)
    monkeypatch.setattr(csv_text, "_row_text", broken_rows)
    with pytest.raises(OSError, match="disk full"):
        write_csv(scored_table().iloc[:2], path)
    assert chunks == [1, 1, 1]
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"]


# ------------------------------------------------------------------------------------------------ HTML


class TagCollector(HTMLParser):
    """Every start tag with its attributes, parsed the way a browser tokenises (script content is raw text)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def page_without_plotly(path: Path) -> bytes:
    """The page's bytes with the inlined plotly.js (a trusted, packaged asset) taken out."""
    return path.read_bytes().replace(inline.plotly_js().encode(), b"")


def test_html_hostile_strings_never_raw(tmp_path):
    path = tmp_path / "report.html"
    write_html(scored_table(), path)
    raw = page_without_plotly(path)
    lowered = raw.lower()
    for needle in (b"<script>alert", b"<img src=x", b"</script><script>", b"<!--", b"]]>"):
        assert needle not in lowered, needle
    assert "\u2028".encode() not in raw and "\u2029".encode() not in raw
    collector = TagCollector()
    collector.feed(raw.decode("utf-8"))
    scripts = [attrs for tag, attrs in collector.tags if tag == "script"]
    # the first rows, the table, the data, one JSON per chart, then our code: load, item view, prelude,
    # plotly.js, charts
    assert {"type": "application/json", "id": "evalkit-first"} in scripts
    assert {"type": "application/json", "id": "evalkit-data"} in scripts
    figures = [a for a in scripts if re.fullmatch(r"figure-\d+-data", a.get("id", ""))]
    assert len(figures) == 2 + 3  # row status, pass rates, one score distribution per evaluator
    assert {"type": "application/json", "id": "figure-template"} in scripts  # plotly's template, once
    assert scripts.count({}) == 6 and len(scripts) == 2 + len(figures) + 1 + 6
    assert lowered.count(b"<script") == len(scripts) and lowered.count(b"</script") == len(scripts)
    assert not [tag for tag, _ in collector.tags if tag in {"img", "iframe", "object", "embed", "a", "link"}]
    # server-rendered title is escaped (by the template's autoescaping)
    escaped = "Demo &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
    assert f"<title>{escaped}</title>".encode() in raw
    assert f"<h1>{escaped}</h1>".encode() in raw


def test_html_embedded_json_round_trips(tmp_path):
    path = tmp_path / "report.html"
    write_html(scored_table(), path)
    data = embedded_data(path.read_bytes())
    cols = data["columns"]
    assert data["rows"] == 4
    assert [e["key"] for e in data["evaluators"]] == ["exactMatch", "citations", "forbidden_terms"]
    assert cols["item"] == [0, 1, 2, 2] and cols["turn"] == [None, None, 0, 1]
    assert cols["thread"] == [None, None, "t1", "t1"]
    assert cols["prompt"] == [XSS_SCRIPT, "What is 2+2?", "Say hello", ODD]
    assert cols["response"] == [XSS_IMG, None, "Hello damn", "Fine"]
    assert cols["expected"] == ["Paris", "4", "Hello", ""]
    assert cols["status"] == ["pass", "error", "fail", "partial"]
    assert cols["error"] == [None, "AGENT_ERROR: " + XSS_IMG, None, None]
    assert cols["e0.score"] == [True, None, False, True]
    assert cols["e0.result"] == ["pass", "error", "fail", "pass"]
    assert cols["e0.error"] == [None, XSS_SCRIPT, None, None]
    assert cols["e1.score"] == [2, None, 0, None] and cols["e1.result"] == ["pass", None, "fail", None]
    assert cols["e2.score"] == [1.0, None, 0.0, None]
    assert cols["e2.threshold"] == [0.5, None, 0.5, 0.5]
    assert cols["e2.reason"] == [XSS_SCRIPT, None, "found 'damn'", None]
    assert cols["e2.error"] == [None, None, None, XSS_IMG]
    assert "e0.threshold" not in cols  # ExactMatch has no threshold


def test_html_truncates_long_texts(tmp_path):
    df = scored_table()
    df.loc[0, "response"] = "x" * 10_000
    df.loc[2, "forbidden_terms_reason"] = "r" * 3000
    path = tmp_path / "report.html"
    write_html(df, path, text_limit=100)
    cols = embedded_data(path.read_bytes())["columns"]
    assert cols["response"][0] == "x" * 100 + ELLIPSIS
    assert cols["e2.reason"][2] == "r" * 100 + ELLIPSIS
    assert cols["prompt"][0] == XSS_SCRIPT  # short texts untouched
    assert len(page_without_plotly(path)) < 60_000


def test_html_has_no_remote_resources(tmp_path):
    path = tmp_path / "report.html"
    write_html(scored_table(), path)
    text = page_without_plotly(path).decode("utf-8")
    assert "http://" not in text and "https://" not in text
    assert not re.search(
        r"(?i)<[^>]*\b(src|href|action|srcset|poster)\s*=", text.split('id="evalkit-first"')[0]
    )
    assert "@import" not in html_report.CSS and "url(" not in html_report.CSS
    collector = TagCollector()
    collector.feed(text)
    for tag, attrs in collector.tags:
        assert not {"src", "href", "action", "srcset"} & set(attrs), tag
        assert not [name for name in attrs if name.startswith("on")], tag  # no inline event handlers


def _csp_and_scripts(text: str) -> tuple[str, list[str]]:
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', text).group(1)
    return html.unescape(csp), re.findall(r"<script>(.*?)</script>", text, flags=re.DOTALL)


def _sha(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def test_html_csp_allows_exactly_the_inline_scripts(tmp_path):
    path = tmp_path / "report.html"
    write_html(scored_table(), path)
    csp, scripts = _csp_and_scripts(path.read_text("utf-8"))
    script_src = re.search(r"script-src ([^;]+);", csp).group(1).split()
    assert len(scripts) == 6 and sorted(script_src) == sorted(_sha(s) for s in scripts)
    assert "default-src 'none'" in csp and "connect-src" not in csp
    # plotly writes style attributes at run time: a page with charts needs inline styles (and no hash,
    # which would switch 'unsafe-inline' off)
    assert "style-src 'unsafe-inline';" in csp
    # without charts the style is allowed by its hash only
    write_page(scored_table(), path, figures=[])
    text = path.read_text("utf-8")
    csp, scripts = _csp_and_scripts(text)
    style = text.split("<style>", 1)[1].split("</style>", 1)[0]
    assert f"style-src {_sha(style)};" in csp and len(scripts) == 3


def test_html_js_never_parses_html():
    for source in (page.TABLE_JS, page.ITEM_JS, page.CHARTS_JS):
        for forbidden in (
            r"innerHTML",
            r"outerHTML",
            r"insertAdjacentHTML",
            r"document\.write",
            r"\beval\(",
            r"\bFunction\(",
        ):
            assert not re.search(forbidden, source), forbidden


def test_html_title_fallbacks(tmp_path):
    df = scored_table()
    path = tmp_path / "report.html"
    write_html(df, path, title="My <b>run</b>")
    assert b"<title>My &lt;b&gt;run&lt;/b&gt;</title>" in path.read_bytes()
    del df.attrs["evalkit"]["document"]["metadata"]
    write_html(df, path)
    assert b"<title>demo-eval.json</title>" in path.read_bytes()
    df.attrs = {}
    write_html(df, path)
    assert b"<title>evalkit report</title>" in path.read_bytes()


def test_html_summary_table_is_server_rendered(tmp_path):
    path = tmp_path / "report.html"
    write_html(scored_table(), path)
    text = path.read_text("utf-8")
    row = re.search(r'<tr><th scope="row">forbidden_terms</th>(.*?)</tr>', text, flags=re.DOTALL).group(1)
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["3", "1", "1", "1", "1"]
    assert "50.0%" in row
    assert 'id="count-partial" aria-pressed="false"><b>1</b>partial' in text


def test_html_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "report.html"
    write_html(scored_table(), path)
    before = path.read_bytes()
    calls = []

    class BrokenJson:
        @staticmethod
        def dumps(*args, **kwargs):
            calls.append(1)
            if len(calls) > 3:  # fail part-way, after the head and some columns were written
                raise ValueError("serialisation failed")
            return json.dumps(*args, **kwargs)

    monkeypatch.setattr(inline, "json", BrokenJson)
    with pytest.raises(ValueError, match="serialisation failed"):
        write_html(scored_table(), path, title="new")
    assert len(calls) > 3
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_html_unscored_and_empty_tables(tmp_path):
    path = tmp_path / "report.html"
    write_html(pd.DataFrame({"item": [0], "prompt": ["p"], "response": ["r"]}), path)
    data = embedded_data(path.read_bytes())
    assert data["evaluators"] == [] and data["columns"]["status"] == [None]
    write_html(scored_table().iloc[:0], path)
    assert embedded_data(path.read_bytes())["rows"] == 0
