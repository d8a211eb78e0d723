"""Tests for the RetrievalQuery / RetrievalResult evaluators: every diagnostic code, hand-computed.

The last tests build the results.json entry for a few rows and validate it against the upstream schema's
``RetrievalQueryScore`` / ``RetrievalResultScore`` definitions, so a shape drift (an extra key in a matched
item, a wrong diagnostic code) fails here rather than in a consumer.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.evaluators.base import RESULT_COLUMNS
from evalkit.evaluators.deterministic.retrieval import RETRIEVAL_EVALUATORS, RetrievalQuery, RetrievalResult

ODSP = "OneDriveAndSharePoint"


def execution(capability=ODSP, status="success", queries=(), hits=()):
    """One execution in the upstream Diagnostics.retrieval_executions shape."""
    return {
        "capability": capability,
        "status": status,
        "totalResultCount": len(hits),
        "queries": [{"queryString": q, "filterExpression": None} for q in queries],
        "retrievalHits": list(hits),
    }


def hit(rank, url, *texts):
    return {"rank": rank, "webUrl": url, "extracts": [{"text": t} for t in texts]}


def score(evaluator, executions_per_row, configs, index=None):
    rows = pd.DataFrame({"retrieval_executions": executions_per_row}, index=index)
    return evaluator.score(rows, configs)


def one(evaluator, executions, config):
    """Score a single row and return it as a dict (columns of RESULT_COLUMNS)."""
    return score(evaluator, [executions], [config]).iloc[0].to_dict()


# ------------------------------------------------------------------------------------------------------------
# RetrievalQuery


def query(executions, **config):
    return one(RetrievalQuery(), executions, config)


def test_query_pass_is_case_insensitive():
    ex = [execution(queries=["Mortgage JOINT Check threshold"])]
    out = query(
        ex, capability=ODSP, selector="MORTGAGE", includes=["joint check"], excludes=["filetype:onenote"]
    )
    assert (out["score"], out["result"], out["threshold"]) == (1.0, "pass", 1.0)
    assert out["details"] == {
        "diagnostic_code": "pass",
        "matched_queries": ["Mortgage JOINT Check threshold"],
        "includes_missing": [],
        "excludes_found": [],
    }
    assert out["error"] is None and out["code"] is None
    assert "Mortgage JOINT Check threshold" in out["reason"]


def test_query_pass_without_terms_needs_only_the_selector():
    out = query([execution(queries=["q4 sales report"])], capability=ODSP, selector="sales")
    assert out["result"] == "pass" and out["details"]["diagnostic_code"] == "pass"


def test_query_no_execution_of_capability():
    # The matching query belongs to another capability: capability scoping must ignore it.
    ex = [execution(capability="Email", queries=["mortgage joint check"])]
    out = query(ex, capability=ODSP, selector="mortgage")
    assert (out["score"], out["result"]) == (0.0, "fail")
    assert out["details"]["diagnostic_code"] == "no_matching_query"
    assert out["details"]["matched_queries"] == []
    assert ODSP in out["reason"]


def test_query_capability_is_an_exact_match():
    ex = [execution(capability="onedriveandsharepoint", queries=["mortgage"])]
    out = query(ex, capability=ODSP, selector="mortgage")
    assert out["details"]["diagnostic_code"] == "no_matching_query"


def test_query_selector_not_in_any_query():
    ex = [execution(queries=["deductible options", None]), execution(queries=["homeshield"])]
    out = query(ex, capability=ODSP, selector="mortgage", includes=["mortgage"])
    assert out["details"]["diagnostic_code"] == "no_matching_query"
    assert out["details"]["includes_missing"] == []
    assert "'mortgage'" in out["reason"]


def test_query_filter_expression_is_not_searched():
    ex = [
        {
            "capability": ODSP,
            "status": "success",
            "queries": [{"queryString": "x", "filterExpression": "mortgage"}],
        }
    ]
    assert (
        query(ex, capability=ODSP, selector="mortgage")["details"]["diagnostic_code"] == "no_matching_query"
    )


@pytest.mark.parametrize(
    ("includes", "excludes", "code", "missing", "found"),
    [
        (["MORTGAGE", "Payroll", "salary"], [], "required_terms_missing", ["Payroll", "salary"], []),
        ([], ["filetype:onenote", "budget"], "excluded_terms_found", [], ["filetype:onenote"]),
        (["payroll"], ["ONENOTE"], "mixed_term_failure", ["payroll"], ["ONENOTE"]),
    ],
)
def test_query_term_failures(includes, excludes, code, missing, found):
    ex = [execution(queries=["Mortgage joint check FileType:OneNote"])]
    out = query(ex, capability=ODSP, selector="mortgage", includes=includes, excludes=excludes)
    assert (out["score"], out["result"], out["threshold"]) == (0.0, "fail", 1.0)
    assert out["details"] == {
        "diagnostic_code": code,
        "matched_queries": ["Mortgage joint check FileType:OneNote"],
        "includes_missing": missing,
        "excludes_found": found,
    }
    for term in missing + found:
        assert repr(term) in out["reason"]


def test_query_passes_when_any_matched_query_is_clean():
    ex = [
        execution(queries=["claim filetype:onenote", "unrelated"]),
        execution(queries=["claim required information"]),
    ]
    out = query(ex, capability=ODSP, selector="CLAIM", includes=["information"], excludes=["onenote"])
    assert out["result"] == "pass"
    assert out["details"]["matched_queries"] == ["claim filetype:onenote", "claim required information"]
    assert out["details"]["includes_missing"] == [] and out["details"]["excludes_found"] == []


def test_query_details_describe_the_best_matched_query():
    # q1 lacks a and b; q2 lacks only b -> best is q2. Split terms (q3 = "a", q4 = "b") must not pass.
    ex = [execution(queries=["sel", "sel a", "sel a"])]
    out = query(ex, capability=ODSP, selector="sel", includes=["a", "b"])
    assert out["details"]["diagnostic_code"] == "required_terms_missing"
    assert out["details"]["includes_missing"] == ["b"]
    assert out["details"]["matched_queries"] == ["sel", "sel a"]  # listed once each

    split = query(
        [execution(queries=["sel a", "sel b"])], capability=ODSP, selector="sel", includes=["a", "b"]
    )
    assert split["result"] == "fail"
    assert split["details"]["includes_missing"] == ["b"]  # earliest of the equally good queries


def test_query_retrieval_failure_when_every_execution_failed():
    ex = [
        execution(status="error"),
        execution(status="Timeout"),
        execution(capability="Email", status="success"),
    ]
    out = query(ex, capability=ODSP, selector="mortgage")
    assert (out["score"], out["result"]) == (0.0, "fail")
    assert out["details"]["diagnostic_code"] == "retrieval_failure"
    assert "'Timeout'" in out["reason"] and "'error'" in out["reason"]


@pytest.mark.parametrize(
    "statuses",
    [["SUCCESS"], [None], ["error", "success"], ["error", None]],
    ids=["success-any-case", "null-status", "one-succeeded", "one-unknown"],
)
def test_query_no_retrieval_failure_unless_all_report_non_success(statuses):
    ex = [execution(status=s, queries=["deductible"]) for s in statuses]
    out = query(ex, capability=ODSP, selector="mortgage")
    assert out["details"]["diagnostic_code"] == "no_matching_query"


def test_query_failed_execution_of_another_capability_is_ignored():
    ex = [execution(capability="Email", status="error")]
    assert query(ex, capability=ODSP, selector="x")["details"]["diagnostic_code"] == "no_matching_query"


def test_query_matching_query_wins_over_failure_status():
    ex = [execution(status="error", queries=["mortgage joint check"])]
    out = query(ex, capability=ODSP, selector="mortgage", includes=["joint check"])
    assert out["details"]["diagnostic_code"] == "pass"


@pytest.mark.parametrize("executions", [[], None, math.nan], ids=["empty", "none", "nan"])
def test_query_without_executions(executions):
    out = query(executions, capability=ODSP, selector="mortgage")
    assert out["details"]["diagnostic_code"] == "no_matching_query"


def test_query_reads_numpy_arrays_as_lists():
    ex = np.array(
        [{"capability": ODSP, "status": "success", "queries": np.array([{"queryString": "sel a"}])}]
    )
    assert query(ex, capability=ODSP, selector="sel", includes=["a"])["result"] == "pass"


def test_query_missing_column_means_no_executions():
    out = RetrievalQuery().score(pd.DataFrame({"prompt": ["p"]}), [{"capability": ODSP, "selector": "s"}])
    assert out.iloc[0]["details"]["diagnostic_code"] == "no_matching_query"


@pytest.mark.parametrize(
    ("config", "option"),
    [
        ({"selector": "mortgage"}, "capability"),
        ({"capability": ODSP}, "selector"),
        ({"capability": ODSP, "selector": ""}, "selector"),
        ({"capability": ODSP, "selector": "s", "includes": [1]}, "includes"),
        ({"capability": ODSP, "selector": "s", "excludes": {"a": 1}}, "excludes"),
        ({"capability": 3, "selector": "s"}, "capability"),
    ],
)
def test_query_configuration_errors(config, option):
    out = query([execution(queries=["mortgage s"])], **config)
    assert out["result"] == "error"
    assert out["code"] == "evaluatorConfigurationError"
    assert f"'{option}'" in out["error"]
    assert math.isnan(out["score"]) and out["details"] is None


def test_query_bare_string_term_is_one_term():
    out = query([execution(queries=["sel a"])], capability=ODSP, selector="sel", includes="b")
    assert out["details"]["includes_missing"] == ["b"]


def test_query_scores_rows_independently_and_keeps_the_index():
    ex = [execution(queries=["mortgage joint check"])]
    configs = [
        {"capability": ODSP, "selector": "mortgage"},
        {"selector": "mortgage"},
        {"capability": ODSP, "selector": "deductible"},
    ]
    out = score(RetrievalQuery(), [ex, ex, ex], configs, index=["a", "b", "c"])
    assert list(out.columns) == list(RESULT_COLUMNS)
    assert list(out.index) == ["a", "b", "c"]
    assert list(out["result"]) == ["pass", "error", "fail"]
    assert out.loc["a", "threshold"] == 1.0 and math.isnan(out.loc["b", "threshold"])


# ------------------------------------------------------------------------------------------------------------
# RetrievalResult


def result(executions, **config):
    return one(RetrievalResult(), executions, config)


def items(*texts):
    return [{"retrievalExtract_contains": t} for t in texts]


def test_result_pass_records_the_best_ranked_hit():
    ex = [
        execution(
            hits=[
                hit(3, "https://c", "A JOINT CHECK is issued"),
                hit(1, "https://a", "Joint CHECK over $10,000"),
                hit(2, None, "Deductibles: $500"),
            ]
        )
    ]
    out = result(ex, capability=ODSP, expected_items=items("Joint Check", "$500"), max_rank=5)
    assert (out["score"], out["result"], out["threshold"]) == (1.0, "pass", 1.0)
    assert out["details"] == {
        "diagnostic_code": "pass",
        "results_evaluated": 3,
        "matched_items": [
            {"extractMatch": "Joint Check", "matchedHitUrl": "https://a", "matchedHitRank": 1},
            {"extractMatch": "$500", "matchedHitRank": 2},  # null webUrl is omitted
        ],
        "missing_items": [],
        "extract_failures": [],
    }


def test_result_two_of_three_scores_067_and_fails():
    ex = [execution(hits=[hit(1, "u1", "policy number"), hit(2, "u2", "date of loss")])]
    out = result(
        ex, capability=ODSP, expected_items=items("policy number", "date of loss", "5–15 business days")
    )
    assert out["score"] == 0.67
    assert out["result"] == "fail"
    assert out["details"]["diagnostic_code"] == "not_retrieved"
    assert out["details"]["missing_items"] == [{"extractMatch": "5–15 business days"}]
    assert out["details"]["extract_failures"] == [{"extractMatch": "5–15 business days"}]
    assert "'5–15 business days'" in out["reason"]


def test_result_one_of_three_rounds_to_033():
    ex = [execution(hits=[hit(1, "u", "alpha")])]
    assert result(ex, expected_items=items("alpha", "beta", "gamma"))["score"] == 0.33


@pytest.mark.parametrize(("rank", "found"), [(5, True), (6, False)])
def test_result_max_rank_boundary(rank, found):
    ex = [execution(hits=[hit(rank, "u", "budget update")])]
    out = result(ex, capability=ODSP, expected_items=items("budget"), max_rank=5)
    assert out["result"] == ("pass" if found else "fail")
    assert out["details"]["results_evaluated"] == (1 if found else 0)
    if found:
        assert out["details"]["matched_items"] == [
            {"extractMatch": "budget", "matchedHitUrl": "u", "matchedHitRank": 5}
        ]
    else:
        # No candidate hit at all: missing, but not an extract failure.
        assert out["details"]["missing_items"] == [{"extractMatch": "budget"}]
        assert out["details"]["extract_failures"] == []


@pytest.mark.parametrize(("rank", "evaluated"), [(10, 1), (11, 0)])
def test_result_default_max_rank_is_10(rank, evaluated):
    ex = [execution(hits=[hit(rank, "u", "x")])]
    assert result(ex, min_expected_count=1)["details"]["results_evaluated"] == evaluated


def test_result_hits_without_rank_use_their_position():
    hits = [{"webUrl": f"u{i}", "extracts": [{"text": f"text {i}"}]} for i in range(1, 5)]
    out = result([execution(hits=hits)], expected_items=items("text 2", "text 4"), max_rank=3)
    assert out["details"]["results_evaluated"] == 3
    assert out["details"]["matched_items"] == [
        {"extractMatch": "text 2", "matchedHitUrl": "u2", "matchedHitRank": 2}
    ]
    assert out["details"]["missing_items"] == [{"extractMatch": "text 4"}]


def test_result_rank_ties_go_to_the_earliest_hit():
    ex = [
        execution(hits=[hit(2, "first", "budget")]),
        execution(hits=[hit(1, "x", "other"), hit(2, "second", "budget")]),
    ]
    out = result(ex, expected_items=items("budget"))
    assert out["details"]["matched_items"] == [
        {"extractMatch": "budget", "matchedHitUrl": "first", "matchedHitRank": 2}
    ]


def test_result_integral_float_rank_is_kept_and_junk_rank_uses_position():
    hits = [
        hit(4.0, "float", "alpha"),
        hit("1", "junk", "beta"),
        hit(None, "none", "gamma"),
        hit(True, "bool", "delta"),
    ]
    out = result([execution(hits=hits)], expected_items=items("alpha", "beta", "gamma", "delta"), max_rank=3)
    assert out["details"]["matched_items"] == [
        {"extractMatch": "beta", "matchedHitUrl": "junk", "matchedHitRank": 2},
        {"extractMatch": "gamma", "matchedHitUrl": "none", "matchedHitRank": 3},
    ]
    # rank 4.0 > max_rank 3; the bool rank is junk too, so the hit sits at position 4.
    assert out["details"]["missing_items"] == [{"extractMatch": "alpha"}, {"extractMatch": "delta"}]
    assert isinstance(out["details"]["matched_items"][0]["matchedHitRank"], int)


def test_result_an_expected_text_must_sit_in_one_extract():
    ex = [execution(hits=[hit(1, "u", "date of", "loss"), hit(2, "v", "policy", "number")])]
    out = result(ex, expected_items=items("date of loss", "policy"))
    assert out["details"]["missing_items"] == [{"extractMatch": "date of loss"}]
    assert out["details"]["extract_failures"] == [{"extractMatch": "date of loss"}]
    assert out["details"]["matched_items"] == [
        {"extractMatch": "policy", "matchedHitUrl": "v", "matchedHitRank": 2}
    ]


def test_result_skips_malformed_extracts_and_hits():
    hits = [
        {
            "rank": 1,
            "webUrl": "a",
            "extracts": [{"text": None}, "budget", {"snippet": "budget"}, {"text": "Update"}],
        },
        {"rank": 2, "webUrl": "b", "extracts": None},
        "not a hit",
        {"rank": 4, "webUrl": "d"},
    ]
    out = result([execution(hits=hits), "not an execution"], expected_items=items("update", "budget"))
    assert out["details"]["results_evaluated"] == 3
    assert out["details"]["matched_items"] == [
        {"extractMatch": "update", "matchedHitUrl": "a", "matchedHitRank": 1}
    ]
    assert out["details"]["missing_items"] == [{"extractMatch": "budget"}]


def test_result_capability_scoping():
    ex = [
        execution(capability="Email", hits=[hit(1, "mail", "budget update")]),
        execution(capability=ODSP, hits=[hit(1, "doc", "quarterly report")]),
    ]
    scoped = result(ex, capability=ODSP, expected_items=items("budget"))
    assert scoped["details"]["diagnostic_code"] == "not_retrieved"
    assert scoped["details"]["results_evaluated"] == 1
    everything = result(ex, expected_items=items("budget"))  # no capability: hits of all executions
    assert everything["result"] == "pass"
    assert everything["details"]["results_evaluated"] == 2
    assert everything["details"]["matched_items"][0]["matchedHitUrl"] == "mail"


@pytest.mark.parametrize(("minimum", "passed"), [(2, True), (3, False)])
def test_result_only_min_expected_count(minimum, passed):
    ex = [execution(hits=[hit(1, "a", "x"), hit(2, "b", "y"), hit(7, "c", "z")])]
    out = result(ex, capability=ODSP, min_expected_count=minimum, max_rank=5)
    assert out["score"] == (1.0 if passed else 0.0)
    assert out["result"] == ("pass" if passed else "fail")
    assert out["details"]["diagnostic_code"] == ("pass" if passed else "count_below_minimum")
    assert out["details"]["results_evaluated"] == 2
    assert out["details"]["matched_items"] == [] and out["details"]["missing_items"] == []


def test_result_count_below_minimum_takes_precedence_over_not_retrieved():
    ex = [execution(hits=[hit(1, "a", "policy number")])]
    out = result(ex, expected_items=items("policy number", "date of loss"), min_expected_count=2)
    assert out["score"] == 0.5
    assert out["details"]["diagnostic_code"] == "count_below_minimum"
    assert out["details"]["missing_items"] == [{"extractMatch": "date of loss"}]


def test_result_all_items_found_but_count_fails():
    ex = [execution(hits=[hit(1, "a", "policy number")])]
    out = result(ex, expected_items=items("policy number"), min_expected_count=2)
    assert (out["score"], out["result"]) == (1.0, "fail")
    assert out["details"]["diagnostic_code"] == "count_below_minimum"


def test_result_error_when_every_scoped_execution_failed():
    ex = [
        execution(status="failed"),
        execution(status="ERROR"),
        execution(capability="Email", hits=[hit(1, "m", "x")]),
    ]
    out = result(ex, capability=ODSP, expected_items=items("x"), min_expected_count=1)
    assert (out["score"], out["result"]) == (0.0, "fail")
    assert out["details"]["diagnostic_code"] == "error"
    assert out["details"]["results_evaluated"] == 0
    assert "failed" in out["reason"]


@pytest.mark.parametrize("statuses", [["success"], [None], ["error", "Success"]])
def test_result_no_error_code_unless_all_report_non_success(statuses):
    ex = [execution(status=s) for s in statuses]
    out = result(ex, capability=ODSP, min_expected_count=1)
    assert out["details"]["diagnostic_code"] == "count_below_minimum"


def test_result_failed_status_does_not_override_a_pass():
    ex = [execution(status="partial", hits=[hit(1, "a", "x")])]
    assert result(ex, expected_items=items("x"))["details"]["diagnostic_code"] == "pass"


def test_result_not_retrieved_without_any_execution():
    out = result([], capability=ODSP, expected_items=items("x"))
    assert out["details"]["diagnostic_code"] == "not_retrieved"
    assert out["details"]["extract_failures"] == []
    assert out["score"] == 0.0


@pytest.mark.parametrize(
    ("config", "option"),
    [
        ({"capability": ODSP}, "expected_items"),
        ({"expected_items": []}, "min_expected_count"),
        ({"min_expected_count": 0}, "min_expected_count"),
        ({"min_expected_count": True}, "min_expected_count"),
        ({"min_expected_count": 1, "max_rank": "5"}, "max_rank"),
        ({"expected_items": [{"webUrl": "https://x"}]}, "expected_items[0]"),
        ({"expected_items": "budget"}, "expected_items"),
        ({"capability": "", "min_expected_count": 1}, "capability"),
    ],
)
def test_result_configuration_errors(config, option):
    out = result([execution(hits=[hit(1, "a", "budget")])], **config)
    assert out["result"] == "error"
    assert out["code"] == "evaluatorConfigurationError"
    assert f"'{option}'" in out["error"]
    assert out["details"] is None


def test_registry():
    assert set(RETRIEVAL_EVALUATORS) == {"RetrievalQuery", "RetrievalResult"}
    for name, cls in RETRIEVAL_EVALUATORS.items():
        evaluator = cls()
        assert evaluator.name == name
        assert (evaluator.score_field, evaluator.has_threshold, evaluator.requires, evaluator.is_llm) == (
            "score",
            True,
            (),
            False,
        )
    assert (RetrievalQuery.key, RetrievalResult.key) == ("retrievalQuery", "retrievalResult")


def test_empty_rows():
    out = RetrievalResult().score(pd.DataFrame({"retrieval_executions": []}), [])
    assert list(out.columns) == list(RESULT_COLUMNS) and len(out) == 0


# ------------------------------------------------------------------------------------------------------------
# Upstream schema and sample


UPSTREAM = Path(__file__).resolve().parents[1] / "reference" / "m365-copilot-eval"


def _upstream(relative: str) -> dict:
    path = UPSTREAM / relative
    return json.loads(path.read_text(encoding="utf-8"))


def _validator(definition: str):
    jsonschema = pytest.importorskip("jsonschema")
    schema = _upstream("schema/v1/eval-document.schema.json")
    wrapper = {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(wrapper)


def _entries(frame: pd.DataFrame) -> list[dict]:
    """The results.json entries as the results writer builds them."""
    entries = []
    for row in frame.to_dict("records"):
        if row["result"] == "error":
            entries.append(
                {"result": "error", "error": "Evaluator failed: " + row["error"], "code": row["code"]}
            )
        else:
            entries.append(
                {
                    "score": row["score"],
                    "result": row["result"],
                    "threshold": row["threshold"],
                    "reason": row["reason"],
                    **row["details"],
                }
            )
    return entries


def _assert_valid(definition: str, entries: list[dict]) -> None:
    validator = _validator(definition)
    for entry in entries:
        errors = [e.message for e in validator.iter_errors(entry)]
        assert not errors, (entry, errors)


def test_query_entries_validate_against_upstream_schema():
    ex = [execution(status="error"), execution(queries=["mortgage joint check", "mortgage onenote"])]
    configs = [
        {"capability": ODSP, "selector": "mortgage", "includes": ["joint check"]},
        {"capability": ODSP, "selector": "mortgage", "includes": ["payroll"], "excludes": ["onenote"]},
        {"capability": ODSP, "selector": "deductible"},
        {"capability": "Email", "selector": "x"},
        {"selector": "x"},
    ]
    out = score(RetrievalQuery(), [ex] * len(configs), configs)
    entries = _entries(out)
    assert [e.get("diagnostic_code", e["result"]) for e in entries] == [
        "pass",
        "required_terms_missing",
        "no_matching_query",
        "no_matching_query",
        "error",
    ]
    _assert_valid("RetrievalQueryScore", entries)


def test_result_entries_validate_against_upstream_schema():
    ex = [execution(hits=[hit(1, "https://a", "joint check over $10,000"), hit(2, None, "$500 deductible")])]
    configs = [
        {"capability": ODSP, "max_rank": 5, "expected_items": items("joint check", "$500")},
        {"capability": ODSP, "expected_items": items("joint check", "$500", "missing")},
        {"capability": ODSP, "min_expected_count": 3},
        {"capability": "Email", "expected_items": items("x")},
        {"capability": ODSP},
    ]
    out = score(RetrievalResult(), [ex] * len(configs), configs)
    entries = _entries(out)
    assert [e.get("diagnostic_code", e["result"]) for e in entries] == [
        "pass",
        "not_retrieved",
        "count_below_minimum",
        "not_retrieved",
        "error",
    ]
    _assert_valid("RetrievalResultScore", entries)


def test_schema_validation_catches_an_extra_key():
    # Guards the two tests above: the wrapper schema really applies additionalProperties: false on items.
    entry = {
        "score": 1.0,
        "result": "pass",
        "threshold": 1.0,
        "diagnostic_code": "pass",
        "matched_items": [{"extractMatch": "x", "matchedHitUrl": None}],
    }
    assert list(_validator("RetrievalResultScore").iter_errors(entry))


def test_upstream_sample_configs_are_accepted():
    sample = _upstream("samples/prompts-retrieval-complex.json")
    seen = 0
    for item in sample["items"]:
        for name, cls in RETRIEVAL_EVALUATORS.items():
            config = item.get("evaluators", {}).get(name)
            if config is not None:
                seen += 1
                out = one(cls(), [], config)
                assert out["result"] == "fail", (name, config, out["error"])
    assert seen == 16
