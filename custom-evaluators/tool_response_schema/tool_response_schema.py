"""ToolResponseSchema: an Amazon Bedrock AgentCore code-based evaluator (TRACE level) for tool outputs.

Deploy it with ``evalkit spans package tool_response_schema --out tool_response_schema.zip`` (handler
``tool_response_schema.lambda_handler``; the zip adds the shared span reader ``agentcore_spans`` from
``custom-evaluators/_shared/``): standard library only, no file writes. AgentCore sends the whole session's
spans; this evaluator keeps the spans of the target trace (``evaluationTarget.traceIds[0]``) and checks what
every tool returned, so a contract change, parsing bug or upstream outage is caught at the tool boundary,
before the agent weaves bad data into an answer.

Tool spans and their outputs are read by the shared ``agentcore_spans`` module: a tool span's name starts
with ``execute_tool ``, or it has ``gen_ai.tool.name``, or ``traceloop.span.kind`` is ``tool``. Tool name: the
first of ``gen_ai.tool.name``, ``tool.name``, ``traceloop.entity.name``, else the span name without
``execute_tool ``. Tool output: the first of ``gen_ai.tool.call.result``, ``traceloop.entity.output``,
``tool.output``, ``tool.result``, ``output.value``, ``gen_ai.tool.output`` (non-string values as JSON); else
the ``message`` of a ``gen_ai.choice`` event on the tool span (Strands); else the span's tool event record in
``sessionSpans`` (ADOT: ``body.output.messages[].content.message``, joined by ``traceId`` + ``spanId``).
Content-block lists (``[{"text": ...}]``) are read as their text.

Checks per tool span:

- ``get_stock_data*``: the output holds a ticker (``\\b[A-Z]{1,5}\\b``) and a price
  (``\\$\\s?\\d{1,6}(?:[.,]\\d{1,4})?``) or a percentage. A JSON object output also passes when it has a
  ticker-like ``symbol``/``ticker`` field and a positive number under a key containing ``price`` or ``close``
  (structured outputs carry no ``$`` sign).
- ``search_news*``: at least 80 characters and more than one sentence (sentences end at ``.``, ``!`` or
  ``?`` followed by white space, or at a line break; a sentence must contain a letter).
- any other tool: a non-empty output (``null``, ``{}``, ``[]`` and ``""`` count as empty).
- any tool whose span status is ERROR fails, whatever it returned.

Result: no tool spans in the trace gives ``SKIPPED`` 1.0 (the trace called no tool: nothing is wrong at the
tool boundary); otherwise value = passed / total, label ``PASS`` (all pass), ``PARTIAL`` (some) or ``FAIL``
(none); the explanation names each failing span (span id, tool, reason). A tool span whose output is recorded
nowhere fails ("no output recorded"): a check that cannot see the output does not pass it. ``PASSING_LABELS``
(``PASS``, ``SKIPPED``) tells evalkit which labels count as passing. A malformed event gives
``{"errorCode": "InvalidInput", "errorMessage": ...}``; the handler never raises.
"""

from __future__ import annotations

import json
import re

from agentcore_spans import attributes, is_tool_span, span_key, spans_in_trace, split_documents, tool_name
from agentcore_spans import read_trace_event as _read_event
from agentcore_spans import tool_output as _tool_output

EVALUATION_LEVEL = "TRACE"
#: The labels that count as passing (evalkit's ``--fail-under``, ``spans status``, alarms and reports read it).
PASSING_LABELS = ("PASS", "SKIPPED")

MAX_EXPLANATION = 2048
TICKER = re.compile(r"\b[A-Z]{1,5}\b")
PRICE = re.compile(r"\$\s?\d{1,6}(?:[.,]\d{1,4})?")
PERCENT = re.compile(r"\d(?:[.,]\d+)?\s?%")
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_NEWS_CHARS = 80
EMPTY_OUTPUTS = {"", "null", "none", "{}", "[]", '""', "''"}


def lambda_handler(event, context):
    """AgentCore entry point: score the tool outputs of the target trace."""
    try:
        return _evaluate(event)
    except Exception as exc:  # never raise: AgentCore records an error result instead
        return {"errorCode": "InternalError", "errorMessage": f"{type(exc).__name__}: {exc}"[:1024]}


def _evaluate(event) -> dict:
    spans, trace_id, problem = _read_event(event)
    if problem:
        return {"errorCode": "InvalidInput", "errorMessage": problem}
    in_trace, records = split_documents(spans_in_trace(spans, trace_id))
    results = []
    for span in in_trace:
        attrs = attributes(span)
        if not is_tool_span(span, attrs):
            continue
        tool = tool_name(span, attrs)
        output = _tool_output(span, attrs, records.get(span_key(span), []))
        reason = check_tool_output(tool, output, _status_is_error(span))
        results.append((str(span.get("spanId") or "?"), tool, reason))
    if not results:
        where = f"{len(in_trace)} span(s)" if in_trace else "no spans"
        return {
            "label": "SKIPPED",
            "value": 1.0,
            "explanation": f"No tool spans in trace {trace_id} ({where} in the trace); nothing to validate.",
        }
    failures = [(span_id, tool, reason) for span_id, tool, reason in results if reason]
    passed = len(results) - len(failures)
    label = "PASS" if not failures else ("FAIL" if passed == 0 else "PARTIAL")
    head = f"{passed}/{len(results)} tool output(s) valid in trace {trace_id}."
    if not failures:
        tools = ", ".join(sorted({tool for _, tool, _ in results}))
        return {"label": label, "value": 1.0, "explanation": f"{head} Tools: {tools}."}
    parts = [f"span {span_id} {tool}: {reason}" for span_id, tool, reason in failures]
    return {
        "label": label,
        "value": round(passed / len(results), 4),
        "explanation": _join_limited(head + " Failing: ", parts),
    }


def check_tool_output(tool: str, output: str | None, errored: bool = False) -> str:
    """Why the output of ``tool`` is invalid, or ``""`` when it passes the check for its tool family."""
    if errored:
        return "span status is ERROR"
    text = (output or "").strip()
    if text.lower() in EMPTY_OUTPUTS:
        return "empty output" if output is not None else "no output recorded"
    name = tool.lower()
    if name.startswith("get_stock_data"):
        return _check_stock_data(text)
    if name.startswith("search_news"):
        return _check_news(text)
    return ""


def _check_stock_data(text: str) -> str:
    if _structured_quote(text):
        return ""
    missing = []
    if not TICKER.search(text):
        missing.append("no ticker symbol")
    if not (PRICE.search(text) or PERCENT.search(text)):
        missing.append("no price ($ amount) or percentage")
    return " and ".join(missing)


def _structured_quote(text: str) -> bool:
    """A JSON object with a ticker-like symbol and a positive price, e.g. {"symbol": "AAPL", "price": 1}."""
    if not text.startswith("{"):
        return False
    try:
        data = json.loads(text)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    symbol = data.get("symbol", data.get("ticker"))
    if not (isinstance(symbol, str) and re.fullmatch(r"[A-Z]{1,5}(?:\.[A-Z]{1,2})?", symbol)):
        return False
    for key, value in data.items():
        lowered = str(key).lower()
        if ("price" in lowered or "close" in lowered) and _positive_number(value):
            return True
    return False


def _positive_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _check_news(text: str) -> str:
    problems = []
    if len(text) < MIN_NEWS_CHARS:
        problems.append(f"only {len(text)} characters (at least {MIN_NEWS_CHARS} expected)")
    sentences = [part for part in SENTENCE_BREAK.split(text) if re.search(r"[^\W\d_]", part)]
    if len(sentences) < 2:
        problems.append("a single sentence (more than one expected)")
    return " and ".join(problems)


# --- tool span details and the explanation ------------------------------------------------------------------


def _status_is_error(span: dict) -> bool:
    status = span.get("status")
    code = status.get("code") if isinstance(status, dict) else status
    return str(code).upper() in {"ERROR", "STATUS_CODE_ERROR", "2"}


def _join_limited(head: str, parts: list[str], sep: str = "; ") -> str:
    """``head`` + ``parts`` joined, cut at whole parts so the result stays under the 2048-character limit."""
    text = head
    for i, part in enumerate(parts):
        piece = (sep if i else "") + part
        rest = len(parts) - i - 1
        reserve = len(f"; ... and {rest} more") if rest else 0
        if len(text) + len(piece) + reserve > MAX_EXPLANATION - 40:
            return text + f"; ... and {len(parts) - i} more"
        text += piece
    return text[:MAX_EXPLANATION]
