"""report.html of ``evalkit run --engine spark``: written chunk by chunk from spool files on disk, the same
page as ``write_html`` writes from the pandas engine's table of the same rows."""

from __future__ import annotations

import gc
import json
import weakref

from conftest import CUSTOM, DEMO, REPO, generated_document
from pages import assert_same_page, compacted, page_contents

import evalkit
from evalkit.cli import main as cli
from evalkit.reporting.html_page import write_html


def small_document() -> dict:
    """300 items (every tenth a thread), several statuses, boolean and numeric scores, missing responses
    (error rows), with a context early and tags only late, so a detail column fills in a later chunk."""
    document = generated_document(300, seed=11)
    document["items"][5]["context"] = "Policy handbook <section 4> & appendix"
    document["items"][290]["tags"] = ["late", "<b>tag</b>"]
    document["items"][0]["response"] = "</script><!-- & \u2028 \U0001f600"
    return document


def spark_and_pandas_pages(tmp_path, document_path, monkeypatch):
    out = tmp_path / "spark"
    args = ["run", str(document_path), "--engine", "spark", "--custom-dir", str(CUSTOM), "--out", str(out)]
    assert cli(args) == 0
    expected = tmp_path / "pandas.html"
    write_html(evalkit.evaluate(evalkit.load(document_path), custom_dir=CUSTOM, progress=False), expected)
    return out / "report.html", expected


def test_demo_page_written_in_chunks_is_the_pandas_page(spark, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setattr("evalkit.spark.run_files.CHUNK_ROWS", 5)
    got, expected = spark_and_pandas_pages(tmp_path, DEMO, monkeypatch)
    assert_same_page(got, expected)
    page = page_contents(got)
    assert page["meta"]["rows"] == 12 and len(page["columns"]["status"]) == 12
    assert not list((tmp_path / "spark").glob(".evalkit-report-*"))  # the spool folder is gone


def test_generated_page_written_in_chunks_is_the_pandas_page(spark, tmp_path, monkeypatch):
    monkeypatch.setattr("evalkit.spark.run_files.CHUNK_ROWS", 40)
    # compaction from 100 rows on; a streamed column keeps at most 8 distinct values to compact it
    monkeypatch.setattr("evalkit.reporting.page.COMPACT_ROWS", 100)
    monkeypatch.setattr("evalkit.reporting.page_stream.COMPACT_ROWS", 100)
    monkeypatch.setattr("evalkit.reporting.page_stream.STREAM_DISTINCT", 8)
    path = tmp_path / "generated.json"
    path.write_text(json.dumps(small_document()), encoding="utf-8")
    got, expected = spark_and_pandas_pages(tmp_path, path, monkeypatch)
    assert_same_page(got, expected)
    page = page_contents(got)
    columns = page["columns"]
    assert set(columns["status"]) == {"pass", "fail", "partial", "error"}
    assert columns["tags"].count(None) == len(columns["tags"]) - 1  # one tagged row, in the last chunks
    assert "context" in columns and "citations" not in columns  # empty detail columns are left out
    assert [e["name"] for e in page["meta"]["evaluators"]][:2] == ["ExactMatch", "PartialMatch"]
    assert any(v is True for v in columns["e0.score"]) and any(0 < (v or 0) < 1 for v in columns["e1.score"])
    # few distinct values: compacted on both pages; more than 8 (reasons): only on the pandas page
    assert {"status", "e0.result", "e1.result"} <= compacted(got) < compacted(expected)
    bins = next(f for f in page["figures"].values() if "Scores of PartialMatch" in json.dumps(f))
    assert len(bins["data"][0]["x"]) == 20 and sum(sum(t["y"]) for t in bins["data"]) > 300


def test_streamed_report_holds_no_chunk_and_spools_to_disk(tmp_path):
    """The report keeps each chunk's columns in files in the results folder, not the chunks in memory."""
    from evalkit.spark.report import StreamedReport, Totals

    table = evalkit.evaluate(evalkit.load(DEMO), custom_dir=CUSTOM, progress=False)
    template = table.iloc[:0].copy()
    template.attrs = dict(table.attrs)
    specs = table.attrs["evalkit"]["scored"]
    report, totals = StreamedReport(template, tmp_path), Totals(specs)
    alive = []
    for start in range(0, len(table), 5):
        chunk = table.iloc[start : start + 5].copy()
        chunk.attrs = dict(table.attrs)
        totals.add(chunk)
        report.add(chunk)
        alive.append(weakref.ref(chunk))
        del chunk
    gc.collect()
    assert not [ref for ref in alive if ref() is not None]
    spooled = list(tmp_path.glob(".evalkit-report-*/column-*.jsonl"))
    report.finish(tmp_path / "report.html", template, totals, None)
    assert len(spooled) >= len(page_contents(tmp_path / "report.html")["columns"])  # a file per column
    assert not list(tmp_path.glob(".evalkit-report-*"))
    write_html(table, tmp_path / "expected.html")
    assert (tmp_path / "report.html").read_bytes() == (tmp_path / "expected.html").read_bytes()


def test_streamed_report_of_no_rows_is_the_empty_page(tmp_path):
    import pandas as pd

    from evalkit.spark.frames import scored_table
    from evalkit.spark.report import StreamedReport, Totals

    specs = evalkit.evaluate(evalkit.load(DEMO), custom_dir=CUSTOM, progress=False).attrs["evalkit"]["scored"]
    template = scored_table(pd.DataFrame(), specs, {"source": "empty.json"})
    report = StreamedReport(template, tmp_path)
    report.finish(tmp_path / "report.html", template, Totals(specs), None)
    write_html(template, tmp_path / "expected.html")
    assert_same_page(tmp_path / "report.html", tmp_path / "expected.html")
