"""JudgeStudio never hides an error, and a version is a prompt.

Errored rows show their message in the results table and in the status line; front-matter and template
mistakes are a sentence beside the editor and in the status, never a traceback, and the status never stays
"Running"; messages clear when the next action starts. Running a prompt again adds rows to its version;
versions compare on the rows both judged, judging the missing ones first when asked. Everything runs
against the local model server (``model_server`` fixture).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.notebook import JudgeStudio
from evalkit.testing import ModelServer

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"


def config(url: str) -> dict:
    return {"base_url": url, "model": "judge", "api_key": "k"}


@pytest.fixture
def studio(tmp_path) -> JudgeStudio:
    return JudgeStudio("answer_quality", custom_dir=tmp_path / "custom-evaluators", df=evalkit.load(DEMO),
                       cache=False)  # fmt: skip


@pytest.fixture
def ipython():
    """An IPython shell, as in a notebook: ipywidgets' Output then swallows exceptions raised inside it."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    yield shell
    InteractiveShell.clear_instance()


def sent_systems(server, since: int = 0) -> list[str]:
    return [
        m["content"] for r in server.requests[since:] for m in r["body"]["messages"] if m["role"] == "system"
    ]


def test_an_unreachable_model_shows_the_error_in_the_table_and_the_status(studio):
    server = ModelServer().start()
    url = server.openai_base_url
    server.stop()
    studio.model_config = config(url)
    studio.widget()
    view = studio.view
    studio.sample(n=3, seed=0)
    view.run_button.click()
    status = view.status.value
    assert "3 rows: 3 errors \u2014 cannot reach the judge model" in status, status
    assert "Running" not in status
    assert "v1_error" in view.results.value and "cannot reach the judge model" in view.results.value
    table = studio.results()
    assert table["v1_result"].eq("error").all() and table["v1_error"].str.contains("cannot reach").all()
    assert "3 errors" in repr(studio.latest)


def test_invalid_front_matter_is_a_message_beside_the_editor_and_never_leaves_running(
    studio, model_server, ipython
):
    studio.model_config = config(model_server.openai_base_url)
    view = studio.view
    good = view.front_matter.value
    view.front_matter.value = good + "inputs: [unclosed\n"
    assert "not valid YAML" in view.message.value
    view.run_button.click()
    assert "run failed: the front matter of answer_quality.prompty is not valid YAML" in view.status.value
    assert "Running" not in view.status.value and "Traceback" not in view.status.value
    assert model_server.request_count == 0 and not studio.versions

    view.front_matter.value = good
    assert view.message.value == ""
    view.how.value, view.n.value = "random", 2
    view.sample_button.click()
    assert view.status.value == ""  # the stale error went when the next action started
    view.run_button.click()
    assert view.status.value.startswith("Version 1 (") and "2 rows in" in view.status.value


def test_a_failure_inside_the_run_is_reported_even_under_ipython(studio, ipython):
    """In IPython, ipywidgets' Output swallows exceptions raised inside it: the run must catch them itself."""
    view = studio.view
    studio.df = None  # nothing to sample from: run() raises inside the progress Output
    view.run_button.click()
    assert "run failed: no case table to sample from" in view.status.value
    assert "Running" not in view.status.value
    assert not view.run_button.disabled


def test_a_template_that_does_not_parse_is_caught_before_any_model_call(studio, model_server):
    studio.model_config = config(model_server.openai_base_url)
    studio.set_section("user", "{{ response ")
    problem = studio.syntax_error()
    assert "does not parse" in problem and "answer_quality.prompty" in problem
    assert studio.problems() == [problem]
    assert problem in studio.view.message.value.replace("&#x27;", "'")
    with pytest.raises(ValueError, match="does not parse"):
        studio.run(studio.df.head(1), progress=False)
    with pytest.raises(ValueError, match="does not parse"):
        studio.save()
    assert model_server.request_count == 0
    studio.set_section("user", "{{ response | no_such_filter }}")
    assert "No filter named 'no_such_filter'" in studio.syntax_error()


def test_every_message_clears_when_the_next_action_starts(studio, model_server):
    studio.model_config = config(model_server.openai_base_url)
    view = studio.view
    view.how.value = "failing"
    view.sample_button.click()
    assert "sample failed" in view.status.value
    view.how.value = "random"
    view.sample_button.click()
    assert view.status.value == ""
    view.run_button.click()
    view.compare_button.click()  # one version only: nothing to compare with
    assert "compare failed" in view.comparison.value
    view.sample_button.click()
    assert "failed" not in view.comparison.value and view.status.value == ""


def test_a_prompt_is_one_version_and_more_rows_add_to_it(studio, model_server):
    studio.model_config = config(model_server.openai_base_url)
    first_prompt = studio.prompt_text
    v1 = studio.run(studio.df.loc[[0, 1]], progress=False, note="first rows")
    studio.set_section("system", 'Be strict. Reply with JSON {"score": 1-5, "reason": "..."}')
    v2 = studio.run(studio.df.loc[[2, 4]], progress=False)
    studio.prompt_text = first_prompt
    again = studio.run(studio.df.loc[[2, 4]], progress=False, note="more rows")
    assert again is v1 and [v.number for v in studio.versions] == [1, 2]
    assert list(v1.results.index) == [0, 1, 2, 4] and len(v1.runs) == 2
    assert v1.last_run.rows == [2, 4] and v1.note == "first rows; more rows"
    table = studio.versions_table()
    assert table["sha256"].is_unique and table.loc[1, "rows"] == 4 and table.loc[1, "runs"] == 2
    assert studio.latest is v1 and v2.number == 2


def test_compare_works_on_shared_rows_and_judges_the_missing_ones_when_asked(studio, model_server):
    studio.model_config = config(model_server.openai_base_url)
    studio.run(studio.df.loc[[0, 1]], progress=False)
    studio.set_section("system", 'Second prompt. Reply with JSON {"score": 1-5, "reason": "..."}')
    studio.run(studio.df.loc[[2, 4]], progress=False)

    with pytest.raises(ValueError, match="share no rows.*fill=True"):
        studio.compare_versions(1, 2)
    latest = studio.results()  # version 2's rows; version 1 judged none of them
    assert list(latest.index) == [2, 4] and latest["changed"].isna().all() and latest["delta"].isna().all()

    before = model_server.request_count
    table = studio.compare_versions(1, 2, fill=True)
    assert sorted(table.index) == [0, 1, 2, 4]
    assert table["changed"].notna().all() and table["delta"].notna().all()
    assert model_server.request_count == before + 4  # each version judged the other's two rows
    systems = sent_systems(model_server, before)
    assert sum(text.startswith("Second prompt.") for text in systems) == 2

    studio.run(studio.df.loc[[5]], progress=False)  # version 2 on one more row
    shared = studio.compare_versions(1, 2)
    assert sorted(shared.index) == [0, 1, 2, 4]  # row 5: only version 2 judged it


def test_the_widget_compares_with_fill_and_nothing_is_clipped(studio, model_server):
    studio.model_config = config(model_server.openai_base_url)
    view = studio.view
    studio.run(studio.df.loc[[0]], progress=False)
    studio.set_section("system", 'Other. Reply with JSON {"score": 1-5, "reason": "..."}')
    studio.run(studio.df.loc[[1]], progress=False)
    view.compare_a.value, view.compare_b.value = 1, 2
    view.compare_button.click()
    assert "share no rows" in view.comparison.value
    view.compare_fill.value = True
    view.compare_button.click()
    assert "2 rows both versions judged" in view.comparison.value

    for dropdown in (view.how, view.compare_a, view.compare_b):
        assert dropdown.style.description_width == "initial"
        assert dropdown.layout.width in (None, "auto")
    inputs_panel = view.variables
    assert inputs_panel.layout.overflow == "auto"
    assert not any(str(box.layout.width).endswith("%") and box.layout.overflow != "auto"
                   for box in view.container.children[1].children[1:])  # fmt: skip


def test_results_of_one_version_carry_its_errors_column(studio, model_server):
    studio.model_config = config(model_server.openai_base_url)
    version = studio.run(studio.df.loc[[0, 1]], progress=False)
    table = studio.results()
    assert {"v1_score", "v1_result", "v1_reason", "v1_error"} <= set(table.columns)
    assert isinstance(version.results, pd.DataFrame) and "error" in version.results


def test_styled_tables_show_rates_as_percentages(studio, model_server):
    from evalkit.notebook import styled

    studio.model_config = config(model_server.openai_base_url)
    studio.run(studio.df.loc[[0, 1, 2]], progress=False)
    rate = studio.versions_table().loc[1, "pass_rate"]
    page = styled(studio.versions_table()).to_html()
    assert f">{rate:.1%}<" in page


def test_broken_yaml_is_said_once_and_flags_no_variable_as_undeclared(studio):
    """After a YAML mistake the error is the message under the editor, once; the Inputs table does not call
    every declared variable "used but not declared" (issue 18, item 7)."""
    view = studio.view
    good = view.front_matter.value
    view.front_matter.value = good + "inputs: [unclosed\n"
    error = studio.syntax_error()
    assert "not valid YAML" in error
    shown = view.message.value + view.problems.value + view.variables.value
    assert shown.count("not valid YAML") == 1 and "not valid YAML" in view.message.value
    assert "used but not declared" not in view.variables.value
    assert "not checked until the front matter parses" in view.variables.value
    table = studio.variables()
    assert table["declared"].isna().all() and table["used"].any()
    assert "Checks run once the prompt parses" in view.problems.value
    view.front_matter.value = good  # fixed: the checks are back
    assert view.message.value == "" and "No problems found." in view.problems.value
    assert studio.variables()["declared"].all()
