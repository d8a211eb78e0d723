"""Property tests: the Markdown summary and the JUnit file with generated hostile values everywhere.

Prompts, responses, reasons, errors, evaluator names and the title are drawn from HTML/XML specials, control
characters, lone surrogates, ``$`` math, table pipes, backticks, CSV formula starts, line breaks and very long
text. The JUnit lines must parse as XML (``xml.etree``) and carry every value faithfully (modulo the
documented ``\\xNN`` / ``\\uNNNN`` escapes of what XML 1.0 forbids); the Markdown must hold no HTML tag and no
math delimiter, and every table row must keep its table's columns.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.reporting.ci_summary import summary_markdown
from evalkit.reporting.junit import junit_lines, xml_text

_PIECES = st.sampled_from(
    [
        "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "</failure>", "]]>", "<!--", "&", "&amp;",
        '"', "'", "$", "$$", "$x^2$", "$$\\sum$$", "$`a`$", "\\$", "|", "\\|", "`", "```", "=cmd|' /C calc'!A0",
        "+1", "-1", "@octocat", "#12", "https://evil.example", "[a](b)", "![i](x)", "*", "_", "~", "\\", "\n",
        "\r", "\r\n", "\t", "\x00", "\x07", "\x1b[31m", "\x0b", "\u2028", "\u202e", "\ud800", "\udfff",
        "\ufffe", "\uffff", " ", "x" * 700,
    ]
)  # fmt: skip
HOSTILE = st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12).map("".join)
RESULTS = st.sampled_from(["pass", "fail", "error", None])


def table(rows: list[tuple], names: list[str]) -> pd.DataFrame:
    """A scored case table: each row ``(prompt, response, [(result, reason, error) per evaluator])``."""
    n = len(rows)
    data: dict = {
        "item": list(range(n)),
        "turn": pd.array([pd.NA] * n, dtype="Int64"),
        "prompt": [r[0] for r in rows],
        "response": [r[1] for r in rows],
    }
    statuses = []
    for row in rows:
        results = [c[0] for c in row[2]]
        statuses.append("partial" if "error" in results else "fail" if "fail" in results else "pass")
    data["status"] = statuses
    scored = []
    for index, name in enumerate(names):
        key = f"ev{index}"
        data[key] = [1.0 if r[2][index][0] == "pass" else 0.0 for r in rows]
        data[f"{key}_result"] = [r[2][index][0] for r in rows]
        data[f"{key}_reason"] = [r[2][index][1] for r in rows]
        data[f"{key}_error"] = [r[2][index][2] if r[2][index][0] == "error" else None for r in rows]
        scored.append({"name": name, "key": key, "score_field": key})
    df = pd.DataFrame(data)
    df.attrs["evalkit"] = {"scored": scored, "document": {}}
    return df


@st.composite
def runs(draw):
    names = draw(st.lists(HOSTILE.filter(lambda s: s.strip()), min_size=1, max_size=3, unique=True))
    evaluation = st.tuples(RESULTS, HOSTILE, HOSTILE)
    rows = draw(
        st.lists(
            st.tuples(HOSTILE, HOSTILE, st.lists(evaluation, min_size=len(names), max_size=len(names))),
            min_size=1,
            max_size=6,
        )
    )
    return table(rows, names), names, draw(HOSTILE)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_junit_parses_and_keeps_every_value(run):
    frame, names, title = run
    text = "\n".join(junit_lines(frame, title=title))
    text.encode("utf-8")  # no lone surrogate left: the file can be written
    root = ET.fromstring(text)
    assert root.get("name") == xml_text(f"evalkit: {title}")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [xml_text(n) for n in names]
    for index, suite in enumerate(suites):
        cases = suite.findall("testcase")
        assert len(cases) == len(frame)
        for position, case in enumerate(cases):
            prompt = " ".join(str(frame["prompt"].iloc[position]).split())[:80]
            assert case.get("name") == xml_text(
                f"item {position}: {prompt}" if prompt else f"item {position}"
            )
            result = frame[f"ev{index}_result"].iloc[position]
            if result == "fail":
                reason = frame[f"ev{index}_reason"].iloc[position]
                assert case.find("failure").text == xml_text(reason) + "\nscore: 0.0"
            elif result == "error":
                error = xml_text(frame[f"ev{index}_error"].iloc[position]) or "error"
                assert (case.find("error").text or "") == error
            elif result is None:
                assert case.find("skipped") is not None
            else:
                assert list(case) == []


_LIVE_PIPE = re.compile(r"\\.|\|")


def _cells(row: str) -> int:
    """The number of live ``|`` in a table row (a backslash escapes the next character)."""
    return sum(1 for m in _LIVE_PIPE.finditer(row) if m.group() == "|")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_markdown_summary_has_no_html_no_math_and_whole_table_rows(run):
    frame, _names, title = run
    text = summary_markdown(frame, title=title, report="out/report.html")
    assert "<" not in text  # no tag can open
    assert "$" not in text  # no $...$, $$...$$ or $`...`$ math
    assert "\r" not in text and "\x00" not in text
    header = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        if header is None:
            header = _cells(line)
        assert _cells(line) == header, line
        assert line.endswith("|")
    for dollars in ("$x$", "$$x$$", "$`x`$"):  # math is shown as typed, as entities
        assert "&#36;" in summary_markdown(frame, title=dollars, report="r")
