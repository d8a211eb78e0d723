"""Shared fixtures: the upstream reference corpus (vendored under tests/reference/), a throwaway project folder with custom evaluators."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["evalkit.testing.pytest_plugin"]

REPO = Path(__file__).resolve().parents[1]


#: The upstream corpus, vendored under tests/reference/ (provenance and licence in its README and LICENSE).
REFERENCE = REPO / "tests" / "reference"


@pytest.fixture
def reference() -> Path:
    """The vendored upstream corpus; a missing corpus fails the test (it belongs to the repository)."""
    if not (REFERENCE / "m365-copilot-eval" / "schema").is_dir():
        pytest.fail(
            f"the vendored reference corpus is missing from {REFERENCE}: restore it with git checkout"
        )
    return REFERENCE


@pytest.fixture
def upstream_schema(reference):
    import json

    return json.loads((reference / "m365-copilot-eval/schema/v1/eval-document.schema.json").read_text())


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project folder as the current directory, with a helper to add custom evaluators."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "custom-evaluators").mkdir()

    class Project:
        root = tmp_path
        custom = tmp_path / "custom-evaluators"

        def evaluator(self, name: str, source: str, prompty: str | None = None) -> Path:
            home = self.custom / name
            home.mkdir(parents=True, exist_ok=True)
            (home / f"{name}.py").write_text(textwrap.dedent(source))
            if prompty is not None:
                (home / f"{name}.prompty").write_text(prompty)
            return home

    return Project()


@pytest.fixture(autouse=True)
def _no_judge_environment(monkeypatch, tmp_path_factory):
    """Tests never see the developer's judge model settings, nor touch the user's judge cache."""
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path_factory.mktemp("judge-cache")))
    for name in (
        "AZURE_AI_OPENAI_ENDPOINT",
        "AZURE_AI_API_KEY",
        "AZURE_AI_MODEL_NAME",
        "AZURE_AI_API_VERSION",
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_DEPLOYMENT",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)


# --- the fast tier: what is slow is marked here, by what it needs, so no test file has to remember --------

#: Fixtures that start a browser, a Spark session or a notebook kernel: a test using one is slow.
SLOW_FIXTURES = frozenset({"browser", "open_page", "spark", "generated_path"})
#: Folders whose tests all drive a browser, Spark or papermill.
SLOW_FOLDERS = ("reporting/browser", "spark", "docs")
#: Files whose tests execute notebooks with papermill, kill runs, or share a fixture that does.
SLOW_FILES = frozenset(
    {
        "analysis/test_history.py",
        "notebook/test_notebooks.py",
        "notebook/test_papermill_errors.py",
        "notebook/test_parameters.py",
        "reporting/test_report.py",
        "reporting/test_report_parameters.py",
        "reporting/test_report_scratch.py",
        "reporting/test_result_set.py",
    }
)
#: Single tests of about 4 s or more (subprocess runs with agents, judges or kills), from ``--durations``.
SLOW_TESTS = frozenset(
    {
        "agents/test_agent_runs.py::test_run_with_the_demo_agent_writes_results_and_spans",
        "cli/test_bad_input.py::test_a_name_at_the_length_limit_is_scaffolded_and_runs",
        "cli/test_bad_input.py::test_nesting_at_the_limit_runs_and_writes_its_results",
        "cli/test_compare_cli.py::test_one_paired_row_of_few_shared_rows",
        "cli/test_compare_cli.py::test_one_regressed_row_and_the_warnings_of_the_page",
        "cli/test_new_llm_reference.py::test_the_scaffolded_judge_sees_the_reference_answer_and_the_context",
        "cli/test_run.py::test_debug_log_shows_discovery_and_timings",
        "cli/test_run.py::test_demo_results_validate_against_the_upstream_schema",
        "cli/test_run.py::test_demo_run_completes_and_writes_three_files",
        "cli/test_run_evaluators.py::test_an_added_llm_judge_runs_on_the_configured_judge",
        "cli/test_run_evaluators.py::test_an_unknown_added_evaluator_names_the_option_and_what_custom_dir_means",
        "cli/test_run_evaluators.py::test_evaluators_are_added_to_every_item_with_their_options",
        "cli/test_secrets.py::test_a_judge_that_echoes_the_key_leaks_it_nowhere",
        "cli/test_secrets.py::test_an_agent_that_echoes_the_key_leaks_it_nowhere",
        "cli/test_secrets.py::test_credentials_in_the_judge_url_are_shown_as_stars",
        "cli/test_stray_files.py::test_a_judge_run_leaves_no_folder_in_the_temp_folder",
        "cli/test_traces_to_verdicts.py::test_traces_become_a_document_whose_runs_compare_in_markdown_and_junit_and_gate",
        "evaluators/test_time_limit.py::test_cli_evaluator_timeout_ends_a_hanging_run",
        "evaluators/test_user_code_isolation.py::test_a_module_that_hangs_at_import_is_an_error_result",
        "evaluators/test_user_code_isolation.py::test_a_real_ctrl_c_still_stops_the_run",
        "evaluators/test_user_code_isolation.py::test_an_escaping_evaluator_costs_its_row_only",
        "judges/test_judges.py::test_a_killed_run_resumes_without_repeating_completed_calls",
        "judges/test_judges.py::test_cli_run_with_openai_environment_and_no_key_leaks",
        "judges/test_judges.py::test_judged_runs_contact_only_the_configured_model",
        "judges/test_promptflow_retries.py::test_a_throttled_cli_run_prints_no_promptflow_lines",
        "notebook/test_labels_file.py::test_a_papermill_run_does_not_bring_back_interactive_labels",
        "reporting/test_run_spans.py::test_spans_go_back_to_their_rows_and_thread_turns",
        "spans/test_evaluator_isolation.py::test_intake_stays_fast_while_three_evaluators_hang",
        "spans/test_evaluator_isolation.py::test_spans_eval_writes_timeout_and_crash_results_and_exits",
        "spans/test_lambda_requirements.py::test_the_sdk_evaluator_zip_runs_in_a_fresh_interpreter_with_only_the_zip",
        "spans/test_to_document.py::test_the_demo_agents_trace_file_becomes_a_document_that_validates_runs_and_replays",
    }
)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(config, items):
    """Mark slow tests (``pytest -m "not slow"`` is the fast tier) and keep Spark tests on one xdist worker.

    One worker owns the Spark session (one JVM of 1 GB, not two fighting over two cores).
    """
    tests = REPO / "tests"
    for item in items:
        relative = Path(str(item.path)).resolve().relative_to(tests).as_posix()
        if (
            SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ()))
            or relative.startswith(SLOW_FOLDERS)
            or relative in SLOW_FILES
            or f"{relative}::{getattr(item, 'originalname', item.name)}" in SLOW_TESTS
        ):
            item.add_marker(pytest.mark.slow)
        if relative.startswith("spark/") or "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))
