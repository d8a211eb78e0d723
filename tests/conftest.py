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
        "spans/test_invoke_isolation.py",
    }
)
#: Single tests of about 1.5 s or more (subprocess runs, agents, judges, kills, live captures), from
#: ``--durations``: the fast tier keeps the many quick tests of every module and stays near 2 minutes.
SLOW_TESTS = frozenset(
    {
        "agents/test_agent_runs.py::test_run_with_the_demo_agent_writes_results_and_spans",
        "agents/test_demo_agent.py::test_retrieval_executions_validate_against_the_upstream_diagnostics",
        "analysis/test_compare.py::test_compare_reads_run_folders",
        "cli/test_bad_input.py::test_a_50_mb_schema_version_is_quoted_cut_short",
        "cli/test_bad_input.py::test_a_gzip_span_file_is_limited_after_decompression",
        "cli/test_bad_input.py::test_a_lone_surrogate_in_a_key_is_refused",
        "cli/test_bad_input.py::test_a_name_at_the_length_limit_is_scaffolded_and_runs",
        "cli/test_bad_input.py::test_nesting_at_the_limit_runs_and_writes_its_results",
        "cli/test_bad_input.py::test_run_refuses_a_multi_gb_document_without_reading_it",
        "cli/test_bad_input.py::test_run_refuses_a_number_that_would_be_infinity",
        "cli/test_bad_input.py::test_run_refuses_duplicate_keys_in_a_nested_object",
        "cli/test_bad_input.py::test_run_refuses_json_nested_20000_levels",
        "cli/test_bad_input.py::test_spans_eval_refuses_deep_reference_inputs",
        "cli/test_bad_input.py::test_spans_eval_refuses_dev_zero_without_reading_it",
        "cli/test_bad_input.py::test_spans_eval_refuses_json_nested_20000_levels",
        "cli/test_bad_input.py::test_spans_eval_reports_a_span_line_with_duplicate_keys",
        "cli/test_bad_input.py::test_spans_serve_on_a_corrupt_store_is_one_error_line",
        "cli/test_bad_input.py::test_spans_serve_with_a_file_as_the_store_folder_says_so",
        "cli/test_bad_input.py::test_spans_status_on_a_corrupt_store_is_one_error_line",
        "cli/test_bad_input.py::test_the_size_limit_is_configurable",
        "cli/test_bad_input.py::test_validate_refuses_an_integer_of_5000_digits_with_its_path",
        "cli/test_bad_input.py::test_validate_refuses_duplicate_keys_naming_the_key_and_its_path",
        "cli/test_compare_cli.py::test_one_paired_row_of_few_shared_rows",
        "cli/test_compare_cli.py::test_one_regressed_row_and_the_warnings_of_the_page",
        "cli/test_new_llm_reference.py::test_the_scaffolded_judge_sees_the_reference_answer_and_the_context",
        "cli/test_run.py::test_debug_log_shows_discovery_and_timings",
        "cli/test_run.py::test_demo_results_validate_against_the_upstream_schema",
        "cli/test_run.py::test_demo_run_completes_and_writes_three_files",
        "cli/test_run.py::test_demo_statuses_and_scores",
        "cli/test_run.py::test_fail_under_gate",
        "cli/test_run.py::test_parallel_save_falls_back_when_the_child_fails",
        "cli/test_run.py::test_parallel_save_writes_the_same_files",
        "cli/test_run.py::test_recorded_citations_survive_the_citations_evaluator",
        "cli/test_run.py::test_schema_problems_are_exit_2",
        "cli/test_run.py::test_unknown_evaluator_is_exit_2_with_the_seed_text",
        "cli/test_run_evaluators.py::test_an_added_llm_judge_runs_on_the_configured_judge",
        "cli/test_run_evaluators.py::test_an_unknown_added_evaluator_names_the_option_and_what_custom_dir_means",
        "cli/test_run_evaluators.py::test_evaluator_options_that_are_not_a_json_object_are_refused",
        "cli/test_run_evaluators.py::test_evaluators_are_added_to_every_item_with_their_options",
        "cli/test_secrets.py::test_a_judge_that_echoes_the_key_leaks_it_nowhere",
        "cli/test_secrets.py::test_an_agent_that_echoes_the_key_leaks_it_nowhere",
        "cli/test_secrets.py::test_credentials_in_the_judge_url_are_shown_as_stars",
        "cli/test_stray_files.py::test_a_judge_run_leaves_no_folder_in_the_temp_folder",
        "cli/test_traces_to_verdicts.py::test_traces_become_a_document_whose_runs_compare_in_markdown_and_junit_and_gate",
        "evaluators/test_custom_evaluator_processes.py::test_evalkit_run_kills_what_an_evaluator_started_and_the_group_of_a_row_holding_the_gil",
        "evaluators/test_time_limit.py::test_cli_evaluator_timeout_ends_a_hanging_run",
        "evaluators/test_time_limit.py::test_no_worker_thread_outlives_a_run_without_timeouts",
        "evaluators/test_user_code_isolation.py::test_a_constructor_raising_a_base_exception_is_a_load_error_for_its_rows",
        "evaluators/test_user_code_isolation.py::test_a_module_that_hangs_at_import_is_an_error_result",
        "evaluators/test_user_code_isolation.py::test_a_non_daemon_thread_started_by_the_constructor_does_not_keep_the_run_alive",
        "evaluators/test_user_code_isolation.py::test_a_real_ctrl_c_still_stops_the_run",
        "evaluators/test_user_code_isolation.py::test_a_stray_non_daemon_thread_does_not_keep_the_run_alive",
        "evaluators/test_user_code_isolation.py::test_an_escaping_evaluator_costs_its_row_only",
        "judges/test_judge_faults.py::test_a_429_storm_is_ridden_out_with_less_concurrency",
        "judges/test_judge_prices.py::test_price_option_file_and_not_set_reach_every_place",
        "judges/test_judge_samples.py::test_samples_report_pass_share_flips_and_gate_by_the_pass_rule",
        "judges/test_judge_usage.py::test_calls_and_tokens_are_what_the_server_saw_for_builtin_and_prompty_judges",
        "judges/test_judge_usage.py::test_retries_are_calls_and_a_cached_rerun_makes_none",
        "judges/test_judges.py::test_a_killed_run_resumes_without_repeating_completed_calls",
        "judges/test_judges.py::test_cli_run_with_openai_environment_and_no_key_leaks",
        "judges/test_judges.py::test_judged_runs_contact_only_the_configured_model",
        "judges/test_promptflow_retries.py::test_a_throttled_cli_run_prints_no_promptflow_lines",
        "judges/test_promptflow_retries.py::test_persistent_429_is_the_pools_error_with_status_and_message",
        "judges/test_unparseable_answers.py::test_every_judge_says_could_not_parse_score_whatever_the_response_format",
        "notebook/test_labels_file.py::test_a_papermill_run_does_not_bring_back_interactive_labels",
        "notebook/test_studio_errors.py::test_an_unreachable_model_shows_the_error_in_the_table_and_the_status",
        "reporting/test_run_spans.py::test_compare_page_shows_the_spans_of_run_b",
        "reporting/test_run_spans.py::test_spans_go_back_to_their_rows_and_thread_turns",
        "spans/test_evaluator_isolation.py::test_a_hanging_handler_times_out_and_the_run_goes_on",
        "spans/test_evaluator_isolation.py::test_intake_stays_fast_while_three_evaluators_hang",
        "spans/test_evaluator_isolation.py::test_spans_eval_writes_timeout_and_crash_results_and_exits",
        "spans/test_lambda_requirements.py::test_the_sdk_evaluator_zip_runs_in_a_fresh_interpreter_with_only_the_zip",
        "spans/test_online.py::test_kill_9_mid_stream_loses_no_acknowledged_span_and_evaluates_no_session_twice",
        "spans/test_online_receiver.py::test_the_cli_refuses_a_second_receiver_with_exit_2",
        "spans/test_online_receiver.py::test_the_cli_serves_https_with_tls_cert_and_tls_key",
        "spans/test_packaging.py::test_cli_packages_and_prints_what_went_in",
        "spans/test_record_content.py::test_capture_runs_live_against_model_server",
        "spans/test_span_shapes.py::test_a_fresh_capture_of_both_instrumentations_reads_the_same_way",
        "spans/test_spans.py::test_cli_writes_results_and_gates_on_the_pass_rate",
        "spans/test_spans.py::test_contract_violations_become_error_results_and_other_evaluators_keep_theirs",
        "spans/test_spans_invoke.py::test_a_handler_past_its_time_limit_is_a_lambda_timeout",
        "spans/test_spans_invoke.py::test_an_event_written_by_evalkits_payload_builder",
        "spans/test_spans_invoke.py::test_span_files_and_broken_events_are_refused_with_exit_2",
        "spans/test_spans_invoke.py::test_the_sdk_decorator_event_gets_the_full_sdk_response",
        "spans/test_spans_invoke.py::test_the_split_format_event_answer_is_read_from_its_event_record",
        "spans/test_split_form_demo.py::test_the_demo_evaluates_the_split_form_with_lambdas_and_builtin_judges",
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


_LLM_LIBRARIES = ("promptflow", "azure.ai.evaluation")
_imports_llm_libraries: dict[str, bool] = {}


def pytest_runtest_setup(item):
    """Before a test whose module imports promptflow or azure-ai-evaluation itself, import promptflow the way
    evalkit does (``judges.offline.import_promptflow_quietly``): promptflow builds an Azure Monitor exporter on
    import, which otherwise leaves a ``Microsoft-AzureMonitor-*`` folder in the machine's temporary folder at
    every test run."""
    path = str(getattr(item, "fspath", ""))
    if path not in _imports_llm_libraries:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError:
            text = ""
        _imports_llm_libraries[path] = any(name in text for name in _LLM_LIBRARIES)
    if _imports_llm_libraries[path]:
        from evalkit.judges.offline import import_promptflow_quietly

        import_promptflow_quietly()
