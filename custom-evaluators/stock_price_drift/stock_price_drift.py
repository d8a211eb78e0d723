"""StockPriceDrift: an Amazon Bedrock AgentCore code-based evaluator (TRACE level) for quoted stock prices.

Deploy it with ``evalkit spans package stock_price_drift --out stock_price_drift.zip`` (handler
``stock_price_drift.lambda_handler``; the zip holds this file, ``reference_prices.json`` and the shared span
reader ``agentcore_spans`` from ``custom-evaluators/_shared/``): standard library only, no file writes. LLMs
slip on numbers, and a quote off by a few percent can change a trading decision, so this check is
deterministic: it pulls ticker + price pairs out of the agent's answer in the target trace and compares each
with a reference.

The answer: the agent's response text in the target trace, read by the shared ``agentcore_spans`` module in
every form evalkit's built-in span judges read (span attributes ``gen_ai.output.messages``, ``gen_ai.choice``
events, ``gen_ai.completion*``, ``gen_ai.task.output``, OpenInference ``llm.output_messages.N.*`` /
``output.value``, Traceloop ``traceloop.entity.output``, ``gen_ai.client.inference.operation.details`` span
events) and in the trace's event records (ADOT ``body.output.messages``, joined to their span by
``traceId`` + ``spanId``). Tool spans and tool records are not answers, and only assistant messages are read:
a user's message ("I heard AAPL is at $250?") is never checked as if the agent had said it. When the trace
has agent-level spans (``invoke_agent``, ``traceloop.span.kind`` ``agent``/``workflow``) only their answer is
used, so the final answer is not counted twice through the LLM spans below it.

Pair extraction (``extract_price_pairs``), built for precision: a wrong pair fails a correct agent, a missed
pair only weakens the check.

- Text is cut into clauses at sentence ends, line breaks and semicolons; a pair never crosses a clause.
- Ticker: 1-5 capital letters (optional class suffix ``BRK.B``, optional ``$`` cashtag) standing alone,
  not in a stop list of capitalised words that are not tickers (CEO, USD, EPS, ETF, NYSE, AI, ...).
- Price: ``$189.32``, ``$ 1,234.56``, ``US$189``, ``USD 189.32`` or ``189.32 USD``/``dollars``; a comma
  followed by exactly three digits groups thousands, otherwise it is a decimal comma.
- A ticker takes the first acceptable price after it, within 120 characters and before the next ticker:
  ``AAPL is trading at $189.32``, ``MSFT: $410.10``, ``NVDA ($875.5)``, ``Apple (AAPL) closed at $189.32``,
  ``| AAPL | $189.32 |``, ``AAPL rose 2% to $189.32``.
- Not a quote: an amount with a sign (``+$3.20``) or a unit after it (``$2.9 trillion``, ``$3B``, ``%``),
  followed by ``per share``/``in revenue``/``market cap``; one right after a change word (``up``,
  ``gained``, ``fell by`` ... ``$3.20``); one whose last three words before it name another figure
  (``price target of``, ``52-week high``, ``previous close``, ``opened at`` ...) unless those words end in a
  current-quote phrase (``trading at``, ``closed at``, ``is at`` ...), the same for the three words before
  the ticker (``consensus target for AAPL is $220``); and a second figure joined by ``-``,
  ``to``, ``and`` or ``/`` to a skipped non-quote figure (``range $164 - $199``). After a change amount,
  ``to`` introduces the new level: ``down $1.20 to $188.10`` pairs 188.10.
- A list of tickers before prices (``AAPL and MSFT trade at $189 and $410``) is ambiguous and not paired.
- Repeated identical pairs are checked once.

Reference prices come from ``load_reference_prices(tickers)``, a module-level function you may replace
(``stock_price_drift.load_reference_prices = my_loader``) with a call to your market-data service: it gets
the sorted tickers found in the answer and returns ``{ticker: price}``. The default reads the JSON file
named by the environment variable ``REFERENCE_PRICES_PATH``, else ``reference_prices.json`` beside this
module (``{"AAPL": 189.3, ...}``; non-positive or non-numeric entries are ignored). The bundled file is a
static snapshot for demos and tests, not live data.

drift = |quoted - reference| / reference x 100 (rounded to 6 decimals to drop float noise); tolerance from
``DRIFT_TOLERANCE_PERCENT`` (default 2). Labels: ``DRIFT`` 0.0 when any pair is above the tolerance (each
pair listed with its drift), ``PASS`` 1.0 when all are within it, ``NO_PRICES`` 1.0 when the answer was read
and quotes no priced ticker with a reference (there is nothing to check, and nothing wrong), ``NO_OUTPUT`` 0.0
when no answer can be found in the trace: the check did not see what the agent said, so it cannot vouch for
it, and a gate must not pass a trace because its answer was recorded in a form nobody read. ``PASSING_LABELS``
(``PASS``, ``NO_PRICES``) tells evalkit which labels count as passing: ``DRIFT`` and ``NO_OUTPUT`` never do.
A malformed event gives ``errorCode`` ``InvalidInput``; a bad tolerance or unreadable reference file gives
``InvalidConfiguration`` / ``ReferenceUnavailable``; the handler never raises.
"""

from __future__ import annotations

import json
import os
import re

from agentcore_spans import read_trace_event as _read_event
from agentcore_spans import response_texts, spans_in_trace

EVALUATION_LEVEL = "TRACE"
#: The labels that count as passing (evalkit's ``--fail-under``, ``spans status``, alarms and reports read it).
PASSING_LABELS = ("PASS", "NO_PRICES")

MAX_EXPLANATION = 2048
DEFAULT_TOLERANCE_PERCENT = 2.0
DEFAULT_REFERENCE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_prices.json")

# Capitalised words that are not tickers in market prose; they still end a ticker's window when listed.
NOT_TICKERS = frozenset(
    """A I AM PM ET EST EDT PST PDT CT UTC GMT USD US USA UK EU EUR GBP JPY CNY CAD CEO CFO CTO COO EPS ETF
    ETFS IPO GDP CPI PPI PCE FED FOMC SEC FDA FTC DOJ IRS AI ML API NYSE NASDAQ AMEX OTC DOW DJIA SPX YTD
    QTD MTD YOY QOQ TTM PE ROI ROE ROA EBIT EBITDA FCF OK THE AND OR FOR TO OF IN ON AT IS IT BUY SELL HOLD
    LLC INC CO LTD PLC NA SMA EMA RSI MACD ATH ATL FAQ TLDR ESG REIT M B K T BN MN Q U.S U.K E.U NOTE USDT
    BTC ETH""".split()
)
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(?!\d|,\d)"
TICKER = re.compile(r"(?<![\w$.\-/&])\$?([A-Z]{1,5}(?:\.[A-Z]{1,2})?)(?![\w\-&])")
PRICE = re.compile(
    r"(?P<sign>(?<![\w.])[+\-\u2212])?"
    r"(?:(?:US\$|\$|\bUSD)\s?(?P<sign2>[+\-\u2212])?(?P<a>" + _NUMBER + r")"
    r"|(?<![\w.,])(?P<b>" + _NUMBER + r")\s?(?:USD|dollars?)\b)"
    r"(?P<unit>\s?%|\s?(?:thousand|million|billion|trillion|bn|mn)\b|[KMBTkmbt]\b|\s[KMBT]\b)?"
)
CLAUSE_BREAK = re.compile(r"(?<=[.!?])\s+|\n|;")
WINDOW = 120
CHANGE_WORDS = frozenset(
    """up down gain gains gained rose rise rises risen fell fall falls fallen drop drops dropped lost lose
    loses add adds added shed sheds by jumped jumps climbed climbs slipped slips declined declines increased
    decreased moved change changed from surged slid tumbled plunged soared""".split()
)
QUALIFIERS = re.compile(
    r"\b(?:targets?|highs?|lows?|range|estimates?|estimated|forecasts?|eps|earnings|dividends?|revenue|"
    r"sales|cap|capitalization|volume|strike|support|resistance|average|avg|52-week|week|month|year|ytd|"
    r"previous|prior|yesterday'?s?|open|opened|opening|fair|valuation|book|expected|consensus|ipo)\b"
)
QUOTE_PHRASE = re.compile(
    r"\b(?:trading|trades|traded|closed|closing|priced|quoted|is|was|currently|now|stands|sits|last)"
    r"\s+(?:at|around|near)\W*$"
)
TRAILING_NON_QUOTE = re.compile(
    r"^\s?(?:(?:per|a)\s+share"
    r"|(?:in\s+)?(?:revenue|sales|market\s+cap|dividends?|earnings|profit|net\s+income))"
)
RANGE_JOIN = re.compile(r"^\W*(?:-|\u2013|\u2014|/|to|and|or)\W*$")
TO_JOIN = re.compile(r"^\W*(?:to|at)\W*$")
TICKER_LIST_JOIN = re.compile(r"^\s*(?:,|,?\s*and|&|or|/|vs\.?|versus)\s*$")


def lambda_handler(event, context):
    """AgentCore entry point: compare the prices quoted in the target trace's answer with references."""
    try:
        return _evaluate(event)
    except Exception as exc:  # never raise: AgentCore records an error result instead
        return {"errorCode": "InternalError", "errorMessage": f"{type(exc).__name__}: {exc}"[:1024]}


def load_reference_prices(tickers: list[str] | None = None) -> dict[str, float]:
    """Reference price per ticker; replace this function to query a live market-data source.

    ``tickers`` lists the symbols found in the answer (a replacement may fetch only those). The default
    reads ``$REFERENCE_PRICES_PATH`` or the bundled ``reference_prices.json`` and ignores ``tickers``.
    Raise ``OSError`` or ``ValueError`` when the source is unavailable.
    """
    path = os.environ.get("REFERENCE_PRICES_PATH") or DEFAULT_REFERENCE_FILE
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object mapping ticker to price")
    return {str(key).upper(): value for key, value in data.items()}


def tolerance_percent() -> float:
    """``DRIFT_TOLERANCE_PERCENT`` as a non-negative number (default 2); ``ValueError`` otherwise."""
    raw = os.environ.get("DRIFT_TOLERANCE_PERCENT", "").strip()
    if not raw:
        return DEFAULT_TOLERANCE_PERCENT
    value = float(raw)
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"DRIFT_TOLERANCE_PERCENT must be a non-negative number, got {raw!r}")
    return value


def _evaluate(event) -> dict:
    spans, trace_id, problem = _read_event(event)
    if problem:
        return {"errorCode": "InvalidInput", "errorMessage": problem}
    try:
        tolerance = tolerance_percent()
    except ValueError as exc:
        message = str(exc) if "DRIFT_TOLERANCE_PERCENT" in str(exc) else f"DRIFT_TOLERANCE_PERCENT: {exc}"
        return {"errorCode": "InvalidConfiguration", "errorMessage": message}
    in_trace = spans_in_trace(spans, trace_id)
    texts = [text for _, text in response_texts(in_trace)]
    if not texts:
        return {
            "label": "NO_OUTPUT",
            "value": 0.0,
            "explanation": (
                f"No agent answer found in trace {trace_id} ({len(in_trace)} span(s) and record(s)); the "
                "quoted prices could not be checked."
            ),
        }
    pairs: list[tuple[str, float]] = []
    for text in texts:
        for pair in extract_price_pairs(text):
            if pair not in pairs:
                pairs.append(pair)
    if not pairs:
        return {
            "label": "NO_PRICES",
            "value": 1.0,
            "explanation": "The response quotes no ticker with a price.",
        }
    tickers = sorted({ticker for ticker, _ in pairs})
    try:
        references = load_reference_prices(tickers)
    except Exception as exc:  # a replaced loader may fail in any way; report it as a result error
        return {
            "errorCode": "ReferenceUnavailable",
            "errorMessage": f"reference prices could not be loaded: {type(exc).__name__}: {exc}"[:1024],
        }
    checked, unreferenced = [], []
    for ticker, quoted in pairs:
        reference = _reference(references, ticker)
        if reference is None:
            unreferenced.append(ticker)
            continue
        drift = round(abs(quoted - reference) / reference * 100, 6)
        checked.append((ticker, quoted, reference, drift))
    skipped = f" No reference for: {', '.join(dict.fromkeys(unreferenced))}." if unreferenced else ""
    if not checked:
        return {
            "label": "NO_PRICES",
            "value": 1.0,
            "explanation": (
                f"{len(pairs)} quoted price(s), none for a ticker with a reference price.{skipped}"
            ),
        }
    drifted = [item for item in checked if item[3] > tolerance]
    describe = [
        f"{ticker} ${quoted:,.2f} vs reference ${reference:,.2f} ({drift:.2f}%)"
        for ticker, quoted, reference, drift in (drifted or checked)
    ]
    if drifted:
        head = f"{len(drifted)} of {len(checked)} quoted price(s) drift more than {tolerance:g}%: "
        return {"label": "DRIFT", "value": 0.0, "explanation": _join_limited(head, describe, tail=skipped)}
    head = f"All {len(checked)} quoted price(s) within {tolerance:g}% of the reference: "
    return {"label": "PASS", "value": 1.0, "explanation": _join_limited(head, describe, tail=skipped)}


def _reference(references: dict, ticker: str) -> float | None:
    value = references.get(ticker) if isinstance(references, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if 0 < number < float("inf") else None


# --- pair extraction ----------------------------------------------------------------------------------------


def extract_price_pairs(text: str) -> list[tuple[str, float]]:
    """Ticker + quoted price pairs in ``text``, in order (see the module docstring for the rules)."""
    pairs: list[tuple[str, float]] = []
    for clause in CLAUSE_BREAK.split(text or ""):
        if clause and clause.strip():
            pairs.extend(_clause_pairs(clause))
    return pairs


def _clause_pairs(clause: str) -> list[tuple[str, float]]:
    prices = [(m.start(), m.end(), m) for m in PRICE.finditer(clause)]
    tokens = [(start, end, "price", m) for start, end, m in prices]
    for m in TICKER.finditer(clause):
        symbol = m.group(1)
        inside_price = any(start <= m.start() < end for start, end, _ in prices)
        if symbol not in NOT_TICKERS and not inside_price:
            tokens.append((m.start(), m.end(), "ticker", symbol))
    tokens.sort(key=lambda token: token[0])

    pairs = []
    ticker, ticker_end, listed, done = None, 0, False, True
    previous_end, previous_skip, lead_in = 0, "", ""
    for start, end, kind, payload in tokens:
        if kind == "ticker":
            between = clause[ticker_end:start]
            listed = ticker is not None and not done and bool(TICKER_LIST_JOIN.match(between))
            lead_in = clause[previous_end:start]
            ticker, ticker_end, done = payload, end, False
            previous_end, previous_skip = end, ""
            continue
        if ticker is None or done or listed or start - ticker_end > WINDOW:
            continue
        skip = _non_quote(clause, payload, clause[previous_end:start], previous_skip, lead_in)
        previous_end, previous_skip = end, skip
        if not skip:
            pairs.append((ticker, _price_value(payload)))
            done = True
    return pairs


def _non_quote(clause: str, match: re.Match, before: str, previous_skip: str, lead_in: str) -> str:
    """Why the amount is not a current price quote ("" when it is one): "change" or "other" figure.

    ``before`` is the text since the ticker or the previous amount, ``lead_in`` the text before the ticker
    (since the previous token), so "consensus target for AAPL is $220" is recognised as a target.
    """
    if match.group("sign") or match.group("sign2"):
        return "change"
    if match.group("unit") or TRAILING_NON_QUOTE.match(clause[match.end() :].lower()):
        return "other"
    lowered = before.lower()
    if previous_skip == "other" and RANGE_JOIN.match(lowered):
        return "other"
    if previous_skip == "change" and TO_JOIN.match(lowered):
        return ""
    words = re.findall(r"[a-z0-9'\-]+", lowered)
    if words and words[-1] in CHANGE_WORDS:
        return "change"
    lead_words = re.findall(r"[a-z0-9'\-]+", lead_in.lower())[-3:]
    if QUALIFIERS.search(" ".join(words[-3:] + ["|"] + lead_words)) and not QUOTE_PHRASE.search(lowered):
        return "other"
    return ""


def _price_value(match: re.Match) -> float:
    raw = match.group("a") or match.group("b")
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw):
        return float(raw.replace(",", ""))
    return float(raw.replace(",", "."))


# --- explanation --------------------------------------------------------------------------------------------


def _join_limited(head: str, parts: list[str], sep: str = "; ", tail: str = "") -> str:
    """``head`` + ``parts`` (+ ``tail``), cut at whole parts so the result stays under 2048 characters."""
    text = head
    budget = MAX_EXPLANATION - 40 - len(tail)
    for i, part in enumerate(parts):
        piece = (sep if i else "") + part
        rest = len(parts) - i - 1
        reserve = len(f"; ... and {rest} more") if rest else 0
        if len(text) + len(piece) + reserve > budget:
            text += f"; ... and {len(parts) - i} more"
            break
        text += piece
    else:
        text += "."
    return (text + tail)[:MAX_EXPLANATION]
