"""A run as JUnit XML (``--junit FILE``), the test report format CI systems read (Jenkins, GitLab, GitHub
test-report actions).

    write_junit(scored, "out/junit.xml", title="Contoso HR", verdicts=...)

One ``<testsuite>`` per evaluator and one ``<testcase>`` per row (item, or item and turn) and evaluator:

- the evaluator passed: an empty test case;
- it failed: ``<failure message="REASON" type="fail">`` with the reason and the score as results.json holds
  it;
- it errored: ``<error message="MESSAGE" type="error">``; a row with no response (status ``error``, no
  evaluator ran) is an error too, with the row's error message;
- the row did not ask for the evaluator: ``<skipped message="not asked for this item">``. In a span run
  (``level`` column) a target at another level than the evaluator's gets no test case at all.

With a baseline, a last ``<testsuite name="regression against BASELINE">`` has one test case per evaluator,
failing when the paired test found a significant drop (:mod:`evalkit.analysis.regression_gate`).

The file validates against the Jenkins xUnit plugin's ``junit-10.xsd`` (tests/reporting/data). Characters
XML 1.0 cannot carry (control characters but tab and line breaks, lone surrogates, U+FFFE/U+FFFF) are written
as ``\\xNN`` / ``\\uNNNN`` text; ``& < > "``, carriage returns and, in attributes, line breaks are escaped, so
a parser reads back every value as written. The file is written as text, line by line (ElementTree took 30 s
for 300,000 test cases). Written atomically.

May import: ``evalkit.analysis``, ``evalkit.documents`` (atomic writes).
"""

from __future__ import annotations

import os
import re
from typing import Any

import pandas as pd

from evalkit.analysis.pairing import column_texts
from evalkit.analysis.summaries import scored_evaluators
from evalkit.documents.columns import score_column
from evalkit.documents.files.atomic import atomic_write
from evalkit.documents.results import entry_score
from evalkit.reporting.ci_summary import is_span_run

__all__ = ["junit_lines", "write_junit", "xml_text"]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: Longest message attribute; the element's text carries the whole reason.
MESSAGE_LIMIT = 500


def xml_text(value: Any) -> str:
    """``value`` as text XML 1.0 can carry: forbidden characters become visible escapes."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    text = str(value)

    def visible(match: re.Match) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _NOT_XML.sub(visible, text)


def _dotless(text: str) -> str:
    """A name for a classname segment: CI tools split classnames at dots into packages."""
    return text.replace(".", "_")


def _message(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "\u2026"


def _attr(value: Any) -> str:
    """An attribute value, quoted: XML-safe text with ``& < > "`` and line breaks as character references."""
    text = xml_text(value)
    for old, new in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;")):
        text = text.replace(old, new)
    return '"' + text.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;") + '"'


def _text(value: Any) -> str:
    """Element text: XML-safe, with ``& < >`` escaped and a carriage return as a character reference (a
    parser reads a literal one as a line feed, so the text would not come back as written)."""
    text = xml_text(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\r", "&#13;")


def _case_names(frame: pd.DataFrame) -> list[str]:
    """``item 3: <prompt>`` / ``item 9 turn 2: <prompt>``; in a span run the target (session / trace / span)."""
    prompts = [str(p or "") for p in column_texts(frame, "prompt", "")]
    if is_span_run(frame):
        return prompts
    n = len(frame)
    items = frame["item"].to_numpy(dtype=object) if "item" in frame.columns else range(n)
    turns = column_texts(frame, "turn") if "turn" in frame.columns else [None] * n
    names = []
    for item, turn, prompt in zip(items, turns, prompts):
        name = f"item {int(item)}" + ("" if turn is None else f" turn {int(turn)}")
        short = " ".join(prompt.split())[:80]
        names.append(f"{name}: {short}" if short else name)
    return names


def _suite(frame: pd.DataFrame, ev: dict, title: str, names: list[str]) -> tuple[list[str], dict]:
    """The lines of one evaluator's ``<testsuite>`` (without its opening tag) and its counts; ``names`` are
    the test case names, already quoted (:func:`_attr`)."""
    key, evaluator = ev["key"], str(ev.get("name", ev["key"]))
    results = column_texts(frame, f"{key}_result")
    reasons = column_texts(frame, f"{key}_reason", "")
    errors = column_texts(frame, f"{key}_error", "")
    scores = column_texts(frame, score_column(key))  # the Citations score is not its input column
    field = str(ev.get("score_field") or "score")
    statuses = column_texts(frame, "status", "")
    row_errors = column_texts(frame, "error_message", "")
    levels = column_texts(frame, "level") if "level" in frame.columns and ev.get("level") else None
    tally = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    classname = _attr(f"evalkit.{_dotless(title)}.{_dotless(evaluator)}")
    lines = []
    for position, result in enumerate(results):
        if levels is not None and levels[position] != ev["level"]:
            continue
        tally["tests"] += 1
        head = f"    <testcase name={names[position]} classname={classname}"
        if result == "fail":
            reason, score = xml_text(reasons[position]), scores[position]
            detail = reason + (f"\nscore: {entry_score(field, score)}" if score is not None else "")
            lines.append(
                f'{head}>\n      <failure message={_attr(_message(reason or "failed"))} type="fail">'
                f"{_text(detail)}</failure>\n    </testcase>"
            )
            tally["failures"] += 1
        elif result == "error" or (result is None and statuses[position] == "error"):
            text = xml_text(errors[position] if result == "error" else row_errors[position]) or "error"
            lines.append(
                f'{head}>\n      <error message={_attr(_message(text))} type="error">{_text(text)}</error>\n'
                "    </testcase>"
            )
            tally["errors"] += 1
        elif result is None:
            lines.append(f'{head}>\n      <skipped message="not asked for this item" />\n    </testcase>')
            tally["skipped"] += 1
        else:
            lines.append(f"{head} />")
    return lines, tally


def _regression_suite(verdicts: list, baseline: str, title: str) -> tuple[list[str], dict]:
    from evalkit.analysis.regression_gate import gate_line

    classname = _attr(f"evalkit.{_dotless(title)}.regression")
    lines = []
    for v in verdicts:
        head = f"    <testcase name={_attr(v.evaluator)} classname={classname}"
        if v.regression:
            line = gate_line(v, baseline)
            lines.append(
                f'{head}>\n      <failure message={_attr(_message(line))} type="regression">{_text(line)}'
                "</failure>\n    </testcase>"
            )
        elif v.kind == "too few pairs":
            lines.append(f"{head}>\n      <skipped message={_attr(v.test_text())} />\n    </testcase>")
        else:
            lines.append(f"{head} />")
    failures = sum(v.regression for v in verdicts)
    skipped = sum(v.kind == "too few pairs" for v in verdicts)
    return lines, {"tests": len(verdicts), "failures": failures, "errors": 0, "skipped": skipped}


def junit_lines(
    frame: pd.DataFrame, *, title: str, verdicts: list | None = None, baseline: str | None = None
) -> list[str]:
    """The JUnit document of a scored case table as lines of text (see the module docstring)."""
    names = [_attr(name) for name in _case_names(frame)]
    suites = [
        (str(ev.get("name", ev["key"])), *_suite(frame, ev, title, names)) for ev in scored_evaluators(frame)
    ]
    if verdicts is not None:
        against = baseline or "the baseline"
        suites.append((f"regression against {against}", *_regression_suite(verdicts, against, title)))
    totals = {k: sum(t[k] for _, _, t in suites) for k in ("tests", "failures", "errors")}
    out = [
        "<?xml version='1.0' encoding='utf-8'?>",
        f"<testsuites name={_attr(f'evalkit: {title}')} "
        + " ".join(f'{k}="{v}"' for k, v in totals.items())
        + ">",
    ]
    for name, lines, tally in suites:
        counts = " ".join(f'{k}="{v}"' for k, v in tally.items())
        out.append(f"  <testsuite name={_attr(name)} {counts}>")
        out += lines
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return out


def write_junit(
    frame: pd.DataFrame,
    path: str | os.PathLike,
    *,
    title: str,
    verdicts: list | None = None,
    baseline: str | None = None,
) -> None:
    """Write :func:`junit_lines` to ``path`` (UTF-8), atomically."""
    lines = junit_lines(frame, title=title, verdicts=verdicts, baseline=baseline)
    with atomic_write(path) as handle:
        handle.write("\n".join(lines))
        handle.write("\n")
