"""Built-in deterministic evaluators scored over parts of the rows in forked children (``engine.forked_parts``).

Each test runs in a fresh interpreter (``python -c``): pytest's own workers may run threads, and a process
with threads refuses to fork, so only a subprocess makes sure the split really happens. The table mixes items
of the upstream samples (their prompts, expected responses and evaluator options, LLM judges left out) with
responses that pass, fail, cite, are blank or missing, retrieval executions and tool-call evidence, so every
splittable evaluator meets rows of each kind in every part.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "reference" / "m365-copilot-eval" / "samples"

#: Builds the table (``doc``) and ``run(processes)``; the tests append their checks.
PRELUDE = textwrap.dedent(
    """
    import json, os, sys
    import pandas as pd
    import evalkit
    from evalkit.engine import forked_parts

    forked_parts.SPLIT_ROWS = 40  # small tables split too (3 processes need 60 rows)
    started = []
    real_start = forked_parts.ForkedParts.start.__func__
    def counting_start(cls, *args):
        forked = real_start(cls, *args)
        started.append(None if forked is None else len(forked._children))
        return forked
    forked_parts.ForkedParts.start = classmethod(counting_start)

    LLM = {"Coherence", "Relevance", "Groundedness", "Similarity"}
    def deterministic(evaluators):
        return {k: v for k, v in (evaluators or {}).items() if k not in LLM}

    items = []
    for name in ("hr_benefits_leave.json", "prompts_rag_grounding.json", "prompts-retrieval-complex.json"):
        doc = json.load(open(os.path.join(sys.argv[1], name), encoding="utf-8"))
        defaults = deterministic(doc.get("default_evaluators"))
        for item in doc["items"]:
            if "turns" in item:
                continue
            item = dict(item)
            mode = item.get("evaluators_mode", "extend")
            own = deterministic(item.get("evaluators"))
            item["evaluators"] = own if mode == "replace" else {**defaults, **own}
            item["evaluators_mode"] = "replace"
            items.append(item)

    def respond(item, i):
        expected = item.get("expected_response") or "no expected answer"
        words = expected.split()
        kind = i % 7
        if kind == 0:
            item["response"] = expected
        elif kind == 1:
            item["response"] = " ".join(reversed(words[: max(1, len(words) // 2)])) + " [1]"
        elif kind == 2:
            item["response"] = expected.upper() + " [^1^] 【3:0†source】"
        elif kind == 3:
            item["response"] = "   "
        elif kind == 4:
            item["response"] = "unrelated text (see [2](https://example.com/a))"
        elif kind == 5:
            item.pop("expected_response", None)
            item["response"] = expected
        else:
            item["response"] = expected.lower()
        if "RetrievalQuery" in item["evaluators"] or i % 5 == 0:
            query = item["evaluators"].get("RetrievalQuery", {})
            text = " ".join([query.get("selector", "policy"), *query.get("includes", [])])
            item["diagnostics"] = {"retrieval_executions": [{
                "capability": "OneDriveAndSharePoint", "status": "success" if i % 3 else "failure",
                "totalResultCount": 1,
                "queries": [{"queryString": text if i % 2 else "other", "filterExpression": None}],
                "retrievalHits": [{"rank": 1 + i % 6, "webUrl": f"https://x/{i}",
                                   "extracts": [{"text": expected if i % 4 else "nothing"}]}],
            }]}
        if i % 6 == 1:
            calls = {"calls": [{"tool": {"plugin_name": "github", "function_name": "repos_list"}}]}
            item["evaluators"]["ToolCallSelection"] = calls
            item["evaluators"]["ToolCallExecution"] = calls
            functions = [{"plugin_name": "github", "function_name": "repos_list" if i % 12 == 1 else "orgs_get"}]
            item.setdefault("diagnostics", {})["tool_calls"] = {
                "selected_functions": functions,
                "executions": [{**functions[0], "response_status": 200 if i % 4 == 1 else 500}]}
        return item

    rows = [respond(json.loads(json.dumps(items[i % len(items)])), i) for i in range(3 * len(items))]
    doc = {"schemaVersion": "1.11.0", "items": rows}
    names = sorted({name for row in rows for name in row["evaluators"]})

    def run(processes):
        return evalkit.evaluate(evalkit.load(doc), processes=processes, progress=False)
    """
)


def _run(script: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(script), str(SAMPLES)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_split_rows_give_the_same_results_as_one_process():
    out = _run(
        """
        one, split = run(1), run(3)
        pd.testing.assert_frame_equal(one, split)
        assert one.attrs["evalkit"]["scored"] == split.attrs["evalkit"]["scored"]
        statuses = {n: sorted(set(one[k + "_result"].dropna())) for n, k in
                    ((s["name"], s["key"]) for s in one.attrs["evalkit"]["scored"])}
        print(json.dumps({"rows": len(one), "started": started, "names": names, "statuses": statuses}))
        """
    )
    assert out["started"] == [None, 2]  # one process, then two children beside this one
    assert out["names"] == [
        "Citations",
        "ExactMatch",
        "PartialMatch",
        "RetrievalQuery",
        "RetrievalResult",
        "ToolCallExecution",
        "ToolCallSelection",
    ]
    for name in ("Citations", "ExactMatch", "PartialMatch", "RetrievalResult", "ToolCallSelection"):
        assert {"pass", "fail"} <= set(out["statuses"][name]), (name, out["statuses"])
    assert "error" in out["statuses"]["ExactMatch"]  # rows without expected_response, in every part


@pytest.mark.parametrize("failure", ["exit", "garbage"])
def test_a_failed_child_costs_time_not_results(failure):
    out = _run(
        f"""
        failure = {failure!r}
        one = run(1)
        real_child = forked_parts._score_in_child
        def broken_child(parent, fd, rows, jobs):
            if failure == "exit":
                os._exit(3)  # dies before sending anything
            with os.fdopen(fd, "wb") as out:  # one frame that is not a pickle, then nothing
                out.write(forked_parts._HEADER.pack(5) + b"xxxxx")
            os._exit(0)
        forked_parts._score_in_child = broken_child
        split = run(2)
        pd.testing.assert_frame_equal(one, split)
        children = []
        try:
            children.append(os.waitpid(-1, os.WNOHANG))
        except ChildProcessError:
            pass
        print(json.dumps({{"started": started, "left": children}}))
        """
    )
    assert out["started"] == [None, 1]
    assert out["left"] == []  # every child reaped


def test_a_run_that_stops_early_kills_and_reaps_its_children():
    out = _run(
        """
        from evalkit.engine.rows import CaseRows
        from evalkit.engine.forked_parts import ForkedParts
        from evalkit.evaluators.deterministic.matching import ExactMatch, PartialMatch
        table = evalkit.load(doc)
        rows = CaseRows(table)
        evaluators = {"ExactMatch": ExactMatch(), "PartialMatch": PartialMatch()}
        work = {name: rows.asking(name) for name in evaluators}
        forked = ForkedParts.start(rows, evaluators, work, 2)
        child = forked._children[0].pid
        forked.score("ExactMatch", evaluators["ExactMatch"], work["ExactMatch"])
        forked.close()  # PartialMatch never asked for: the child is killed, not waited for forever
        try:
            os.kill(child, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        print(json.dumps({"alive": alive}))
        """
    )
    assert out == {"alive": False}


def test_small_tables_one_process_and_judges_stay_here():
    out = _run(
        """
        forked_parts.SPLIT_ROWS = 10**9
        run(4)
        forked_parts.SPLIT_ROWS = 40
        from evalkit.evaluators.custom.loading import CallableEvaluator
        from evalkit.engine.rows import CaseRows
        print(json.dumps({"started": started,
                          "splittable": [forked_parts.splittable(e) for e in (
                              CallableEvaluator("f", lambda **k: {"score": 1}),
                              __import__("evalkit.evaluators.deterministic.matching",
                                         fromlist=["ExactMatch"]).ExactMatch())]}))
        """
    )
    assert out == {"started": [None], "splittable": [False, True]}
