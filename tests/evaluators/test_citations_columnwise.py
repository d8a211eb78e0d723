"""Citations scores a whole column in one regex pass: each row counts exactly what it counts alone.

The responses are joined with NUL for the scan, so these rows are chosen to tempt a match across a row
boundary (a marker opened at the end of one row and closed at the start of the next), and a response that
holds a NUL itself must still be read as it is (row by row, with the plain patterns).
"""

from __future__ import annotations

import pandas as pd

from evalkit.evaluators.deterministic.citations import CITATION_FORMATS, Citations

#: (response, count with every style): each row alone; next to each other they must not combine.
ROWS = [
    ("Opened at the end 【1:0†doc", 0),
    ("】 closed here, [2]", 1),
    ("a label [left open", 0),
    ("closed](https://contoso.com/x) later", 0),  # a URL after "](" is a target, not bare
    ("![logo](https://contoso.com/logo.png) [3](https://contoso.com/3)", 1),
    ("see (", 0),
    ("[4] and https://contoso.com/3)", 2),
    ("", 0),
    ("[1] [1](https://a.example) [t](https://a.example) https://b.example.", 2),
    ("【5†x】【5:2†y】 [05]", 1),
    ("plain text", 0),
]


def scored(responses: list[str], **options) -> pd.DataFrame:
    rows = pd.DataFrame({"response": responses, "citations": [[] for _ in responses]})
    return Citations().score(rows, [options] * len(responses))


def test_rows_scored_together_count_what_each_counts_alone():
    responses = [text for text, _ in ROWS]
    together = scored(responses)
    assert together["score"].tolist() == [n for _, n in ROWS]
    for fmt in CITATION_FORMATS:
        together = scored(responses, citation_format=fmt)
        alone = [scored([text], citation_format=fmt).iloc[0] for text in responses]
        assert together["score"].tolist() == [row["score"] for row in alone], fmt
        assert together["details"].tolist() == [row["details"] for row in alone], fmt


def test_a_response_holding_nul_is_read_as_it_is():
    # NUL is the scan's row separator; inside a response it is ordinary text, even inside a marker.
    responses = ["【1:0†part\x00two】 [2]", "[3]\x00[4]", "【9†x"]
    out = scored(responses)
    assert out["score"].tolist() == [2, 2, 0]
    assert out["details"].iloc[1] == {"format": "mixed", "citations": [{"index": 3}, {"index": 4}]}


def test_passes_of_a_few_rows_give_the_same_results(monkeypatch):
    from evalkit.evaluators.deterministic import citations

    responses = [text for text, _ in ROWS] * 3 + ["[7]\x00"]  # the last pass holds a NUL
    whole = scored(responses)
    monkeypatch.setattr(citations, "_PASS_ROWS", 4)
    split = scored(responses)
    assert split["score"].tolist() == whole["score"].tolist() == [n for _, n in ROWS] * 3 + [1]
    assert split["details"].tolist() == whole["details"].tolist()
