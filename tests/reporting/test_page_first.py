"""The first block of report.html (evalkit.reporting.page_first) and the bytes its data is written as
(evalkit.reporting.inline.script_safe_bytes): the same values as the whole data, escaped the same way."""

from __future__ import annotations

import json
import re

import numpy as np

from evalkit.reporting.html_page import write_html
from evalkit.reporting.inline import script_safe_bytes, script_safe_json
from evalkit.reporting.page_first import FIRST_ROWS
from tests.reporting.test_reports import XSS_SCRIPT, big_table, embedded_data, scored_table

FIRST = re.compile(rb'<script type="application/json" id="evalkit-first">(.*?)</script>', re.S)

HOSTILE = [
    XSS_SCRIPT,
    "</script><script>alert(1)</script>",
    "<!-- a & b > c -->",
    "line\u2028separator\u2029paragraph",
    "lone \udcff surrogate",
    2**80,
    -(2**70),
    np.float64(0.25),
    np.int64(7),
    "\u202eevil",
    {"nested": ["<b>", None, True, 1.5e-7]},
]


def _plain(value):
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value.item() if hasattr(value, "item") else value


def test_script_safe_bytes_means_what_script_safe_json_means():
    for value in HOSTILE + [HOSTILE]:
        raw = script_safe_bytes([value])
        for needle in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()):
            assert needle not in raw, (value, needle)
        expected = script_safe_json([_plain(value)]).encode("utf-8", "backslashreplace")
        assert json.loads(raw.decode("utf-8")) == json.loads(expected)


def test_first_block_is_the_first_rows_of_the_whole_data(tmp_path):
    path = tmp_path / "report.html"
    write_html(big_table(3000), path)
    raw = path.read_bytes()
    first = json.loads(FIRST.search(raw).group(1))
    whole = embedded_data(raw)
    assert first["rows"] == whole["rows"] == 3000 and first["first"] == FIRST_ROWS
    assert {k: v for k, v in first.items() if k not in ("first", "tags", "columns")} == {
        k: v for k, v in whole.items() if k != "columns"
    }
    for name, values in first["columns"].items():
        column = whole["columns"][name]
        if isinstance(column, dict):  # compacted (page.compact): expand as the page's script does
            column = (
                [column["v"]] * column["n"]
                if column["k"] == "const"
                else [column["v"][i] for i in column["i"]]
            )
        assert values == column[:FIRST_ROWS], name
    # the first block comes first, before the whole data, and the table's script between them
    assert (
        raw.index(b'id="evalkit-first"')
        < raw.index(b"window.EvalkitPage = ")
        < raw.index(b'id="evalkit-data"')
    )


def test_first_block_lists_every_tag_and_escapes_hostile_text(tmp_path):
    df = scored_table()
    path = tmp_path / "report.html"
    write_html(df, path)
    block = FIRST.search(path.read_bytes()).group(1)
    assert b"<" not in block and b">" not in block
    first = json.loads(block)
    assert first["columns"]["prompt"][0] == XSS_SCRIPT
    whole_tags = embedded_data(path.read_bytes())["columns"].get("tags") or []
    assert first["tags"] == sorted({t for row in whole_tags if row for t in row})
