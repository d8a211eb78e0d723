"""The item view's trace waterfall with event records: each record drawn under its span, never as a span.

The spans and records are the real OpenTelemetry SDK's (in-memory exporters; records emitted inside spans, so
they carry the active span's ids), encoded by the OTLP exporters' own encoders and read by evalkit's span
reader into the documents a ``spans`` column holds.
"""

from __future__ import annotations

import json

from conftest import SCREENSHOTS
from playwright.sync_api import expect

from evalkit.reporting.html_page import write_html
from evalkit.reporting.page_details import trace
from evalkit.spans.reading.loading import read_object


def _captured() -> list[dict]:
    """An agent turn: invoke_agent > chat (one record: the messages) and execute_tool (one record: the tool's
    input and result), as canonical span and record documents."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans, logs = InMemorySpanExporter(), InMemoryLogExporter()
    tracer_provider, logger_provider = TracerProvider(), LoggerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    tracer = tracer_provider.get_tracer("strands.telemetry.tracer")
    logger = logger_provider.get_logger("strands.telemetry.tracer")
    with tracer.start_as_current_span("invoke_agent", attributes={"session.id": "waterfall"}):
        with tracer.start_as_current_span("chat"):
            logger.emit(
                event_name="strands.telemetry.tracer",
                body={
                    "input": {"messages": [{"role": "user", "content": {"content": "Price of AAPL?"}}]},
                    "output": {
                        "messages": [{"role": "assistant", "content": {"message": "AAPL is at $182.45"}}]
                    },
                },
            )
        with tracer.start_as_current_span(
            "execute_tool get_price", attributes={"gen_ai.tool.name": "get_price"}
        ):
            logger.emit(
                body={
                    "input": {"messages": [{"role": "tool", "content": {"content": '{"ticker": "AAPL"}'}}]},
                    "output": {
                        "messages": [{"role": "assistant", "content": {"message": '{"price": 182.45}'}}]
                    },
                },
                attributes={"event.name": "strands.telemetry.tracer"},
            )
    docs: list[dict] = []
    for request in (encode_spans(spans.get_finished_spans()), encode_logs(logs.get_finished_logs())):
        read_object(json.loads(json.dumps(MessageToDict(request))), ("sdk", ""), docs, [], [])
    return docs


def test_records_are_entries_under_their_span():
    docs = _captured()
    entries = trace(docs)
    assert [(e["n"], e["l"], e.get("r", 0)) for e in entries] == [
        ("invoke_agent", 0, 0),
        ("chat", 1, 0),
        ("strands.telemetry.tracer", 2, 1),
        ("execute_tool get_price", 1, 0),
        ("strands.telemetry.tracer", 2, 1),
    ]
    chat_record = entries[2]
    assert chat_record["st"] == "record" and chat_record["d"] == 0
    assert chat_record["b"]["output"]["messages"][0]["content"]["message"] == "AAPL is at $182.45"
    assert entries[1]["s"] <= chat_record["s"] <= entries[3]["s"]
    records = [d for d in docs if "startTimeUnixNano" not in d]
    only = trace(records)  # records alone (no name, no startTimeUnixNano): entries, at the top level
    assert [(e["l"], e["r"]) for e in only] == [(0, 1), (0, 1)] and only[0]["s"] == 0
    assert trace([{"body": "x"}]) is None  # no time at all: nothing to draw


def test_the_waterfall_draws_records_under_their_span_in_the_browser(open_page, tmp_path):
    from tests.reporting.test_reports import scored_table

    docs = _captured()
    table = scored_table()
    records = [d for d in docs if "startTimeUnixNano" not in d]
    table["spans"] = [docs, records, None, None]
    path = tmp_path / "report.html"
    write_html(table, path)
    watched = open_page(path, 1280, 800, fragment="#item-0")
    page = watched.page
    view = page.locator("#item-view")
    assert view.is_visible()
    rows = view.locator(".waterfall details.span-row")
    assert rows.count() == 5
    assert view.locator(".waterfall .iv-sub").inner_text().startswith("3 spans, 2 event records over")
    names = [n.strip() for n in rows.locator(".span-name").all_inner_texts()]
    assert names == ["invoke_agent", "chat", "strands.telemetry.tracer", "execute_tool get_price",
                     "strands.telemetry.tracer"]  # fmt: skip
    record = rows.nth(2)
    assert "span-record" in record.get_attribute("class")
    assert record.locator(".span-status").inner_text() == "record"
    indent = [
        float(rows.nth(i).locator(".span-name").evaluate("e => parseFloat(e.style.paddingLeft)"))
        for i in (1, 2)
    ]
    assert indent[1] > indent[0]  # one level under its span
    record.locator("summary").click()
    body = record.locator(".record-body")
    assert body.is_visible() and "AAPL is at $182.45" in body.inner_text()
    view.locator(".waterfall").scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / "item-view-records.png")

    page.goto(path.resolve().as_uri() + "#item-1")  # records only: drawn, nothing breaks
    expect(page.locator("#item-view .waterfall details.span-row")).to_have_count(2)  # after the hashchange
    assert page.locator("#item-view .waterfall .iv-sub").inner_text().startswith("0 spans, 2 event records")
    assert watched.problems() == []
