"""A run as JUnit XML (``--junit FILE``), the test report format CI systems read (Jenkins, GitLab, GitHub
test-report actions).

    write_junit(scored, "out/junit.xml", title="Contoso HR", verdicts=...)

One ``<testsuite>`` per evaluator and one ``<testcase>`` per row (item, or item and turn) and evaluator:

- the evaluator passed: an empty test case;
- it failed: ``<failure message="REASON" type="fail">`` with the reason and the score;
- it errored: ``<error message="MESSAGE" type="error">``; a row with no response (status ``error``, no
  evaluator ran) is an error too, with the row's error message;
- the row did not ask for the evaluator: ``<skipped message="not asked for this item">``. In a span run
  (``level`` column) a target at another level than the evaluator's gets no test case at all.

With a baseline, a last ``<testsuite name="regression against BASELINE">`` has one test case per evaluator,
failing when the paired test found a significant drop (:mod:`evalkit.analysis.regression_gate`).

The file validates against the Jenkins xUnit plugin's ``junit-10.xsd`` (tests/reporting/data). Characters
XML 1.0 cannot carry (control characters but tab and line breaks, lone surrogates, U+FFFE/U+FFFF) are written
as ``\\xNN`` / ``\\uNNNN`` text; everything else is escaped by ElementTree. Written atomically.

May import: ``evalkit.analysis``, ``evalkit.documents`` (atomic writes).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from typing import Any

import pandas as pd

from evalkit.analysis.pairing import column_texts
from evalkit.analysis.summaries import scored_evaluators
from evalkit.documents.atomic import atomic_write
from evalkit.reporting.ci_summary import is_span_run

__all__ = ["junit_tree", "write_junit", "xml_text"]

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


def _case_name(frame: pd.DataFrame, position: int, prompts) -> str:
    prompt = str(prompts[position] or "")
    if is_span_run(frame):  # the target (session / trace / span) names the case
        return prompt
    item = int(frame["item"].iloc[position]) if "item" in frame.columns else position
    turn = frame["turn"].iloc[position] if "turn" in frame.columns else None
    name = f"item {item}" + ("" if turn is None or pd.isna(turn) else f" turn {int(turn)}")
    short = " ".join(prompt.split())
    return f"{name}: {short[:80]}" if short else name


def _suite(frame: pd.DataFrame, ev: dict, title: str, names: list[str]) -> ET.Element:
    key, evaluator = ev["key"], str(ev.get("name", ev["key"]))
    results = column_texts(frame, f"{key}_result")
    reasons = column_texts(frame, f"{key}_reason", "")
    errors = column_texts(frame, f"{key}_error", "")
    scores = frame[key].to_numpy(dtype=object) if key in frame.columns else [None] * len(frame)
    statuses = column_texts(frame, "status", "")
    row_errors = column_texts(frame, "error_message", "")
    levels = column_texts(frame, "level") if "level" in frame.columns and ev.get("level") else None
    suite = ET.Element("testsuite", name=xml_text(evaluator))
    tally = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    classname = xml_text(f"evalkit.{_dotless(title)}.{_dotless(evaluator)}")
    for position in range(len(frame)):
        if levels is not None and levels[position] != ev["level"]:
            continue
        case = ET.SubElement(suite, "testcase", name=xml_text(names[position]), classname=classname)
        tally["tests"] += 1
        result = results[position]
        if result == "fail":
            reason = xml_text(reasons[position])
            score = scores[position]
            detail = reason + (f"\nscore: {score}" if score is not None and score == score else "")
            ET.SubElement(case, "failure", message=_message(reason or "failed"), type="fail").text = detail
            tally["failures"] += 1
        elif result == "error" or (result is None and statuses[position] == "error"):
            text = xml_text(errors[position] if result == "error" else row_errors[position]) or "error"
            ET.SubElement(case, "error", message=_message(text), type="error").text = text
            tally["errors"] += 1
        elif result is None:
            ET.SubElement(case, "skipped", message="not asked for this item")
            tally["skipped"] += 1
    for name, value in tally.items():
        suite.set(name, str(value))
    return suite


def _regression_suite(verdicts: list, baseline: str, title: str) -> ET.Element:
    suite = ET.Element("testsuite", name=xml_text(f"regression against {baseline}"))
    failures = 0
    for v in verdicts:
        case = ET.SubElement(
            suite,
            "testcase",
            name=xml_text(v.evaluator),
            classname=xml_text(f"evalkit.{_dotless(title)}.regression"),
        )
        if v.regression:
            from evalkit.analysis.regression_gate import gate_line

            line = xml_text(gate_line(v, baseline))
            ET.SubElement(case, "failure", message=_message(line), type="regression").text = line
            failures += 1
        elif v.kind == "too few pairs":
            ET.SubElement(case, "skipped", message=xml_text(v.test_text()))
    suite.set("tests", str(len(verdicts)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(sum(v.kind == "too few pairs" for v in verdicts)))
    return suite


def junit_tree(
    frame: pd.DataFrame, *, title: str, verdicts: list | None = None, baseline: str | None = None
) -> ET.ElementTree:
    """The JUnit document of a scored case table (see the module docstring)."""
    prompts = column_texts(frame, "prompt", "")
    names = [_case_name(frame, i, prompts) for i in range(len(frame))]
    root = ET.Element("testsuites", name=xml_text(f"evalkit: {title}"))
    for ev in scored_evaluators(frame):
        root.append(_suite(frame, ev, title, names))
    if verdicts is not None:
        root.append(_regression_suite(verdicts, baseline or "the baseline", title))
    for name in ("tests", "failures", "errors"):
        root.set(name, str(sum(int(s.get(name)) for s in root)))
    return ET.ElementTree(root)


def write_junit(
    frame: pd.DataFrame,
    path: str | os.PathLike,
    *,
    title: str,
    verdicts: list | None = None,
    baseline: str | None = None,
) -> None:
    """Write :func:`junit_tree` to ``path`` (UTF-8, with the XML declaration), atomically."""
    tree = junit_tree(frame, title=title, verdicts=verdicts, baseline=baseline)
    ET.indent(tree)
    with atomic_write(path, "wb", encoding=None) as handle:
        tree.write(handle, encoding="utf-8", xml_declaration=True)
