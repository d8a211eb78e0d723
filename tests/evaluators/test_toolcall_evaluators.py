"""Tests for ToolCallSelection / ToolCallExecution, span evidence and allowlists, hand-computed.

Every verdict below is worked out by hand from the upstream 1.11 rules (see ``evalkit.evaluators.deterministic.toolcalls``).
The last tests build results.json entries and validate them against the upstream schema's
``ToolCallEvaluatorScore`` definition.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from evalkit.documents.evaluator_maps import resolve_allowed_tools
from evalkit.evaluators.base import CONFIG_ERROR, RESULT_COLUMNS
from evalkit.evaluators.deterministic.tool_allowlist import tool_call_not_allowed
from evalkit.evaluators.deterministic.toolcalls import (
    INDETERMINATE,
    TOOLCALL_EVALUATORS,
    ToolCallExecution,
    ToolCallSelection,
)
from evalkit.spans.reading.tool_calls import (
    call_names,
    span_tool_identity,
    tool_calls_from_spans,
)

ORGS = ("github", "orgs_get")
REPOS = ("github", "repos_list")
DOCS = ("learnmicro", "microsoft_docs_search")


def ident(plugin, function):
    return {"plugin_name": plugin, "function_name": function}


def execution(plugin, function, status=200):
    return {"plugin_name": plugin, "function_name": function, "response_status": status}


def evidence(selected=(), executions=()):
    """A ``diagnostics.tool_calls`` object; pass None for a list to mark that evidence unavailable."""
    return {
        "selected_functions": None if selected is None else [ident(*s) for s in selected],
        "executions": None if executions is None else [execution(*e) for e in executions],
    }


def call(identity, call_id=None):
    out = {"tool": {"plugin_name": identity[0], "function_name": identity[1]}}
    if call_id is not None:
        out["id"] = call_id
    return out


def calls(*identities, **options):
    return {"calls": [call(i) for i in identities], **options}


_start = iter(range(1, 1_000_000))


def span(name, span_id=None, start=None, status="OK", **attributes):
    """A flat span document as captured from the agent."""
    n = next(_start)
    return {
        "traceId": "a" * 32,
        "spanId": span_id or f"{n:016x}",
        "name": name,
        "startTimeUnixNano": n if start is None else start,
        "endTimeUnixNano": (n if start is None else start) + 1,
        "attributes": dict(attributes),
        "status": {"code": status},
    }


def tool_span(tool, **kwargs):
    return span(f"execute_tool {tool}", **kwargs)


def score(evaluator, cells, configs):
    """``cells`` is a list of (tool_calls, spans) pairs, one per row."""
    rows = pd.DataFrame(
        {"tool_calls": [c[0] for c in cells], "spans": [c[1] for c in cells]},
        index=range(10, 10 + len(cells)),
    )
    out = evaluator.score(rows, configs)
    assert list(out.columns) == list(RESULT_COLUMNS) and list(out.index) == list(rows.index)
    return out


def one(evaluator, tool_calls, config, spans=None):
    return score(evaluator, [(tool_calls, spans)], [config]).iloc[0].to_dict()


def selection(tool_calls, config, spans=None):
    return one(ToolCallSelection(), tool_calls, config, spans)


def executed(tool_calls, config, spans=None):
    return one(ToolCallExecution(), tool_calls, config, spans)


def assert_pass(out):
    assert (out["score"], out["result"], out["threshold"]) == (1.0, "pass", 1.0)
    assert out["error"] is None and out["code"] is None and out["details"] is None


def assert_fail(out, *fragments):
    assert (out["score"], out["result"], out["threshold"]) == (0.0, "fail", 1.0)
    assert out["error"] is None and out["code"] is None
    for fragment in fragments:
        assert fragment in out["reason"]


def assert_indeterminate(out, *fragments):
    assert out["result"] == "error" and out["code"] == INDETERMINATE
    assert math.isnan(out["score"]) and math.isnan(out["threshold"]) and out["reason"] is None
    for fragment in fragments:
        assert fragment in out["error"]


# ------------------------------------------------------------------------------------------------------------
# Evaluator attributes


def test_evaluator_attributes_and_export():
    assert TOOLCALL_EVALUATORS == {
        "ToolCallSelection": ToolCallSelection,
        "ToolCallExecution": ToolCallExecution,
    }
    for cls, key in ((ToolCallSelection, "toolCallSelection"), (ToolCallExecution, "toolCallExecution")):
        ev = cls()
        assert (ev.name, ev.key, ev.score_field, ev.has_threshold, ev.requires, ev.is_llm) == (
            cls.__name__,
            key,
            "score",
            True,
            (),
            False,
        )


# ------------------------------------------------------------------------------------------------------------
# Mapping rule


@pytest.mark.parametrize(
    "name",
    [
        "identify_broker",  # LangGraph, pydantic-ai, the Agents SDK, Strands: snake_case is no namespace
        "github_orgs_get",
        "github.orgs_get",
        "zavainsurance_get-claim-summary",
        "search",
        "_search",
    ],
)
def test_a_tools_whole_name_is_its_function_name(name):
    assert span_tool_identity(tool_span(name)) == (None, name)
    assert span_tool_identity(tool_span(f"  {name} ")) == (None, name)


def test_tool_name_precedence_and_span_name_fallback():
    # gen_ai.tool.name beats tool.name beats traceloop.entity.name beats the span name.
    s = tool_span("x_y", **{"gen_ai.tool.name": "a_b", "tool.name": "c_d", "traceloop.entity.name": "e_f"})
    assert span_tool_identity(s) == (None, "a_b")
    s = tool_span("x_y", **{"tool.name": "c_d", "traceloop.entity.name": "e_f"})
    assert span_tool_identity(s) == (None, "c_d")
    s = tool_span("x_y", **{"gen_ai.tool.name": "  ", "traceloop.entity.name": "e_f"})
    assert span_tool_identity(s) == (None, "e_f")


@pytest.mark.parametrize(
    ("tool", "attributes", "identity"),
    [
        ("orgs_get", {"evalkit.tool.plugin": "github"}, ("github", "orgs_get")),
        ("github_orgs_get", {"evalkit.tool.plugin": "github"}, ("github", "orgs_get")),  # prefix removed
        ("github.orgs_get", {"evalkit.tool.plugin": "github"}, ("github", "orgs_get")),
        ("get_weather", {"evalkit.tool.plugin": "weather"}, ("weather", "get_weather")),  # no prefix: whole
        ("github_orgs_get", {"evalkit.tool.plugin": "  "}, (None, "github_orgs_get")),  # blank: no plugin
        ("search", {"mcp.server.name": "learnmicro"}, ("learnmicro", "search")),  # an MCP server's tool
        ("search", {"mcp.server.name": "docs", "evalkit.tool.plugin": "kb"}, ("kb", "search")),
        # no library's attribute names a namespace: neither the model provider nor a function override
        (
            "get_weather",
            {"gen_ai.system": "openai", "evalkit.tool.function": "weather"},
            (None, "get_weather"),
        ),
    ],
)
def test_a_plugin_only_where_a_namespace_is_known(tool, attributes, identity):
    assert span_tool_identity(tool_span(tool, **attributes)) == identity


@pytest.mark.parametrize(
    ("identity", "captured", "names"),
    [
        (("github", "orgs_get"), None, ["github_orgs_get"]),
        ((None, "identify_broker"), None, ["identify_broker"]),
        (("learnmicro", "search"), "search", ["learnmicro_search", "search"]),
        ((None, "search"), "search", ["search"]),
        (("github", None), None, []),
        ((None, None), None, []),
    ],
)
def test_call_names(identity, captured, names):
    assert call_names(identity, captured) == names


def test_no_spans_is_no_evidence():
    for spans in (None, [], float("nan"), np.array([], dtype=object), [None, "junk"]):
        assert tool_calls_from_spans(spans) is None


def test_spans_without_tool_spans_are_an_authoritative_empty_observation():
    spans = [span("invoke_agent travel"), span("chat gpt-4o", **{"gen_ai.operation.name": "chat"})]
    assert tool_calls_from_spans(spans) == {"selected_functions": [], "executions": []}


def test_tool_calls_from_spans():
    spans = [
        tool_span("github_repos_list", start=30, **{"http.response.status_code": 404}),
        span("chat", start=5),
        span("custom", start=10, **{"gen_ai.tool.name": "github_orgs_get"}),  # tool by attribute
        span("tool", start=20, **{"traceloop.span.kind": "tool", "traceloop.entity.name": "search"}),
        tool_span("github_orgs_get", start=40, status="ERROR"),
        tool_span("github_orgs_get", start=50, status="UNSET", **{"http.status_code": "201"}),
    ]
    # Each tool is named as the agent called it: no plugin where the spans name no namespace.
    assert tool_calls_from_spans(spans) == {
        "selected_functions": [
            ident(None, "github_orgs_get"),
            ident(None, "search"),
            ident(None, "github_repos_list"),
        ],
        "executions": [
            execution(None, "github_orgs_get", 200),
            execution(None, "search", 200),
            execution(None, "github_repos_list", 404),
            execution(None, "github_orgs_get", 500),
            execution(None, "github_orgs_get", 201),
        ],
    }


@pytest.mark.parametrize(
    ("status", "attributes", "expected"),
    [
        ("OK", {}, 200),
        ("UNSET", {}, 200),
        (None, {}, 200),  # no status code at all
        ("ERROR", {}, 500),
        ("STATUS_CODE_ERROR", {}, 500),
        (2, {}, 500),
        (1, {}, 200),
        ("weird", {}, None),
        ("OK", {"http.response.status_code": 429}, 429),  # the HTTP attribute wins
        ("ERROR", {"http.status_code": 204.0}, 204),
        ("OK", {"http.response.status_code": "x", "http.status_code": 503}, 503),  # unusable: next key
        ("OK", {"http.response.status_code": True}, 200),  # a bool is not a status
    ],
)
def test_response_status_from_span(status, attributes, expected):
    s = tool_span("github_orgs_get", **attributes)
    s["status"] = {"code": status} if status is not None else {}
    assert tool_calls_from_spans([s])["executions"][0]["response_status"] == expected


def test_status_absent_and_odd_shapes():
    s = tool_span("github_orgs_get")
    del s["status"]
    s2 = tool_span("github_orgs_get", status=None)
    s2["status"] = "ERROR"  # a bare string status
    assert [e["response_status"] for e in tool_calls_from_spans([s, s2])["executions"]] == [200, 500]


def test_repeated_span_ids_count_once():
    s = tool_span("github_orgs_get", span_id="00000000000000ff")
    assert tool_calls_from_spans([s, dict(s)])["executions"] == [execution(None, "github_orgs_get")]


def test_loaded_span_frame_is_accepted():
    frame = pd.DataFrame({"document": [tool_span("github_orgs_get")]})
    assert tool_calls_from_spans(frame)["selected_functions"] == [ident(None, "github_orgs_get")]


# ------------------------------------------------------------------------------------------------------------
# ToolCallSelection


def test_selection_pass_with_additional_calls_allowed_by_default():
    out = selection(evidence([ORGS, DOCS]), calls(ORGS))
    assert_pass(out)
    assert "github_orgs_get" in out["reason"]


def test_selection_pass_strict():
    out = selection(evidence([DOCS, ORGS]), calls(ORGS, DOCS, allow_additional_calls=False))
    assert_pass(out)
    assert "nothing else" in out["reason"]


def test_selection_missing():
    out = selection(evidence([ORGS]), calls(ORGS, REPOS, DOCS))
    assert_fail(out, "missing expected tool(s) github_repos_list, learnmicro_microsoft_docs_search")
    assert "unexpected" not in out["reason"]


def test_selection_extra_when_additional_calls_not_allowed():
    out = selection(evidence([ORGS, DOCS, REPOS]), calls(ORGS, allow_additional_calls=False))
    assert_fail(out, "unexpected additional tool(s) learnmicro_microsoft_docs_search, github_repos_list")
    assert "missing" not in out["reason"]


def test_selection_missing_and_extra_together():
    out = selection(evidence([DOCS]), calls(ORGS, allow_additional_calls=False))
    assert_fail(out, "missing expected tool(s) github_orgs_get", "unexpected additional tool(s) learnmicro")


def test_selection_empty_list_is_an_authoritative_fail():
    assert_fail(selection(evidence([]), calls(ORGS)), "missing expected tool(s) github_orgs_get")


def test_selection_repeated_identities_are_deduplicated():
    config = {"calls": [call(ORGS, "first"), call(ORGS, "second")], "allow_additional_calls": False}
    assert_pass(selection(evidence([ORGS]), config))
    # Matching is exact and case-sensitive.
    assert_fail(selection(evidence([("GitHub", "orgs_get")]), config), "first (github_orgs_get)")


def test_selection_id_labels_the_call_in_the_reason():
    config = {"calls": [call(ORGS), call(ORGS, "orgs"), call(REPOS, "github_repos_list")]}
    out = selection(evidence([]), config)
    assert_fail(out, "missing expected tool(s) orgs (github_orgs_get), github_repos_list.")


def test_selection_null_evidence_is_indeterminate():
    out = selection(evidence(None, [ORGS]), calls(ORGS))
    assert_indeterminate(out, "selected_functions is null")
    tc = {
        "selected_functions": None,
        "executions": None,
        "evidence_error": "Multiple Developer Info artifacts were returned; no authoritative telemetry "
        "snapshot could be identified.",
    }
    assert_indeterminate(selection(tc, calls(ORGS)), "Multiple Developer Info artifacts")


def test_selection_without_any_evidence_is_indeterminate():
    assert_indeterminate(selection(None, calls(ORGS), spans=[]), "neither diagnostics.tool_calls nor")
    assert_indeterminate(selection(None, calls(ORGS), spans=None))
    assert_indeterminate(selection("junk", calls(ORGS)), "must be an object")
    assert_indeterminate(
        selection({"selected_functions": "x", "executions": []}, calls(ORGS)), "must be a list"
    )


def test_selection_evidence_from_spans():
    spans = [
        span("invoke_agent"),
        tool_span("github_orgs_get"),
        tool_span("learnmicro_microsoft_docs_search"),
    ]
    assert_pass(selection(None, calls(ORGS, DOCS, allow_additional_calls=False), spans=spans))
    assert_fail(selection(None, calls(ORGS, allow_additional_calls=False), spans=spans), "learnmicro")
    assert_fail(selection(None, calls(REPOS), spans=[span("chat")]), "missing expected tool(s) github_repos")


def test_an_entry_without_a_plugin_is_the_expected_call_its_whole_name_identifies():
    # LangGraph, pydantic-ai, Strands...: the spans name the tool, no namespace; the expected call
    # {"plugin_name": "identify", "function_name": "broker"} is the upstream identifier identify_broker.
    broker = ("identify", "broker")
    spans = [tool_span("identify_broker"), tool_span("get_stock_data")]
    assert_pass(selection(None, calls(broker, ("get", "stock_data")), spans=spans))
    out = selection(None, calls(broker, allow_additional_calls=False), spans=spans)
    assert_fail(out, "unexpected additional tool(s) get_stock_data (allow_additional_calls is false)")
    assert_pass(executed(None, calls(broker), spans=spans))
    out = executed(None, calls(broker, broker), spans=spans)
    assert_fail(out, "identify_broker: 1 successful execution of 2 required")
    # The same from a document's diagnostics.tool_calls, as to-document writes it.
    tc = evidence([(None, "github_orgs_get")], [(None, "github_orgs_get")])
    assert_pass(selection(tc, calls(ORGS, allow_additional_calls=False)))
    assert_pass(executed(tc, calls(ORGS)))
    assert_fail(selection(tc, calls(REPOS)), "missing expected tool(s) github_repos_list")


def test_selection_tool_calls_take_precedence_over_spans():
    spans = [tool_span("github_orgs_get")]
    assert_fail(selection(evidence([]), calls(ORGS), spans=spans), "missing")
    assert_indeterminate(selection(evidence(None), calls(ORGS), spans=spans))


# Null identities. With allow_additional_calls true, a partial entry can only help: it matters only when
# something is missing and the partial entries can stand in for all of it.


def test_selection_partial_entry_could_be_the_missing_tool():
    out = selection(evidence([(None, "orgs_get")]), calls(ORGS))
    assert_indeterminate(out, "unknown plugin or function name (orgs_get)", "github_orgs_get")
    assert_indeterminate(selection(evidence([("github", None)]), calls(ORGS)), "github_<unknown function>")
    tc = {"selected_functions": [ident(None, None)], "executions": []}
    assert_indeterminate(selection(tc, calls(ORGS)), "<unknown tool>")
    tc = {"selected_functions": ["not an object"], "executions": []}
    assert_indeterminate(selection(tc, calls(ORGS)))
    tc = {"selected_functions": [ident("", "orgs_get")], "executions": []}  # blank = unknown
    assert_indeterminate(selection(tc, calls(ORGS)))


def test_selection_partial_entry_cannot_change_a_pass_when_additional_calls_are_allowed():
    assert_pass(selection(evidence([ORGS, (None, "x"), (None, None)]), calls(ORGS)))


def test_selection_partial_entry_incompatible_with_the_missing_tool():
    out = selection(evidence([("other", None)]), calls(ORGS))
    assert_fail(out, "missing expected tool(s) github_orgs_get", "cannot account for them")


def test_selection_one_partial_entry_cannot_be_two_missing_tools():
    # ("github", None) could be orgs_get or repos_list, but not both.
    assert_fail(selection(evidence([("github", None)]), calls(ORGS, REPOS)), "github_orgs_get, github_repos")
    assert_indeterminate(selection(evidence([("github", None), (None, None)]), calls(ORGS, REPOS)))
    # An entry that could only be orgs_get cannot stand in for the missing repos_list.
    out = selection(evidence([(None, "orgs_get"), ORGS]), calls(ORGS, REPOS))
    assert_fail(out, "missing expected tool(s) github_repos_list;", "cannot account for them")
    out = selection(evidence([(None, "orgs_get"), (None, "orgs_get")]), calls(ORGS, REPOS))
    assert_fail(out, "missing expected tool(s) github_orgs_get, github_repos_list")


# With allow_additional_calls false, a partial entry could also be an unexpected extra.


def test_selection_strict_partial_entry_could_be_an_extra():
    out = selection(evidence([ORGS, ("github", None)]), calls(ORGS, allow_additional_calls=False))
    assert_indeterminate(out, "allow_additional_calls false")


def test_selection_strict_partial_entry_that_fits_no_expected_tool_is_an_extra():
    out = selection(evidence([ORGS, ("other", None)]), calls(ORGS, allow_additional_calls=False))
    assert_fail(out, "unexpected additional tool(s) other_<unknown function>")


def test_selection_strict_known_extra_decides_regardless_of_partial_entries():
    out = selection(evidence([ORGS, DOCS, (None, None)]), calls(ORGS, allow_additional_calls=False))
    assert_fail(out, "unexpected additional tool(s) learnmicro_microsoft_docs_search")


def test_selection_strict_partial_entry_could_be_the_missing_tool():
    out = selection(evidence([(None, "orgs_get")]), calls(ORGS, allow_additional_calls=False))
    assert_indeterminate(out, "could be the missing expected tool(s) github_orgs_get")


def test_selection_configuration_errors_are_per_row():
    configs = [
        {},
        {"calls": []},
        {"calls": [{"tool": {"plugin_name": "github"}}]},
        {"calls": [{"tool": {"plugin_name": "github", "function_name": ""}}]},
        {"calls": ["github_orgs_get"]},
        {"calls": [call(ORGS, "")]},
        {"calls": "github_orgs_get"},
        calls(ORGS, allow_additional_calls="no"),
        "not an object",
        calls(ORGS),
    ]
    out = score(ToolCallSelection(), [(evidence([ORGS]), None)] * len(configs), configs)
    assert out["code"].tolist()[:-1] == [CONFIG_ERROR] * (len(configs) - 1)
    assert out["result"].tolist()[-1] == "pass"
    errors = out["error"].tolist()
    assert "requires the option 'calls'" in errors[0]
    assert "non-empty list" in errors[1]
    assert "calls[0].tool.function_name" in errors[2] and "calls[0].tool.function_name" in errors[3]
    assert "'calls[0]' must be an object" in errors[4]
    assert "calls[0].id" in errors[5]
    assert "allow_additional_calls" in errors[7]
    assert "must be an object" in errors[8]


def test_selection_accepts_numpy_options_and_evidence():
    # Nested lists read back from Parquet arrive as object arrays, booleans as numpy bools.
    config = {"calls": np.array([call(ORGS)], dtype=object), "allow_additional_calls": np.bool_(False)}
    tc = {"selected_functions": np.array([ident(*ORGS)], dtype=object), "executions": None}
    assert_pass(selection(tc, config))


def test_selection_rows_are_independent():
    cells = [
        (evidence([ORGS]), None),
        (None, []),
        (evidence([DOCS]), None),
        (float("nan"), [tool_span("github_orgs_get")]),
    ]
    out = score(ToolCallSelection(), cells, [calls(ORGS)] * 4)
    assert out["result"].tolist() == ["pass", "error", "fail", "pass"]
    assert out["score"].tolist()[0] == 1.0 and out["score"].tolist()[2] == 0.0


def test_empty_frame():
    out = ToolCallSelection().score(pd.DataFrame({"tool_calls": [], "spans": []}), [])
    assert out.empty and list(out.columns) == list(RESULT_COLUMNS)


# ------------------------------------------------------------------------------------------------------------
# ToolCallExecution


def test_execution_pass_and_additional_executions_are_allowed():
    out = executed(evidence(executions=[ORGS, DOCS, (*REPOS, 500)]), calls(ORGS))
    assert_pass(out)
    assert "github_orgs_get: 1 successful execution (1 required)" in out["reason"]


def test_execution_repeated_identity_requires_that_many_successes():
    config = {"calls": [call(ORGS, "orgs_get"), call(ORGS)]}
    assert_pass(executed(evidence(executions=[ORGS, ORGS]), config))
    out = executed(evidence(executions=[ORGS]), config)
    assert_fail(out, "orgs_get (github_orgs_get): 1 successful execution of 2 required")


def test_execution_non_2xx_is_not_counted():
    config = calls(ORGS, ORGS)
    ex = [(*ORGS, 404), (*ORGS, 200), (*ORGS, 302), (*ORGS, 199)]
    out = executed(evidence(executions=ex), config)
    assert_fail(
        out, "github_orgs_get: 1 successful execution of 2 required (other executions returned 404, 302, 199)"
    )
    assert_pass(executed(evidence(executions=[(*ORGS, 201), (*ORGS, 299)]), config))
    assert_pass(executed(evidence(executions=[(*ORGS, "204"), (*ORGS, 200.0)]), config))


def test_execution_names_every_unmet_expectation():
    out = executed(evidence(executions=[(*DOCS, 500)]), calls(ORGS, DOCS))
    assert_fail(
        out,
        "github_orgs_get: 0 successful executions of 1 required; learnmicro_microsoft_docs_search: 0 "
        "successful executions of 1 required (other executions returned 500)",
    )


def test_execution_selection_is_not_execution():
    assert_fail(executed(evidence([ORGS], []), calls(ORGS)), "0 successful executions of 1 required")


def test_execution_null_executions_are_indeterminate():
    assert_indeterminate(executed(evidence([ORGS], None), calls(ORGS)), "executions is null")
    assert_indeterminate(executed(None, calls(ORGS), spans=[]))
    # Selection does not need executions, execution does not need selected_functions.
    assert_pass(selection(evidence([ORGS], None), calls(ORGS)))
    assert_pass(executed(evidence(None, [ORGS]), calls(ORGS)))


def test_execution_evidence_from_spans():
    spans = [
        tool_span("github_orgs_get", status="ERROR"),
        tool_span("github_orgs_get", **{"http.response.status_code": 200}),
        tool_span("github_orgs_get"),
        span("chat"),
    ]
    assert_pass(executed(None, calls(ORGS, ORGS), spans=spans))
    out = executed(None, calls(ORGS, ORGS, ORGS), spans=spans)
    assert_fail(out, "github_orgs_get: 2 successful executions of 3 required (other executions returned 500)")


def test_execution_partial_identity_could_be_the_missing_success():
    out = executed(evidence(executions=[(None, "orgs_get", 200)]), calls(ORGS))
    assert_indeterminate(out, "could supply the missing successful execution(s) of github_orgs_get")


def test_execution_null_status_could_be_the_missing_success():
    out = executed(evidence(executions=[(*DOCS, None), (*ORGS, None)]), calls(ORGS))
    assert_indeterminate(
        out, "1 execution with an unknown plugin name, function name or response status (github_orgs_get)"
    )
    assert_indeterminate(executed(evidence(executions=[(None, None, None)]), calls(ORGS)))


def test_execution_unknowns_that_cannot_change_the_verdict():
    # A known failure status never counts, whatever the identity.
    assert_fail(executed(evidence(executions=[(None, "orgs_get", 500)]), calls(ORGS)), "0 successful")
    # A null status of another identity cannot be a github_orgs_get success.
    assert_fail(executed(evidence(executions=[(*DOCS, None)]), calls(ORGS)), "cannot account for them")
    # One unknown entry cannot supply two missing successes.
    out = executed(evidence(executions=[(None, "orgs_get", 200)]), calls(ORGS, ORGS))
    assert_fail(out, "github_orgs_get: 0 successful executions of 2 required")
    # Already met: unknown entries do not matter.
    assert_pass(executed(evidence(executions=[ORGS, (None, None, None), (*ORGS, None)]), calls(ORGS)))


def test_execution_shortfall_filled_across_identities():
    # Needs orgs_get x1 and repos_list x1: ("github", None) can fill either, (None, "orgs_get") only orgs_get.
    ex = [(None, "orgs_get", 200), ("github", None, 200)]
    assert_indeterminate(executed(evidence(executions=ex), calls(ORGS, REPOS)))
    ex = [(None, "orgs_get", 200), (None, "orgs_get", None)]
    assert_fail(executed(evidence(executions=ex), calls(ORGS, REPOS)), "github_repos_list: 0 successful")


def test_execution_configuration_error():
    out = executed(evidence(executions=[ORGS]), {"calls": [{"id": "x"}]})
    assert out["result"] == "error" and out["code"] == CONFIG_ERROR and "calls[0]" in out["error"]


# ------------------------------------------------------------------------------------------------------------
# Allowlists

DEFAULT = ["github_orgs_get"]
ITEM = ["learnmicro_microsoft_docs_search"]


@pytest.mark.parametrize(
    ("default", "item", "mode", "expected"),
    [
        (None, None, None, []),  # nothing at all: fail closed
        (None, None, "extend", []),
        (None, None, "replace", []),
        (DEFAULT, None, None, DEFAULT),
        (DEFAULT, None, "extend", DEFAULT),
        (DEFAULT, None, "replace", []),  # replace with an absent item list: empty
        (None, ITEM, None, ITEM),
        (None, ITEM, "extend", ITEM),
        (None, ITEM, "replace", ITEM),
        (DEFAULT, ITEM, None, DEFAULT + ITEM),
        (DEFAULT, ITEM, "extend", DEFAULT + ITEM),
        (DEFAULT, ITEM, "replace", ITEM),
        (DEFAULT, [], None, DEFAULT),
        (DEFAULT, [], "extend", DEFAULT),
        (DEFAULT, [], "replace", []),
        ([], ITEM, None, ITEM),
        ([], [], None, []),
        (DEFAULT, DEFAULT + ITEM, "extend", DEFAULT + ITEM),  # duplicates removed, first kept
        (
            [" github_orgs_get "],
            ["\tlearnmicro_microsoft_docs_search", "   "],
            None,
            DEFAULT + ITEM,
        ),  # trimmed
        (DEFAULT, ["GitHub_orgs_get"], None, DEFAULT + ["GitHub_orgs_get"]),  # case-sensitive: distinct
        (float("nan"), np.array(ITEM, dtype=object), None, ITEM),
    ],
)
def test_resolve_allowed_tools(default, item, mode, expected):
    assert resolve_allowed_tools(default, item, mode) == expected


def test_resolve_allowed_tools_rejects_bad_input():
    with pytest.raises(ValueError, match="allowed_tools_mode"):
        resolve_allowed_tools(DEFAULT, ITEM, "merge")
    with pytest.raises(ValueError, match="allowed_tools_mode"):
        resolve_allowed_tools(DEFAULT, ITEM, "Extend")
    with pytest.raises(ValueError, match="strings"):
        resolve_allowed_tools([1], None, None)
    with pytest.raises(ValueError, match="list"):
        resolve_allowed_tools("github_orgs_get", None, None)


def test_resolve_allowed_tools_on_the_upstream_example(reference):
    path = reference / "m365-copilot-eval/schema/v1/examples/valid/allowed-tools.json"
    doc = json.loads(path.read_text())
    default = doc.get("default_allowed_tools")
    resolved = []
    for item in doc["items"]:
        for turn in item.get("turns", [item]):
            resolved.append(
                resolve_allowed_tools(default, turn.get("allowed_tools"), turn.get("allowed_tools_mode"))
            )
    assert resolved == [
        ["github_orgs_get"],
        ["github_orgs_get", "learnmicro_microsoft_docs_search"],
        [],
        ["learnmicro_microsoft_docs_search"],
        ["github_orgs_get"],
    ]


def test_tool_call_not_allowed_from_spans():
    spans = [
        span("chat", start=1),
        tool_span("learnmicro_microsoft_docs_search", start=30),
        tool_span("github_orgs_get", start=10),
        tool_span("github_repos_list", start=20),
    ]
    assert tool_call_not_allowed(spans, DEFAULT + ITEM + ["github_repos_list"]) is None
    # The first call in time order outside the list is named.
    msg = tool_call_not_allowed(spans, DEFAULT)
    assert msg == "Tool call 'github_repos_list' is not allowed (allowed_tools: 'github_orgs_get')."
    assert tool_call_not_allowed(spans, [" github_orgs_get ", "github_repos_list "]).startswith(
        "Tool call 'learnmicro_microsoft_docs_search'"
    )
    # Empty or absent allowlist: fail closed.
    assert (
        tool_call_not_allowed(spans, [])
        == "Tool call 'github_orgs_get' is not allowed (allowed_tools: empty)."
    )
    assert "github_orgs_get" in tool_call_not_allowed(spans, None)
    # Exact, case-sensitive.
    assert "github_orgs_get" in tool_call_not_allowed([tool_span("github_orgs_get")], ["GitHub_orgs_get"])


def test_tool_call_not_allowed_identifiers():
    # An entry ns_tool allows the call (ns, tool) and the tool whose whole name is ns_tool; nothing else.
    assert tool_call_not_allowed([tool_span("identify_broker")], ["identify_broker"]) is None
    assert tool_call_not_allowed([tool_span("github.orgs_get")], ["github.orgs_get"]) is None
    assert tool_call_not_allowed([tool_span("github.orgs_get")], DEFAULT) == (
        "Tool call 'github.orgs_get' is not allowed (allowed_tools: 'github_orgs_get')."
    )
    assert tool_call_not_allowed([tool_span("search")], ["search"]) is None
    assert tool_call_not_allowed([tool_span("search")], DEFAULT) == (
        "Tool call 'search' is not allowed (allowed_tools: 'github_orgs_get')."
    )
    overridden = tool_span("orgs_get", **{"evalkit.tool.plugin": "github"})
    assert tool_call_not_allowed([overridden], DEFAULT) is None
    # An MCP server's tool answers to server_tool and to its name as the agent called it.
    mcp = tool_span("docs_search", **{"mcp.server.name": "learnmicro"})
    assert tool_call_not_allowed([mcp], ["learnmicro_docs_search"]) is None
    assert tool_call_not_allowed([mcp], ["docs_search"]) is None
    assert tool_call_not_allowed([mcp], ["learnmicro_search"]) == (
        "Tool call 'learnmicro_docs_search' is not allowed (allowed_tools: 'learnmicro_search')."
    )


def test_tool_call_not_allowed_from_tool_calls():
    assert tool_call_not_allowed(evidence([ORGS], [ORGS]), DEFAULT) is None
    assert "learnmicro_microsoft_docs_search" in tool_call_not_allowed(evidence([ORGS], [DOCS]), DEFAULT)
    assert "learnmicro_microsoft_docs_search" in tool_call_not_allowed(evidence([DOCS], None), DEFAULT)
    # An entry without a plugin is named by its function name (to-document writes tools so).
    assert tool_call_not_allowed(evidence([(None, "github_orgs_get")], []), DEFAULT) is None
    msg = tool_call_not_allowed(evidence([(None, "orgs_get")], []), DEFAULT)
    assert msg == "Tool call 'orgs_get' is not allowed (allowed_tools: 'github_orgs_get')."
    msg = tool_call_not_allowed(evidence([("github", None)], []), DEFAULT)
    assert msg == (
        "Tool call github_<unknown function> has an incomplete identity and cannot be matched against "
        "allowed_tools ('github_orgs_get')."
    )


def test_tool_call_not_allowed_without_calls():
    assert tool_call_not_allowed(None, []) is None
    assert tool_call_not_allowed([], []) is None
    assert tool_call_not_allowed([span("chat")], []) is None
    assert tool_call_not_allowed(evidence([], []), []) is None
    assert tool_call_not_allowed(evidence(None, None), []) is None


# ------------------------------------------------------------------------------------------------------------
# Upstream schema


def _validator(upstream_schema):
    jsonschema = pytest.importorskip("jsonschema")
    wrapper = {"$ref": "#/$defs/ToolCallEvaluatorScore", "$defs": upstream_schema["$defs"]}
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
                }
            )
    return entries


def test_entries_validate_against_upstream_schema(upstream_schema):
    validator = _validator(upstream_schema)
    cells = [
        (evidence([ORGS], [ORGS, ORGS]), None),
        (evidence([DOCS], [DOCS]), None),
        (evidence(None, None), None),
        (evidence([(None, "orgs_get")], [(None, "orgs_get", None), (None, "orgs_get", 200)]), None),
        (None, [tool_span("github_orgs_get")]),
        (None, None),
    ]
    configs = [calls(ORGS, ORGS)] * (len(cells) - 1) + [{"calls": []}]
    expected = {
        ToolCallSelection: ["pass", "fail", INDETERMINATE, INDETERMINATE, "pass", CONFIG_ERROR],
        ToolCallExecution: ["pass", "fail", INDETERMINATE, INDETERMINATE, "fail", CONFIG_ERROR],
    }
    for cls, outcomes in expected.items():
        entries = _entries(score(cls(), cells, configs))
        assert [e.get("code", e["result"]) for e in entries] == outcomes
        for entry in entries:
            errors = [e.message for e in validator.iter_errors(entry)]
            assert not errors, (entry, errors)


def test_schema_validation_catches_a_wrong_entry(upstream_schema):
    # Guards the test above: the wrapper really applies the score/result pairing and the error code list.
    validator = _validator(upstream_schema)
    assert not validator.is_valid({"score": 1.0, "result": "fail", "threshold": 1.0, "reason": "x"})
    assert not validator.is_valid({"score": 1.0, "result": "pass", "threshold": 0.5, "reason": "x"})
    assert not validator.is_valid({"result": "error", "error": "x", "code": "toolCallIndeterminate"})
    assert validator.is_valid({"result": "error", "error": "x", "code": INDETERMINATE})


def test_tool_call_evaluators_run_from_an_eval_document(upstream_schema):
    import jsonschema

    import evalkit

    diagnostics = {
        "tool_calls": {
            "selected_functions": [{"plugin_name": "github", "function_name": "orgs_get"}],
            "executions": [{"plugin_name": "github", "function_name": "orgs_get", "response_status": 200}],
        }
    }
    calls = [{"tool": {"plugin_name": "github", "function_name": "orgs_get"}}]
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {
            "ToolCallSelection": {"calls": calls},
            "ToolCallExecution": {"calls": calls * 2},
        },
        "items": [{"prompt": "Which orgs?", "response": "microsoft", "diagnostics": diagnostics}],
    }
    scored = evalkit.evaluate(evalkit.load(doc), progress=False)
    assert scored.loc[0, "toolCallSelection_result"] == "pass"
    assert scored.loc[0, "toolCallExecution_result"] == "fail"
    document = evalkit.to_document(scored)
    jsonschema.Draft202012Validator(upstream_schema).validate(document)
    assert document["items"][0]["diagnostics"] == diagnostics
