"""The notebook tools: JudgeStudio's model and widgets, the labelling widget, styled result tables.

The studio runs against the local model server (``model_server`` fixture), so every run goes through
promptflow, the judge pool and the cache exactly as in a real evaluation.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.errors import EvalkitError
from evalkit.judges.prompty import load as load_prompty
from evalkit.notebook import JudgeStudio, LabellingWidget, styled
from evalkit.notebook.judge_files import MANAGED_MARK

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"


def config(server) -> dict:
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


@pytest.fixture
def demo() -> pd.DataFrame:
    return evalkit.load(DEMO)


@pytest.fixture
def studio(tmp_path, demo) -> JudgeStudio:
    """A new judge in an empty custom-evaluators folder, on the demo table, with no model yet."""
    return JudgeStudio("answer_quality", custom_dir=tmp_path / "custom-evaluators", df=demo)


def sent(server, role: str, since: int = 0) -> list[str]:
    """The ``role`` messages of the requests the server received (from request number ``since`` on)."""
    return [m["content"] for r in server.requests[since:] for m in r["body"]["messages"] if m["role"] == role]


# Opening and editing ------------------------------------------------------------------------------------
def test_a_new_judge_starts_from_the_scaffold_and_writes_nothing(studio, tmp_path):
    from evalkit.evaluators.scaffold import scaffold

    scaffold("answer_quality", tmp_path / "reference", llm=True, reference=False)  # prompt and response only
    expected = (tmp_path / "reference/answer_quality/answer_quality.prompty").read_text()
    assert studio.is_new
    assert studio.prompt_text == expected
    assert list(studio.sections) == ["system", "user"]
    assert "{{user_prompt}}" in studio.sections["user"]
    assert not (tmp_path / "custom-evaluators" / "answer_quality").exists()


def test_an_existing_judge_opens_unchanged(tmp_path):
    shutil.copytree(REPO / "custom-evaluators/professional_tone", tmp_path / "professional_tone")
    studio = JudgeStudio("professional_tone", custom_dir=tmp_path)
    assert not studio.is_new and not studio.dirty
    assert studio.prompt_text == (tmp_path / "professional_tone/professional_tone.prompty").read_text()
    assert studio.sections["user"].startswith("QUESTION:\n{{user_prompt}}")
    studio.set_section("system", "Be strict.")
    assert studio.dirty


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("forbidden_terms", "code-only"),
        ("relevance", "collides"),
        ("response", "case-table column"),
        ("9x", "valid"),
    ],
)
def test_what_the_studio_refuses_to_open(name, message):
    with pytest.raises(EvalkitError, match=message):
        JudgeStudio(name, custom_dir=REPO / "custom-evaluators")


def test_set_section_replaces_one_section_and_the_prompt_still_loads(studio, tmp_path):
    user_before = studio.sections["user"]
    studio.set_section("system", 'Grade strictly.\nReply with JSON: {"score": 1-5, "reason": "..."}')
    assert studio.sections["system"].startswith("Grade strictly.")
    assert studio.sections["user"] == user_before
    studio.set_section("assistant", '{"score": 3, "reason": "example"}')
    assert [role for role, _ in studio.section_list()] == ["system", "user", "assistant"]

    path = tmp_path / "draft.prompty"
    path.write_text(studio.prompt_text)
    messages = load_prompty(path).render(user_prompt="Q?", response="A.")
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]
    assert messages[0]["content"].startswith("Grade strictly.")
    assert "Q?" in messages[1]["content"] and "A." in messages[1]["content"]

    with pytest.raises(ValueError, match="unknown section"):
        studio.set_section("critic", "x")


def test_prompt_text_can_be_replaced_whole(studio):
    studio.prompt_text = "---\nname: x\ninputs:\n  response:\n    type: string\n---\nuser:\n{{response}}\n"
    assert studio.sections == {"user": "{{response}}"}
    assert studio.front_matter["inputs"] == {"response": {"type": "string"}}


# The inputs check ---------------------------------------------------------------------------------------
def test_variables_map_columns_and_flag_undeclared_reserved_and_unfillable_ones(studio):
    studio.set_front_matter(studio.front_matter_text + "  rubric:\n    type: string\n")
    studio.set_section("user", "{{user_prompt}}\n{{response}}\n{{context}}\n{{prompt}}\n{{rubric}}")
    table = studio.variables().set_index("variable")
    assert table.loc["user_prompt", "column"] == "prompt"
    assert table.loc["response", "column"] == "response"
    assert table.loc["user_prompt", "problem"] == "" and table.loc["response", "problem"] == ""
    assert table.loc["user_prompt", "filled"] == "12/12"  # every demo row has a prompt
    assert not table.loc["context", "declared"] and table.loc["context", "used"]
    assert "not declared" in table.loc["context", "problem"]
    assert "reserved" in table.loc["prompt", "problem"]
    assert "no case-table column" in table.loc["rubric", "problem"]
    problems = "\n".join(studio.problems())
    assert "{{context}}" in problems and "{{prompt}}" in problems and "{{rubric}}" in problems


def test_declare_input_fixes_an_undeclared_variable(studio):
    studio.set_section("user", studio.sections["user"] + "\n# Context\n{{context}}")
    assert any("{{context}}" in p for p in studio.problems())
    studio.declare_input("context")
    assert studio.front_matter["inputs"]["context"] == {"type": "string"}
    assert list(studio.front_matter["inputs"]) == ["user_prompt", "response", "context"]
    assert studio.problems() == []
    assert studio.variables().set_index("variable").loc["context", "problem"] == ""


def test_invalid_front_matter_is_reported_and_never_run_or_saved(studio):
    studio.set_front_matter("name: x\ninputs: [unclosed\n")
    assert "not valid YAML" in studio.problems()[0]
    with pytest.raises(ValueError, match="not valid YAML"):
        studio.save()
    with pytest.raises(ValueError, match="not valid YAML"):
        studio.run(studio.df.head(1))
    assert not studio.home.exists()


# Sampling -----------------------------------------------------------------------------------------------
def test_random_samples_are_reproducible_and_skip_rows_without_a_response(studio, demo):
    first = studio.sample(n=5, seed=3).index.tolist()
    assert studio.sample(n=5, seed=3).index.tolist() == first
    assert studio.sample(n=5, seed=4).index.tolist() != first
    everything = studio.sample(n=100)
    no_response = demo.index[demo["response"].isna()].tolist()
    assert no_response and not set(no_response) & set(everything.index)
    assert len(everything) == len(demo) - len(no_response)
    assert studio.rows is everything


def test_query_and_failing_samples(studio, demo):
    policy = studio.sample(n=10, query="prompt.str.contains('policy')")
    assert policy["prompt"].str.contains("policy").all() and len(policy) >= 2
    assert studio.sample(n=2, how="query", query="item == 9").index.tolist() == [9, 10]

    with pytest.raises(ValueError, match="nothing says which rows fail"):
        studio.sample(how="failing")
    studio.df = evalkit.evaluate(demo, custom_dir=REPO / "custom-evaluators", progress=False)
    failing = studio.sample(n=10, how="failing")
    assert set(failing["status"]) <= {"fail", "partial"} and len(failing)
    assert "status" in studio.sample_note
    with pytest.raises(ValueError, match="choose one of"):
        studio.sample(how="worst")


# Running and versions ---------------------------------------------------------------------------------
def test_run_scores_the_draft_keeps_versions_and_compares_them(studio, model_server):
    studio.model_config = config(model_server)
    rows = studio.sample(n=4, seed=0)
    v1 = studio.run(progress=False)
    assert model_server.request_count == 4
    assert v1.number == 1 and v1.sha256 == studio.sha256 and len(v1.sha256) == 64 and v1.timestamp
    assert list(v1.results.index) == list(rows.index)
    assert all(1 <= s <= 5 for s in v1.scores.values())
    assert set(v1.results["result"]) <= {"pass", "fail"}

    # The edited draft, not a saved file, is what the judge model receives.
    studio.set_section(
        "system", 'Compare with the REFERENCE. Reply with JSON {"score": 1-5, "reason": "..."}'
    )
    studio.set_section("user", "# Request\n{{user_prompt}}\n\n# Reference answer\n{{expected_response}}\n\n"
                       "# Answer\n{{response}}")  # fmt: skip
    studio.declare_input("expected_response")
    v2 = studio.run(progress=False)
    assert model_server.request_count == 8
    assert all(text.startswith("Compare with the REFERENCE") for text in sent(model_server, "system", 4))
    users = sent(model_server, "user", 4)
    for reference in rows["expected_response"]:
        assert any("# Reference answer\n" + reference in text for text in users), reference
    assert v2.sha256 != v1.sha256 and len(studio.versions) == 2

    table = studio.compare_versions(1, 2)
    assert list(table.index) == list(rows.index)
    assert {"v1_score", "v2_score", "delta", "v1_result", "v2_result", "v1_reason", "v2_reason"} <= set(table)
    assert (table["delta"] == table["v2_score"] - table["v1_score"]).all()
    assert table["changed"].any()  # the heuristic judge scores against the reference now
    assert table["prompt"].tolist() == rows["prompt"].tolist()
    assert studio.results().equals(table)
    assert "+# Reference answer" in studio.diff(1, 2)
    summary = studio.versions_table()
    assert summary.index.tolist() == [1, 2] and summary.loc[1, "calls"] == 4

    with pytest.raises(ValueError, match="two different versions"):
        studio.compare_versions(2, -1)
    with pytest.raises(IndexError):
        studio.version(3)


def test_an_unchanged_prompt_is_answered_by_the_cache(studio, model_server):
    studio.model_config = config(model_server)
    studio.sample(n=3)
    first = studio.run(progress=False)
    scores = dict(first.scores)
    second = studio.run(progress=False)
    assert second is first and len(studio.versions) == 1  # one prompt, one version
    assert [(r.calls, r.cache_hits) for r in first.runs] == [(3, 0), (0, 3)]
    assert model_server.request_count == 3
    assert second.scores == scores
    failing_rows = studio.sample(n=5, how="failing")  # from the latest version now
    assert set(failing_rows.index) == set(second.results.index[second.results["result"] == "fail"])


def test_a_row_keeps_its_own_configuration_of_the_judge(studio, model_server, demo):
    studio.model_config = config(model_server)
    table = demo.copy()
    table["evaluators"] = [{"answer_quality": {"threshold": 5}} if i == 0 else {} for i in range(len(table))]
    studio.df = table
    version = studio.run(table.loc[[0, 1]], progress=False)
    first = version.results.loc[0]
    assert (first["result"] == "pass") == (first["score"] >= 5)
    scored = studio.last_scored
    assert scored.loc[0, "answer_quality_threshold"] == 5
    assert scored.loc[1, "answer_quality_threshold"] == 3


# Saving -------------------------------------------------------------------------------------------------
def test_save_writes_a_judge_that_evaluate_loads(studio, model_server, demo, caplog):
    studio.set_section("user", studio.sections["user"] + "\n\n# Reference answer\n{{expected_response}}")
    studio.declare_input("expected_response")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean draft saves without warnings
        paths = studio.save()
    home = studio.home
    assert [p.name for p in paths] == ["answer_quality.prompty", "answer_quality.py"]
    assert (home / "answer_quality.prompty").read_text() == studio.prompt_text
    wrapper = (home / "answer_quality.py").read_text()
    assert MANAGED_MARK in wrapper and "expected_response=expected_response" in wrapper
    assert not studio.dirty and not studio.is_new

    cases = demo.loc[[0, 1], ["item", "turn", "prompt", "response", "expected_response"]]
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        scored = evalkit.evaluate(
            cases,
            custom_dir=studio.custom_dir,
            evaluators={"answer_quality": {}},
            model_config=config(model_server),
            progress=False,
        )
    assert not [r for r in caplog.records if "answer_quality" in r.getMessage()]
    assert scored["answer_quality_result"].isin(["pass", "fail"]).all()
    assert scored["answer_quality"].between(1, 5).all()
    # The saved wrapper passes the reference answer on to the template.
    assert any(cases.loc[1, "expected_response"] in text for text in sent(model_server, "user"))

    reopened = JudgeStudio("answer_quality", custom_dir=studio.custom_dir)
    assert reopened.prompt_text == studio.prompt_text and not reopened.is_new


def test_save_keeps_a_hand_written_wrapper_and_flags_what_it_does_not_pass(tmp_path):
    shutil.copytree(REPO / "custom-evaluators/professional_tone", tmp_path / "professional_tone")
    wrapper = (tmp_path / "professional_tone/professional_tone.py").read_text()
    studio = JudgeStudio("professional_tone", custom_dir=tmp_path)
    studio.set_section("user", studio.sections["user"] + "\n\nCONTEXT:\n{{context}}")
    studio.declare_input("context")
    assert "does not pass it" in studio.variables().set_index("variable").loc["context", "problem"]
    with pytest.warns(UserWarning, match="does not pass it"):
        studio.save()
    assert (tmp_path / "professional_tone/professional_tone.py").read_text() == wrapper
    assert "{{context}}" in (tmp_path / "professional_tone/professional_tone.prompty").read_text()


def test_render_shows_what_the_judge_would_receive(tmp_path, demo):
    shutil.copytree(REPO / "custom-evaluators/professional_tone", tmp_path / "professional_tone")
    studio = JudgeStudio("professional_tone", custom_dir=tmp_path, df=demo)
    messages = studio.render(0)
    assert demo.loc[0, "prompt"] in messages[1]["content"]
    assert demo.loc[0, "response"] in messages[1]["content"]


# Widgets ------------------------------------------------------------------------------------------------
def test_the_studio_widget_builds_and_syncs_both_ways(studio):
    import ipywidgets

    container = studio.widget()
    assert isinstance(container, ipywidgets.VBox)
    assert studio.widget() is container  # built once
    view = studio.view
    assert view.sections["system"].value == studio.sections["system"]

    view.sections["user"].value = "# Request\n{{user_prompt}}\n# Answer\n{{response}}\n{{context}}"
    assert studio.sections["user"].endswith("{{context}}")
    assert "not declared" in view.variables.value

    view.front_matter.value = studio.front_matter_text + "  context:\n    type: string\n"
    assert "context" in studio.front_matter["inputs"]
    assert "No problems found" in view.problems.value

    studio.set_section("system", "Set from code.")
    assert view.sections["system"].value == "Set from code."
    assert "new, not saved yet" in view.title.value

    studio.prompt_text = "---\ninputs:\n  response:\n    type: string\n---\nuser:\n{{response}}\n"
    assert len(view.section_editors) == 1 and view.editors.titles == ("front matter", "user")
    assert view.sections["user"].value == "{{response}}"


def test_the_studio_widget_samples_runs_and_reports_errors(studio, model_server):
    studio.model_config = config(model_server)
    studio.widget()
    view = studio.view
    view.how.value = "failing"
    view.sample_button.click()  # nothing says which rows fail: reported, not raised
    assert "sample failed" in view.status.value
    view.how.value, view.n.value = "random", 3
    view.sample_button.click()
    assert studio.rows is not None and len(studio.rows) == 3
    view.run_button.click()
    assert len(studio.versions) == 1 and "Version 1" in view.status.value
    assert "v1_score" in view.results.value
    view.sections["system"].value = 'Different. Reply with JSON {"score": 1-5, "reason": "..."}'
    view.run_button.click()
    view.compare_a.value, view.compare_b.value = 1, 2
    view.compare_button.click()
    assert "v2_score" in view.comparison.value and "+Different." in view.comparison.value


# Labelling ----------------------------------------------------------------------------------------------
@pytest.fixture
def judged(tmp_path) -> pd.DataFrame:
    """The demo scored by its code-only evaluators, loaded from a copy so labels land in tmp_path."""
    shutil.copy(DEMO, tmp_path / "demo.json")
    return evalkit.evaluate(evalkit.load(tmp_path / "demo.json"), custom_dir=REPO / "custom-evaluators",
                            progress=False)  # fmt: skip


def test_labels_are_saved_beside_the_document_and_reloaded(judged, tmp_path):
    widget = LabellingWidget(judged, "forbidden_terms")
    assert widget.labels_path == tmp_path / "demo.labels.json"
    assert widget.current()["judge_hidden"] and widget.current()["judge_reason"] is None  # blind by default
    assert widget.current()["label"] is None
    widget.set_label(4, note="fine")
    assert widget.current()["judge_reason"]  # shown once labelled
    widget.go(len(widget) - 1)  # the last turn of the thread
    widget.set_note("typed before the label")
    assert not any(entry["turn"] == 2 for entry in json.loads(widget.labels_path.read_text())["labels"])
    widget.set_label("2")

    saved = json.loads(widget.labels_path.read_text())["labels"]
    assert [(e["item"], e["turn"], e["evaluator"], e["score"], e["note"]) for e in saved] == [
        (0, None, "forbidden_terms", 4, "fine"),
        (9, 2, "forbidden_terms", 2, "typed before the label"),
    ]
    again = LabellingWidget(judged, "forbidden_terms")
    assert again.current()["label"] == 4 and again.current()["note"] == "fine"
    assert again.labelled_count() == 2
    frame = again.labels_frame()
    assert frame["label"].tolist() == [4, 2] and frame["turn"].tolist()[1] == 2
    assert again.next_unlabelled()["position"] == 1


def test_label_scales_are_enforced(judged, tmp_path):
    score = LabellingWidget(judged, "forbidden_terms", labels_path=tmp_path / "a.labels.json")
    for bad in (6, 0, "pass", 2.5, True):
        with pytest.raises(EvalkitError):
            score.set_label(bad)
    verdict = LabellingWidget(
        judged, "forbidden_terms", labels_path=tmp_path / "b.labels.json", scale="pass/fail"
    )
    verdict.set_label("FAIL")
    assert verdict.current()["label"] == "fail"
    assert json.loads((tmp_path / "b.labels.json").read_text())["labels"][0]["verdict"] == "fail"
    with pytest.raises(EvalkitError):
        verdict.set_label(3)
    with pytest.raises(ValueError, match="scale"):
        LabellingWidget(judged, "forbidden_terms", scale="1-10")


def test_the_labelling_widget_labels_advances_and_navigates(judged, tmp_path):
    import ipywidgets

    judged.loc[0, "response"] = "<script>alert(1)</script>"
    model = LabellingWidget(judged, "forbidden_terms", labels_path=tmp_path / "w.labels.json", advance=True)
    assert isinstance(model.widget(), ipywidgets.VBox)
    view = model.view
    assert view.previous.disabled and "row 1 of" in view.header.value
    view.buttons[5].click()
    assert model.position == 1 and model.labelled_count() == 1
    view.note.value = "a note"
    view.buttons[3].click()
    view.previous.click()
    assert model.current()["label"] == 3 and model.current()["note"] == "a note"
    assert view.buttons[3].button_style == "info" and view.buttons[5].button_style == ""
    assert view.note.value == "a note"
    view.previous.click()
    assert "&lt;script&gt;alert(1)" in view.body.value and "<script>" not in view.body.value


def test_a_table_without_a_document_needs_a_labels_path(judged):
    table = judged.copy()
    table.attrs = {}
    with pytest.raises(EvalkitError, match="labels file path"):
        LabellingWidget(table, "forbidden_terms")


# styled -------------------------------------------------------------------------------------------------
def test_styled_escapes_hostile_text_everywhere():
    hostile = "<script>alert('x')</script>"
    df = pd.DataFrame({"response": [hostile], hostile: ["ok"], "status": ["pass"]}, index=[hostile])
    out = styled(df).to_html()
    assert "<script>" not in out
    assert out.count("&lt;script&gt;") == 3  # the cell, the column name and the index label


def test_styled_truncates_long_text_without_splitting_an_entity():
    df = pd.DataFrame({"reason": ["x" * 300, "<" * 300]})
    out = styled(df).to_html()
    assert "x" * 119 + "\u2026" in out and "x" * 120 not in out
    assert "&lt;" * 119 + "\u2026" in out and "&lt;" * 120 not in out
    assert "y" * 20 + "\u2026" in styled(pd.DataFrame({"a": ["y" * 40]}), max_chars=21).to_html()


def test_styled_colours_outcomes_only_in_status_and_result_columns():
    df = pd.DataFrame(
        {
            "status": ["pass", "fail", "error", "partial"],
            "Relevance_result": ["fail", "pass", None, "error"],
            "note": ["pass", "fail", "error", "partial"],
            "score": [5.0, 1.0, float("nan"), 3.0],
        }
    )
    out = styled(df).set_uuid("t").to_html()
    css: dict[tuple[int, int], str] = {}
    for selectors, props in re.findall(r"([^{}]+)\{([^}]*)\}", out.split("</style>")[0]):
        for cell in re.findall(r"#T_t_row(\d+)_col(\d+)", selectors):
            css[int(cell[0]), int(cell[1])] = css.get((int(cell[0]), int(cell[1])), "") + props
    assert "#d3f2dc" in css[(0, 0)] and "#f8d7da" in css[(1, 0)]
    assert "#fff0b3" in css[(2, 0)] and "#ffdcb8" in css[(3, 0)]
    assert "#f8d7da" in css[(0, 1)] and "#fff0b3" in css[(3, 1)]
    assert not any(c == 2 and "background" in props for (_, c), props in css.items())  # free text: plain
    assert "background" not in css.get((2, 1), "")  # and so is a missing outcome
    assert ">5<" in out and ">2.50<" in styled(pd.DataFrame({"x": [2.5]})).to_html()


def test_styled_accepts_duplicate_labels():
    df = pd.DataFrame([["pass", "a"], ["fail", "b"]], columns=["status", "status"], index=[0, 0])
    assert "#f8d7da" in styled(df).to_html()


def test_a_displayed_studio_is_the_widget_then_its_static_copy_as_an_output_of_its_own(studio):
    """nbconvert shows a widget view (blank offline) whenever the widget state is saved, so the static copy is a
    second, text/html-only output; it hides itself beside a drawn widget (issue 18, item 9)."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    published = []
    shell.display_pub.publish = lambda data, metadata=None, **kw: published.append(data)
    try:
        shell.display_formatter.format(studio.view.container)  # what the cell's displayhook does
    finally:
        InteractiveShell.clear_instance()
    assert len(published) == 2
    widget, copy = published
    assert "application/vnd.jupyter.widget-view+json" in widget and "text/html" not in widget
    assert widget["text/plain"].startswith("<JudgeStudio 'answer_quality'")
    assert set(copy) == {"text/html", "text/plain"} and "evalkit-widget-snapshot" in copy["text/html"]
    assert "answer_quality" in copy["text/html"] and ":has(.jupyter-widgets .widget-box)" in copy["text/html"]
