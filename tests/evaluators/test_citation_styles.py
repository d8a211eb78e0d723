"""Citations as the evaluator reference (seed 001) describes them: [1], [2] or hyperlink-style citations.

Seed over upstream: with no ``citation_format`` every style counts (distinct sources); ``inline`` (used by
four of upstream's own samples) is accepted; any other string reads as the default with one warning per run.
"""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest

import evalkit
from evalkit.evaluators.deterministic.citations import CITATION_FORMATS, Citations


def score(responses, configs):
    rows = pd.DataFrame({"response": list(responses), "citations": [[] for _ in responses]})
    return Citations().score(rows, list(configs))


def count(response, **options) -> int:
    return int(score([response], [options])["score"].iloc[0])


def test_bracket_citations_count_without_a_format():
    # The seed's own example: "[1], [2]". Upstream's oai_unicode default counted 0 here.
    assert count("Returns within 30 days [1], exchanges within 60 [2].") == 2


def test_hyperlink_citations_count_without_a_format_and_under_markdown_and_mixed():
    response = "See the [return policy](https://contoso.com/returns) and [FAQ](https://contoso.com/faq)."
    assert count(response) == 2
    assert count(response, citation_format="markdown") == 2
    assert count(response, citation_format="mixed") == 2
    assert count(response, citation_format="inline") == 2
    assert count(response, citation_format="bracket") == 0
    assert count(response, citation_format="oai_unicode") == 0
    # an image is not a citation
    assert count("![logo](https://contoso.com/logo.png)") == 0


def test_bare_urls_count_without_a_format_and_under_inline_and_mixed():
    response = "Details: https://contoso.com/returns. Also see https://contoso.com/faq, please."
    assert count(response) == 2
    assert count(response, citation_format="inline") == 2
    assert count(response, citation_format="mixed") == 2
    assert count(response, citation_format="markdown") == 0
    row = score([response], [{}]).iloc[0]
    assert row["details"]["citations"] == [
        {"index": 1, "source": "https://contoso.com/returns"},  # trailing "." dropped
        {"index": 2, "source": "https://contoso.com/faq"},
    ]


def test_distinct_sources_are_counted_once():
    # [1] twice and 【1:0†d】 are citation 1; the link and the bare URL to the same page are one source; a URL
    # already given by the numbered link [2](https://b) is citation 2: 1, 2 and https://a -> 3 sources.
    response = "[1] [1] 【1:0†d】 [2](https://b) [policy](https://a) https://a and https://b"
    row = score([response], [{}]).iloc[0]
    assert row["score"] == 3
    assert row["details"] == {
        "format": "mixed",
        "citations": [{"index": 1}, {"index": 2}, {"index": 3, "source": "https://a", "text": "policy"}],
    }


def test_inline_counts_brackets_and_links_but_not_oai_markers():
    response = "Open enrollment [1] runs in November ([HR portal](https://contoso/hr)). 【2:0†benefits】"
    assert count(response, citation_format="inline") == 2
    assert count(response, citation_format="oai_unicode") == 1
    assert count(response) == 3


def test_unknown_format_reads_as_the_default_with_one_warning_per_run(caplog):
    responses = ["[1] [2]", "[a](https://x)", "【1:0†d】"]
    configs = [
        {"citation_format": "fancy"},
        {"citation_format": "fancy", "threshold": 2},
        {"citation_format": "APA"},
    ]
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        out = score(responses, configs)
    assert out["result"].tolist() == ["pass", "fail", "pass"]  # no error results
    assert out["score"].tolist() == [2, 1, 1]
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("evalkit")]
    assert len(warnings) == 1
    for word in ("'fancy'", "'APA'", *(f"'{f}'" for f in CITATION_FORMATS)):
        assert word in warnings[0]


@pytest.mark.parametrize("sample", ["hr_benefits_leave", "hr_onboarding_policies", "prompts_rag_grounding"])
def test_upstream_samples_with_inline_score_without_errors(reference, upstream_schema, sample):
    """Every upstream sample that uses citation_format "inline" (an error result per row before)."""
    import jsonschema

    df = evalkit.load(reference / f"m365-copilot-eval/samples/{sample}.json")
    asking = [i for i, m in enumerate(df["evaluators"]) if "Citations" in (m or {})]
    configs = [df["evaluators"].iloc[i]["Citations"] for i in asking]
    assert "inline" in {(c or {}).get("citation_format") for c in configs}
    rows = df.iloc[asking].copy()
    rows["response"] = "Submit it in the [HR portal](https://contoso/hr) [1], see https://contoso/faq."
    out = Citations().score(rows, configs)
    assert "error" not in set(out["result"])
    inline = [i for i, c in enumerate(configs) if (c or {}).get("citation_format") == "inline"]
    assert set(out["score"].iloc[inline]) == {3}  # [1], the hyperlink and the bare URL
    validator = jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/CitationScore", "$defs": upstream_schema["$defs"]}
    )
    for row in out.to_dict("records"):
        entry = {"count": int(row["score"]), "result": row["result"], "threshold": int(row["threshold"])}
        entry.update(row["details"])
        assert not list(validator.iter_errors(entry)), entry


def test_unknown_format_warning_names_the_document_and_the_item(tmp_path, caplog):
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"Citations": {}},
        "items": [
            {"prompt": "p", "response": "x [1]"},
            {
                "turns": [
                    {"prompt": "a", "response": "b"},
                    {
                        "prompt": "c",
                        "response": "[1]",
                        "evaluators": {"Citations": {"citation_format": "APA"}},
                    },
                ]
            },
        ],
    }
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        scored = evalkit.evaluate(evalkit.load(path), progress=False)
    assert scored["citations_result"].tolist() == ["pass", "fail", "pass"]
    (message,) = [r.getMessage() for r in caplog.records if r.name == "evalkit.evaluators.citations"]
    assert message.startswith(f"{path}: Citations: unknown citation_format 'APA' (items[1].turns[1])")
