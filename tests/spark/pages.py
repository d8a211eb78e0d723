"""A report page read back for comparison: its HTML less the embedded JSON, its figures decoded, and its item
data decoded with compact columns expanded (``{"k": "dict"}`` / ``{"k": "const"}``, as the page's script does)."""

from __future__ import annotations

import json
import re
from pathlib import Path

DATA = re.compile(r'<script type="application/json" id="evalkit-data">(.*?)</script>', re.S)
FIGURE = re.compile(r'<script type="application/json" id="(figure-[^"]+)">(.*?)</script>', re.S)


def expanded(column):
    """A column as the page's script expands it: a list with one value per row."""
    if isinstance(column, dict) and column.get("k") == "dict":
        return [column["v"][code] for code in column["i"]]
    if isinstance(column, dict) and column.get("k") == "const":
        return [column["v"]] * column["n"]
    return column


def page_contents(path: Path) -> dict:
    """``html`` (the page less its JSON), ``figures`` (by element id, decoded), ``meta`` and ``columns``."""
    text = path.read_text(encoding="utf-8")
    data = json.loads(DATA.search(text).group(1))
    columns = {name: expanded(values) for name, values in data.pop("columns").items()}
    figures = {m.group(1): json.loads(m.group(2)) for m in FIGURE.finditer(text)}
    return {"html": FIGURE.sub("", DATA.sub("", text)), "figures": figures, "meta": data, "columns": columns}


def compacted(path: Path) -> set[str]:
    """The names of the columns a page embeds in compact form."""
    data = json.loads(DATA.search(path.read_text(encoding="utf-8")).group(1))
    return {name for name, values in data["columns"].items() if isinstance(values, dict)}


def assert_same_page(got: Path, expected: Path) -> None:
    """The two pages show the same thing: same HTML, figures, item data (whatever the compact forms)."""
    a, b = page_contents(got), page_contents(expected)
    assert a["html"] == b["html"]
    assert a["figures"] == b["figures"]
    assert a["meta"] == b["meta"]
    assert list(a["columns"]) == list(b["columns"])
    for name, values in b["columns"].items():
        assert a["columns"][name] == values, name
