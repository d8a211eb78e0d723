"""Tests for ExactMatch, PartialMatch and Citations: hand-computed scores, options, errors, the tokeniser.

Every expected number is worked out in a comment next to the assertion. The tokeniser tests compare the
numpy tokeniser with the documented definition (``re.findall(r"\\w+", text.lower())`` and a Counter
intersection) on inputs chosen to break a byte-level implementation: non-ASCII word and non-word
characters, lower-casing that changes length, NUL, lone surrogates and tokens of every length up to 90 bytes.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from evalkit.evaluators.base import RESULT_COLUMNS
from evalkit.evaluators.deterministic import tokens
from evalkit.evaluators.deterministic.citations import Citations
from evalkit.evaluators.deterministic.matching import ExactMatch, PartialMatch
from evalkit.evaluators.registry import TEXT_EVALUATORS

CONFIG_ERROR = "evaluatorConfigurationError"


def frame(responses, expected=None, citations=None, index=None) -> pd.DataFrame:
    """A case table slice: ``expected_response`` defaults to "" and ``citations`` to empty lists."""
    n = len(responses)
    return pd.DataFrame(
        {
            "response": list(responses),
            "expected_response": list(expected) if expected is not None else [""] * n,
            "citations": list(citations) if citations is not None else [[] for _ in range(n)],
        },
        index=index,
    )


def run(evaluator, responses, expected=None, configs=None, citations=None, index=None) -> pd.DataFrame:
    rows = frame(responses, expected, citations, index)
    out = evaluator.score(rows, list(configs) if configs is not None else [{} for _ in responses])
    assert list(out.columns) == list(RESULT_COLUMNS)
    assert out.index.equals(rows.index)
    return out


def one(evaluator, response, expected="", citations=None, **options) -> dict:
    """Score a single row with ``options``; the row of the result frame as a dict."""
    out = run(evaluator, [response], [expected], [options], None if citations is None else [citations])
    return out.iloc[0].to_dict()


# ------------------------------------------------------------------------------------------------------------
# ExactMatch


def test_exact_match_contract():
    ev = ExactMatch()
    assert (ev.name, ev.key, ev.score_field, ev.has_threshold, ev.requires, ev.is_llm) == (
        "ExactMatch",
        "exactMatch",
        "match",
        False,
        ("expected_response",),
        False,
    )


def test_exact_match_is_case_sensitive_by_default():
    # The seed documents case_sensitive defaulting to true: "Paris " (trimmed "Paris") differs from "paris".
    row = one(ExactMatch(), "Paris ", "paris")
    assert row["score"] == False  # noqa: E712 - numpy bool
    assert row["result"] == "fail"
    assert row["reason"] == "Response differs from expected_response (case-sensitive comparison)"
    assert math.isnan(row["threshold"])


def test_exact_match_case_insensitive_when_asked():
    row = one(ExactMatch(), "Paris ", "paris", case_sensitive=False)
    assert (row["score"], row["result"]) == (True, "pass")
    assert row["reason"] == "Exact match (case-insensitive comparison)"


def test_exact_match_trims_both_sides_but_keeps_inner_whitespace():
    out = run(ExactMatch(), ["  Paris\n", "Paris", "New  York"], ["Paris", "\tParis  ", "New York"])
    assert out["score"].tolist() == [True, True, False]
    assert out["result"].tolist() == ["pass", "pass", "fail"]
    assert out["reason"].iloc[0] == "Exact match (case-sensitive comparison)"


def test_exact_match_case_insensitive_uses_casefold():
    # "straße".lower() is unchanged, so only casefold makes it equal to "STRASSE".
    assert one(ExactMatch(), "STRASSE", "straße", case_sensitive=False)["result"] == "pass"
    assert one(ExactMatch(), "STRASSE", "straße")["result"] == "fail"


def test_exact_match_wrong_typed_option_errors_only_its_rows():
    out = run(ExactMatch(), ["a", "a"], ["a", "a"], [{"case_sensitive": "no"}, {}])
    bad, good = out.iloc[0], out.iloc[1]
    assert (bad["result"], bad["code"]) == ("error", CONFIG_ERROR)
    assert "case_sensitive" in bad["error"] and "'no'" in bad["error"]
    assert bad["reason"] is None and bad["details"] is None and math.isnan(bad["score"])
    assert (good["score"], good["result"], good["error"], good["code"]) == (True, "pass", None, None)


# ------------------------------------------------------------------------------------------------------------
# PartialMatch


def test_partial_match_contract():
    ev = PartialMatch()
    assert (ev.name, ev.key, ev.score_field, ev.has_threshold, ev.requires, ev.is_llm) == (
        "PartialMatch",
        "partialMatch",
        "score",
        True,
        ("expected_response",),
        False,
    )


def test_partial_match_hand_computed_f1():
    # tokens [the, cat, sat] vs [the, cat]: overlap 2, P = 2/3, R = 2/2, F1 = 2PR/(P+R) = (4/3)/(5/3) = 0.8
    row = one(PartialMatch(), "The cat sat.", "the cat")
    assert row["score"] == pytest.approx(0.8)
    assert row["reason"] == "F1 0.800 (precision 0.667, recall 1.000)"
    assert (row["result"], row["threshold"]) == ("pass", 0.5)


def test_partial_match_reason_format_and_full_precision_score():
    # [a, b] vs [a]: P = 1/2, R = 1, F1 = 1/(3/2) = 2/3, kept unrounded in the score.
    row = one(PartialMatch(), "a b", "a")
    assert row["score"] == pytest.approx(2 / 3, abs=1e-15)
    assert row["reason"] == "F1 0.667 (precision 0.500, recall 1.000)"


def test_partial_match_counts_repeated_tokens_as_a_multiset():
    # [a, a, a] vs [a]: the multisets share one "a": P = 1/3, R = 1, F1 = (2/3)/(4/3) = 0.5
    row = one(PartialMatch(), "a a a", "a")
    assert row["score"] == pytest.approx(0.5)
    assert row["reason"] == "F1 0.500 (precision 0.333, recall 1.000)"
    # [a, a, b] vs [a, a, a]: overlap min(2, 3) + 0 = 2, P = 2/3, R = 2/3, F1 = 2/3
    assert one(PartialMatch(), "a a b", "a a a")["score"] == pytest.approx(2 / 3)


def test_partial_match_punctuation_splits_and_is_dropped():
    # "don't" -> [don, t]: equal to "don t", nothing in common with "dont".
    assert one(PartialMatch(), "don't", "don t")["score"] == 1.0
    assert one(PartialMatch(), "don't", "dont")["score"] == 0.0
    # "e-mail, please!" -> [e, mail, please]; "email please" -> [email, please]: overlap 1,
    # P = 1/3, R = 1/2, F1 = 2 * 1 / (3 + 2) = 0.4
    assert one(PartialMatch(), "e-mail, please!", "email please")["score"] == pytest.approx(0.4)
    # underscores and digits are word characters: [snake_case, v2] vs [snake_case, v2]
    assert one(PartialMatch(), "snake_case v2", "(snake_case) v2.")["score"] == 1.0


def test_partial_match_case_handling():
    assert one(PartialMatch(), "The Cat", "the cat")["score"] == 1.0
    # case-sensitive: [The, Cat] vs [the, cat] share nothing
    assert one(PartialMatch(), "The Cat", "the cat", case_sensitive=True)["score"] == 0.0
    # [The, cat] vs [the, cat]: overlap 1, P = R = 1/2, F1 = 0.5
    assert one(PartialMatch(), "The cat", "the cat", case_sensitive=True)["score"] == pytest.approx(0.5)
    # str.lower on non-ASCII letters: [école, ÉTÉ] lowers to [école, été]
    assert one(PartialMatch(), "ÉCOLE, ÉTÉ", "école été")["score"] == 1.0


def test_partial_match_threshold_boundary_passes():
    # F1 exactly 0.5 against the default threshold 0.5: score >= threshold passes.
    assert one(PartialMatch(), "a a a", "a")["result"] == "pass"
    assert one(PartialMatch(), "a a a", "a", threshold=0.51)["result"] == "fail"
    row = one(PartialMatch(), "The cat sat.", "the cat", threshold=0.8)
    assert (row["result"], row["threshold"]) == ("pass", 0.8)
    assert one(PartialMatch(), "The cat sat.", "the cat", threshold=0.81)["result"] == "fail"
    assert one(PartialMatch(), "x", "y", threshold=0)["result"] == "pass"  # F1 0.0 >= 0
    assert one(PartialMatch(), "x", "x", threshold=1)["result"] == "pass"  # F1 1.0 >= 1


def test_partial_match_empty_token_lists():
    both = one(PartialMatch(), "...", "!?")
    assert both["score"] == 1.0 and both["reason"] == "F1 1.000 (precision 1.000, recall 1.000)"
    no_expected = one(PartialMatch(), "words here", "--")
    assert no_expected["score"] == 0.0 and no_expected["result"] == "fail"
    assert no_expected["reason"] == "F1 0.000 (precision 0.000, recall 0.000)"
    assert one(PartialMatch(), "", "words")["score"] == 0.0


@pytest.mark.parametrize(
    "options, option",
    [
        ({"threshold": "high"}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"threshold": -0.1}, "threshold"),
        ({"threshold": True}, "threshold"),
        ({"case_sensitive": 1}, "case_sensitive"),
    ],
)
def test_partial_match_configuration_errors(options, option):
    row = one(PartialMatch(), "a", "a", **options)
    assert (row["result"], row["code"]) == ("error", CONFIG_ERROR)
    assert f"'{option}'" in row["error"] and "PartialMatch" in row["error"]
    assert math.isnan(row["score"]) and math.isnan(row["threshold"])


def test_partial_match_groups_rows_by_options_and_keeps_the_index():
    configs = [{}, {"case_sensitive": True}, {"threshold": 0.9}, {"threshold": "high"}, {}]
    out = run(
        PartialMatch(),
        ["The Cat", "The Cat", "a b", "a", "a a a"],
        ["the cat", "the cat", "a", "a", "a"],
        configs,
        index=[10, 3, 7, 1, 99],
    )
    assert out.loc[10, "score"] == 1.0 and out.loc[3, "score"] == 0.0
    assert (out.loc[7, "result"], out.loc[7, "threshold"]) == ("fail", 0.9)  # 2/3 < 0.9
    assert out.loc[1, "result"] == "error"
    assert out.loc[99, "score"] == pytest.approx(0.5)
    assert out["threshold"].tolist()[:3] == [0.5, 0.5, 0.9]


def test_partial_match_option_groups_keep_bool_and_int_apart():
    # {"threshold": 1} is valid, {"threshold": True} is not, although 1 == True and hash(1) == hash(True).
    out = run(PartialMatch(), ["a", "a"], ["a", "a"], [{"threshold": 1}, {"threshold": True}])
    assert out["result"].tolist() == ["pass", "error"]


# The tokeniser against its definition ------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_PIECES = [
    *"aAbBzZ09_ -'.,;\n\t\x00",
    "İ",  # lower() gives "i" + U+0307 (a combining mark, not \w): one token becomes two
    "Σ",  # final sigma: lower() depends on the neighbours
    "ΑΣ",
    "é",
    "e\u0301",  # combining acute accent splits a word
    "ß",
    "ẞ",
    "²",
    "٣",  # Arabic-Indic digit
    "中文",
    "😀",
    "\ud800",  # lone surrogate
    "ǅ",  # titlecase letter
    "Ⅻ",
    "ﬃ",
    "【1:0†d】",
    "“quoted”",
    "abcdefgh",  # exactly one 8-byte chunk
    "abcdefghi",
    "ABCDEFGHIJKLMNOPQ",
    "éééééééé",  # 16 bytes of two-byte characters
    "x" * 63,
    "x" * 64,
    "x" * 65,
]
_LONG = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz012345"
_WORDS = [_LONG[:k] for k in range(1, 91)] + [_LONG[:k] + "é" + _LONG[:3] for k in range(1, 70, 7)]


def _reference(response: str, expected: str, lower: bool) -> tuple[int, int, int]:
    if lower:
        response, expected = response.lower(), expected.lower()
    a, b = Counter(_WORD.findall(response)), Counter(_WORD.findall(expected))
    return sum((a & b).values()), sum(a.values()), sum(b.values())


def _assert_like_reference(responses, expected, lower):
    overlap, n_resp, n_exp = tokens.token_overlap(responses, expected, lower)
    got = list(zip(overlap.tolist(), n_resp.tolist(), n_exp.tolist(), strict=True))
    want = [_reference(r, e, lower) for r, e in zip(responses, expected, strict=True)]
    assert got == want


def _random_texts(rng: random.Random, pieces: list[str], n: int, size: int, sep: str = "") -> list[str]:
    return [sep.join(rng.choice(pieces) for _ in range(rng.randint(0, size))) for _ in range(n)]


@pytest.mark.parametrize("lower", [True, False])
def test_tokeniser_matches_findall_on_tricky_unicode(lower):
    rng = random.Random(20240611)
    for _ in range(40):
        n = rng.randint(1, 25)
        _assert_like_reference(_random_texts(rng, _PIECES, n, 12), _random_texts(rng, _PIECES, n, 12), lower)


@pytest.mark.parametrize("lower", [True, False])
def test_tokeniser_matches_findall_on_long_tokens_sharing_prefixes(lower):
    rng = random.Random(7)
    for _ in range(40):
        n = rng.randint(1, 25)
        _assert_like_reference(
            _random_texts(rng, _WORDS, n, 8, " "), _random_texts(rng, _WORDS, n, 8, " "), lower
        )


def test_tokeniser_small_passes_and_code_renumbering(monkeypatch):
    # Force many tiny passes and the renumbering of combined chunk codes; results must not change.
    monkeypatch.setattr(tokens, "_PASS_BYTES", 40)
    monkeypatch.setattr(tokens, "_COMBINE_LIMIT", 1 << 8)
    rng = random.Random(3)
    for _ in range(20):
        n = rng.randint(1, 30)
        _assert_like_reference(
            _random_texts(rng, _WORDS + _PIECES, n, 8, " "),
            _random_texts(rng, _WORDS + _PIECES, n, 8, " "),
            True,
        )


def test_tokeniser_known_cases():
    # "İ".lower() is "i̇" (i + U+0307), so "İstanbul" -> [i, stanbul]; "istanbul" shares no token.
    assert tokens.token_overlap(["İstanbul"], ["i stanbul"], True)[0].tolist() == [2]
    assert tokens.token_overlap(["a\x00b"], ["a b"], True)[0].tolist() == [2]  # NUL separates like a space
    assert [x.tolist() for x in tokens.token_overlap([], [], True)] == [[], [], []]


# ------------------------------------------------------------------------------------------------------------
# Citations


def test_citations_contract():
    ev = Citations()
    assert (ev.name, ev.key, ev.score_field, ev.has_threshold, ev.requires, ev.is_llm) == (
        "Citations",
        "citations",
        "count",
        True,
        (),
        False,
    )
    assert TEXT_EVALUATORS == {"ExactMatch": ExactMatch, "PartialMatch": PartialMatch, "Citations": Citations}


def test_citations_default_format_counts_every_style():
    # Seed over upstream: with no citation_format the two 【】 markers and the bracket [3] all count.
    row = one(Citations(), "See 【1:0†doc】 and 【2:3†web page, p. 4】 and [3].")
    assert (row["score"], row["result"], row["threshold"]) == (3, "pass", 1)
    assert row["details"] == {"format": "mixed", "citations": [{"index": 1}, {"index": 2}, {"index": 3}]}
    assert row["reason"] == "Found 3 citations (mixed); at least 1 required"


def test_citations_oai_unicode_markers():
    # 【8†x】 (no ":n") counts; repeated index 7 counts once; 【0:1†x】 is not a 1-based index; 【x】 and 【9:0】
    # (no †) are no markers; the text after † may be empty.
    response = "a【7:0†src】 b【8†other】 c【0:1†x】 d【x】 e【12:4†】 f【7:2†again】 g【9:0】"
    row = one(Citations(), response, citation_format="oai_unicode")
    assert row["score"] == 3
    assert [c["index"] for c in row["details"]["citations"]] == [7, 8, 12]


def test_citations_bracket_markers():
    # distinct single-integer brackets: 1, 2, 12 ([1] twice, "[1, 2]", "[^3]", "[0]" and "[a]" do not count);
    # [4](http://x) contains the bracket marker [4] and counts in bracket mode (documented choice).
    response = "See [1], [2] and [12], again [1]; not [1, 2], [^3], [0] or [a]; link [4](http://x). 【5:0†d】"
    row = one(Citations(), response, citation_format="bracket")
    assert row["score"] == 4
    assert [c["index"] for c in row["details"]["citations"]] == [1, 2, 4, 12]
    assert one(Citations(), "[01] and [1]", citation_format="bracket")["score"] == 1  # both are citation 1


def test_citations_markdown_markers():
    # [1](http://a) and [2](doc.pdf "title") count; bare [3] and 【4:0†d】 do not; [1](...) again is index 1.
    response = 'See [1](http://a) and [2](doc.pdf "title"), plus [3] and 【4:0†d】 and [1](http://b).'
    row = one(Citations(), response, citation_format="markdown")
    assert row["score"] == 2
    assert row["details"]["format"] == "markdown"


def test_citations_mixed_deduplicates_across_formats():
    # [1], [1](http://x) and 【1:0†doc】 are all citation 1; [2] is the second: 2 distinct.
    row = one(Citations(), "See [1] and [1](http://x) and 【1:0†doc】 and [2]", citation_format="mixed")
    assert row["score"] == 2
    assert row["details"] == {"format": "mixed", "citations": [{"index": 1}, {"index": 2}]}
    assert one(Citations(), "[3](u) 【5:0†d】 [4]", citation_format="mixed")["score"] == 3


def test_citations_fill_text_and_source_from_the_recorded_citations():
    recorded = [
        {"index": 2, "text": "Returns within 30 days", "source": "https://contoso/policy"},
        {"index": 1, "source": "handbook.pdf"},  # no text: the key is omitted
        {"index": 1, "text": "a later duplicate is ignored"},
        {"index": 9, "text": "recorded but not cited"},
        "not a dict",
    ]
    row = one(Citations(), "Policy [2] and [1] and [3].", citations=recorded, citation_format="bracket")
    assert row["details"]["citations"] == [
        {"index": 1, "source": "handbook.pdf"},
        {"index": 2, "text": "Returns within 30 days", "source": "https://contoso/policy"},
        {"index": 3},
    ]
    assert row["score"] == 3  # the count comes from the response, not from the recorded list


def test_citations_recorded_index_read_back_as_string_or_numpy():
    recorded = np.array([{"index": "1", "text": "one"}, {"index": np.int64(2), "text": "two"}], dtype=object)
    row = one(Citations(), "[1] [2]", citations=recorded, citation_format="bracket")
    assert [c.get("text") for c in row["details"]["citations"]] == ["one", "two"]


def test_citations_none_found():
    row = one(Citations(), "No sources here.")
    assert (row["score"], row["result"]) == (0, "fail")
    assert row["details"] == {"format": "mixed", "citations": []}
    assert row["reason"] == "Found 0 citations (mixed); at least 1 required"


def test_citations_threshold_boundary():
    response = "[1] [2]"
    assert one(Citations(), response, citation_format="bracket", threshold=2)["result"] == "pass"  # 2 >= 2
    row = one(Citations(), response, citation_format="bracket", threshold=3)
    assert (row["result"], row["threshold"]) == ("fail", 3)
    assert row["reason"] == "Found 2 citations (bracket); at least 3 required"
    assert one(Citations(), "none", threshold=0)["result"] == "pass"  # 0 >= 0
    assert one(Citations(), "[1]", citation_format="bracket", threshold=2.0)["threshold"] == 2
    assert one(Citations(), "[1]", citation_format="bracket")["reason"] == (
        "Found 1 citation (bracket); at least 1 required"
    )


@pytest.mark.parametrize(
    "options, option",
    [
        ({"threshold": "high"}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"threshold": -1}, "threshold"),
        ({"threshold": False}, "threshold"),
        ({"citation_format": 3}, "citation_format"),
    ],
)
def test_citations_configuration_errors(options, option):
    row = one(Citations(), "[1]", **options)
    assert (row["result"], row["code"]) == ("error", CONFIG_ERROR)
    assert f"'{option}'" in row["error"]


def test_citations_non_string_format_lists_the_valid_ones():
    out = run(Citations(), ["[1]", "【1:0†d】"], configs=[{"citation_format": ["mixed"]}, {}])
    bad = out.iloc[0]
    assert (bad["result"], bad["code"]) == ("error", CONFIG_ERROR)
    for fmt in ("'inline'", "'oai_unicode'", "'bracket'", "'markdown'", "'mixed'"):
        assert fmt in bad["error"]
    assert bad["details"] is None and bad["reason"] is None
    assert (out.iloc[1]["result"], out.iloc[1]["score"]) == ("pass", 1)


def test_citations_rows_with_different_formats_in_one_call():
    response = "See [1] and [2](u) and 【3:0†d】"
    configs = [{"citation_format": f} for f in ("oai_unicode", "bracket", "markdown", "mixed")] + [{}]
    out = run(Citations(), [response] * 5, configs=configs, index=list("abcde"))
    # oai: {3}; bracket: {1, 2}; markdown: {2}; mixed: {1, 2, 3}; default (every style): {1, 2, 3}
    assert out["score"].tolist() == [1, 2, 1, 3, 3]
    assert [d["format"] for d in out["details"]] == [
        "oai_unicode",
        "bracket",
        "markdown",
        "mixed",
        "mixed",
    ]
    assert out["details"].iloc[1] is not out["details"].iloc[2]


# ------------------------------------------------------------------------------------------------------------
# Results entries against the upstream schema


def _schema_validator(upstream_schema: dict, definition: str):
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{definition}", "$defs": upstream_schema["$defs"]}
    )


def _entries(out: pd.DataFrame, field: str, with_threshold: bool) -> list[dict]:
    """The results.json entries as the results writer builds them (plain Python values)."""
    entries = []
    for row in out.to_dict("records"):
        if row["result"] == "error":
            entries.append(
                {"result": "error", "error": "Evaluator failed: " + row["error"], "code": row["code"]}
            )
            continue
        entry = {field: row["score"].item() if hasattr(row["score"], "item") else row["score"]}
        entry["result"] = row["result"]
        if with_threshold:
            entry["threshold"] = (
                row["threshold"].item() if hasattr(row["threshold"], "item") else row["threshold"]
            )
        entry["reason"] = row["reason"]
        entry.update(row["details"] or {})
        entries.append(entry)
    return entries


@pytest.mark.parametrize(
    "evaluator, definition, responses, configs",
    [
        (ExactMatch(), "ExactMatchScore", ["Paris", "paris", "x"], [{}, {}, {"case_sensitive": "x"}]),
        (
            PartialMatch(),
            "PartialMatchScore",
            ["The cat sat.", "", "x"],
            [{}, {"threshold": 1}, {"threshold": 2}],
        ),
        (
            Citations(),
            "CitationScore",
            ["[1](u) and 【2:0†d】", "none", "[1]"],
            [{"citation_format": "mixed"}, {}, {"citation_format": 3}],
        ),
    ],
)
def test_entries_validate_against_upstream_schema(upstream_schema, evaluator, definition, responses, configs):
    recorded = [[{"index": 1, "text": "t", "source": "s"}], [], []]
    out = run(evaluator, responses, ["Paris", "the cat", "x"], configs, recorded)
    entries = _entries(out, evaluator.score_field, evaluator.has_threshold)
    assert [e["result"] for e in entries][2] == "error"
    validator = _schema_validator(upstream_schema, definition)
    for entry in entries:
        errors = [e.message for e in validator.iter_errors(entry)]
        assert not errors, (entry, errors)


@pytest.mark.parametrize("evaluator", [ExactMatch(), PartialMatch(), Citations()])
def test_no_rows_and_mismatched_configs(evaluator):
    out = evaluator.score(frame([]), [])
    assert list(out.columns) == list(RESULT_COLUMNS) and len(out) == 0
    with pytest.raises(ValueError, match="2 option dicts for 1 rows"):
        evaluator.score(frame(["a"]), [{}, {}])
