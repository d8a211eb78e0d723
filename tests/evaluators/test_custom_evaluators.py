"""Custom evaluators: every rule of the seed "Add custom evaluators", through evalkit.evaluate."""

from __future__ import annotations

import logging

import pytest

import evalkit
from evalkit.errors import EnvironmentConfigError, EvaluatorConfigError

ECHO = """
class Echo:
    def __init__(self, *, threshold, options=None):
        self.threshold = threshold
        self.options = options or {}

    def __call__(self, *, prompt, response, expected_response, context):
        seen = "|".join([prompt, response, expected_response, context])
        return {"score": self.options.get("score", 1), "reason": seen, "result": "fail", "threshold": 99}
"""


def doc(*items, defaults=None, version="1.11.0"):
    data = {"schemaVersion": version, "items": list(items)}
    data["default_evaluators"] = defaults if defaults is not None else {}
    return data


def run(document, **kwargs):
    return evalkit.evaluate(evalkit.load(document), **kwargs)


def entries(scored):
    return [item.get("scores") for item in evalkit.to_document(scored)["items"]]


def test_score_and_reason_give_result_and_threshold_and_returned_ones_are_ignored(project):
    project.evaluator("echo", ECHO)
    scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"echo": {}}}))
    assert entries(scored)[0] == {"echo": {"echo": 1.0, "result": "pass", "threshold": 1, "reason": "P|R||"}}
    assert scored.loc[0, "echo"] == 1.0 and scored.loc[0, "echo_result"] == "pass"
    assert scored.loc[0, "status"] == "pass"


def test_threshold_and_options_come_from_the_document(project):
    project.evaluator("echo", ECHO)
    item = {"prompt": "P", "response": "R", "context": "C", "expected_response": "E"}
    item["evaluators"] = {"echo": {"threshold": 0.7, "options": {"score": 0.5}}}
    scored = run(doc(item))
    assert entries(scored)[0]["echo"] == {
        "echo": 0.5,
        "result": "fail",
        "threshold": 0.7,
        "reason": "P|R|E|C",
    }
    assert scored.loc[0, "status"] == "fail"


def test_first_top_level_class_is_used(project):
    project.evaluator(
        "first",
        """
        from collections import OrderedDict  # an imported class must not count

        class Uses:
            def __init__(self, **_):
                pass
            def __call__(self, **_):
                return {"score": 3, "reason": "first"}

        class Other:
            def __init__(self, **_):
                raise RuntimeError("the second class must not be instantiated")
        """,
    )
    scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"first": {}}}))
    assert scored.loc[0, "first_reason"] == "first"


@pytest.mark.parametrize(
    ("body", "message", "code"),
    [
        (
            'return {"error": "no terms configured", "score": 5}',
            "Evaluator failed: no terms configured",
            "evaluatorError",
        ),
        (
            'return {"result": "error", "error": "legacy shape"}',
            "Evaluator failed: legacy shape",
            "evaluatorError",
        ),
        ('raise ValueError("boom")', "Evaluator failed: ValueError: boom", "evaluatorError"),
        (
            'return {"score": "high", "reason": "x"}',
            "Evaluator failed: could not parse score: 'high' is not a number",
            "invalidEvaluatorResult",
        ),
        (
            'return {"score": float("nan")}',
            "could not parse score: nan is not a finite number",
            "invalidEvaluatorResult",
        ),
        (
            'return {"reason": "forgot"}',
            "could not parse score: the result has no 'score' key",
            "invalidEvaluatorResult",
        ),
        ("return [1]", "returned list, expected a dict", "invalidEvaluatorResult"),
        ("return None", "returned NoneType, expected a dict", "invalidEvaluatorResult"),
    ],
)
def test_errors_become_error_results_and_the_run_goes_on(project, body, message, code):
    project.evaluator(
        "bad",
        f"""
        class Bad:
            def __init__(self, **_):
                pass
            def __call__(self, **_):
                {body}
        """,
    )
    project.evaluator("echo", ECHO)
    scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"bad": {}, "echo": {}}}))
    scores = entries(scored)[0]
    assert message in scores["bad"]["error"]
    assert scores["bad"]["result"] == "error" and scores["bad"]["code"] == code
    assert set(scores["bad"]) == {"result", "error", "code"}
    assert scores["echo"]["result"] == "pass"
    assert scored.loc[0, "status"] == "partial"
    assert scored.loc[0, "error_message"] == "Agent response obtained. 1 of 2 evaluators failed to run."


def test_signature_mistakes_say_that_a_catch_all_fixes_them(project):
    project.evaluator(
        "narrow_call",
        """
        class Narrow:
            def __init__(self, **_):
                pass
            def __call__(self, *, response):
                return {"score": 1}
        """,
    )
    project.evaluator(
        "narrow_init",
        """
        class Narrow:
            def __init__(self, *, options=None):
                pass
            def __call__(self, **_):
                return {"score": 1}
        """,
    )
    scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"narrow_call": {}, "narrow_init": {}}}))
    for key in ("narrow_call", "narrow_init"):
        assert "**_" in scored.loc[0, f"{key}_error"]
        assert "TypeError" in scored.loc[0, f"{key}_error"]
    assert "unexpected keyword argument 'threshold'" in scored.loc[0, "narrow_init_error"]


def test_integer_and_boolean_like_scores(project):
    project.evaluator(
        "count",
        """
        class Count:
            def __init__(self, **_):
                pass
            def __call__(self, *, response="", **_):
                return {"score": len(response), "reason": 7}
        """,
    )
    scored = run(doc({"prompt": "P", "response": "", "evaluators": {"count": {}}}))
    # An empty recorded response is obtained, and scored.
    assert scored.loc[0, "count"] == 0 and scored.loc[0, "count_result"] == "fail"
    assert scored.loc[0, "count_reason"] == "7"


def test_configuration_problems_are_all_reported_before_running(project):
    project.evaluator("broken_syntax", "def oops(:\n")
    project.evaluator("needs_dep", "import package_that_does_not_exist\nclass X: pass\n")
    (project.custom / "no_module").mkdir()
    document = doc(
        {
            "prompt": "P",
            "response": "R",
            "evaluators": {
                "ghost": {},
                "broken_syntax": {},
                "needs_dep": {},
                "no_module": {},
                "exactmatch": {},
            },
        }
    )
    with pytest.raises(EvaluatorConfigError) as info:
        run(document)
    text = str(info.value)
    assert "Unknown evaluator 'ghost'" in text
    assert "Custom evaluator 'broken_syntax' failed to import: SyntaxError" in text
    assert "Custom evaluator 'needs_dep' failed to import: ModuleNotFoundError" in text
    assert "Custom evaluator 'no_module' is missing required file 'no_module.py'" in text
    assert "Evaluator 'exactmatch' (items[0]) collides with the built-in evaluator 'ExactMatch'" in text
    assert info.value.exit_code == 2


def test_only_referenced_evaluators_are_loaded(project):
    project.evaluator("broken", "raise SystemExit('never imported')\n")
    project.evaluator("echo", ECHO)
    scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"echo": {}}}))
    assert scored.loc[0, "status"] == "pass"


def test_custom_dir_overrides_the_project_folder(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "echo").mkdir()
    (elsewhere / "echo" / "echo.py").write_text(ECHO)
    scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"echo": {}}}), custom_dir=elsewhere)
    assert scored.loc[0, "echo_result"] == "pass"


def test_llm_machinery_in_a_code_only_evaluator_warns_and_still_runs(project, caplog):
    project.evaluator(
        "judge_like",
        """
        # uses promptflow's load_flow with judge_like.prompty (which was forgotten)
        class Judge:
            def __init__(self, **_):
                pass
            def __call__(self, **_):
                return {"score": 1}
        """,
    )
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"judge_like": {}}}))
    assert any("prompty may be missing" in r.getMessage() for r in caplog.records)
    assert scored.loc[0, "judge_like_result"] == "pass"


def test_prompty_makes_an_llm_judge_that_needs_a_model(project):
    project.evaluator("tone", ECHO, prompty="---\nname: tone\n---\nsystem:\nx\n")
    with pytest.raises(EnvironmentConfigError, match="AZURE_AI_OPENAI_ENDPOINT") as info:
        run(doc({"prompt": "P", "response": "R", "evaluators": {"tone": {}}}))
    assert info.value.exit_code == 3


def test_configuration_errors_come_before_environment_errors(project):
    project.evaluator("tone", ECHO, prompty="---\nname: tone\n---\n")
    with pytest.raises(EvaluatorConfigError, match="Unknown evaluator 'ghost'"):
        run(doc({"prompt": "P", "response": "R", "evaluators": {"tone": {}, "ghost": {}}}))


def test_llm_judge_scores_must_be_integers_from_one_to_five(project):
    judge = """
    class Judge:
        def __init__(self, *, model_config, threshold, options=None):
            self.model_config = model_config
            self.value = (options or {})["value"]
        def __call__(self, **_):
            return {"score": self.value, "reason": self.model_config["model"]}
    """
    project.evaluator("judge", judge, prompty="---\nname: judge\n---\n")
    items = [
        {"prompt": "P", "response": "R", "evaluators": {"judge": {"options": {"value": v}}}}
        for v in (4.0, 3, 7, "high", 2.5)
    ]
    config = {"base_url": "http://127.0.0.1:9", "model": "m", "api_key": "k"}
    scored = run(doc(*items), model_config=config)
    assert scored["judge"].tolist()[:2] == [4.0, 3.0]
    assert scored["judge_result"].tolist() == ["pass", "pass", "error", "error", "error"]
    assert scored.loc[0, "judge_threshold"] == 3
    assert scored.loc[0, "judge_reason"] == "m"
    assert "could not parse score: 7 is not an integer from 1 to 5" in scored.loc[2, "judge_error"]


def test_ad_hoc_callables_run_on_every_row():
    def shouty(*, response="", **_):
        return {"score": int(response.isupper()), "reason": "caps" if response.isupper() else "calm"}

    document = doc({"prompt": "P", "response": "HEY"}, {"prompt": "Q", "response": "hi"}, {"prompt": "Z"})
    scored = run(document, evaluators={"shouty": shouty})
    assert scored["shouty_result"].tolist() == ["pass", "fail", None]
    assert scored["status"].tolist() == ["pass", "fail", "error"]


def test_dispatch_uses_one_instance_per_distinct_configuration(project):
    project.evaluator(
        "counted",
        """
        import itertools
        COUNTER = itertools.count()

        class Counted:
            def __init__(self, **_):
                self.serial = next(COUNTER)
            def __call__(self, **_):
                return {"score": self.serial, "reason": ""}
        """,
    )
    items = [
        {"prompt": "P", "response": "R", "evaluators": {"counted": {"options": {"k": i % 2}}}}
        for i in range(6)
    ]
    scored = run(doc(*items))
    assert sorted(set(scored["counted"].tolist())) == [0.0, 1.0]


@pytest.mark.parametrize(
    ("version", "has_code"), [("1.7.0", False), ("1.8.3", False), ("1.9.0", True), ("1.11.0", True)]
)
def test_error_codes_appear_from_schema_1_9_on(project, version, has_code):
    project.evaluator(
        "bad", "class Bad:\n    def __init__(self, **_): pass\n    def __call__(self, **_): return 5\n"
    )
    scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"bad": {}}}, version=version))
    assert ("code" in entries(scored)[0]["bad"]) is has_code
    assert scored.loc[0, "bad_code"] == "invalidEvaluatorResult"


def test_a_hand_built_table_can_be_evaluated_and_written():
    import pandas as pd

    table = pd.DataFrame(
        {"prompt": ["a", "b"], "response": ["Paris", "paris"], "expected_response": ["Paris"] * 2}
    )
    scored = evalkit.evaluate(table, evaluators={"ExactMatch": {}})
    assert scored["exactMatch_result"].tolist() == ["pass", "fail"]
    document = evalkit.to_document(scored)
    assert [item["status"] for item in document["items"]] == ["pass", "fail"]
    evalkit.validate(document, "hand-built")


def test_an_evaluator_that_calls_sys_exit_does_not_end_the_run(project):
    project.evaluator(
        "quitter",
        "import sys\nclass Q:\n    def __init__(self, **_): pass\n    def __call__(self, **_): sys.exit(3)\n",
    )
    scored = run(doc({"prompt": "P", "response": "R", "evaluators": {"quitter": {}}}))
    assert scored.loc[0, "quitter_error"] == "SystemExit: 3"
