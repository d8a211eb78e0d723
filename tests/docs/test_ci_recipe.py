"""The CI recipes of docs/ci.md run: their shell steps, in order, in a fresh clone of this repository.

docs/ci/github-evalkit.yml is parsed as a GitHub Actions workflow and each step's ``run:`` script is run with
bash (``-eo pipefail``, as Actions does for ``shell: bash``), with the variables the runner sets (RUNNER_TEMP,
GITHUB_BASE_REF, GITHUB_STEP_SUMMARY, ...) pointing into tmp_path; an ``if: always()`` step runs after a
failed one, others do not. Skipped by design, and checked instead:

- ``uses:`` steps (checkout, setup-python, the comment, upload-artifact, the JUnit report) need GitHub: the
  clone stands in for the checkout and the venv for setup-python, and the files the others would post or
  upload (``with: path`` / ``report_paths``) must exist;
- the ``pip install`` step needs the network: the test runs the clone's evalkit from the shared venv
  (PYTHONPATH = the clone), with the packages constraints.txt pins.

docs/ci/gitlab-evalkit.yml is run the same way: its ``script:`` lines (the pip line skipped) and then its
``after_script:`` (which posts nothing without a token). Expressions (``${{ secrets.X }}``) become empty,
as an unset secret is on GitHub. No network: the clone's ``origin`` is this checkout.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lxml import etree

REPO = Path(__file__).resolve().parents[2]
GITHUB = "docs/ci/github-evalkit.yml"
GITLAB = "docs/ci/gitlab-evalkit.yml"
XSD = REPO / "tests" / "reporting" / "data" / "junit-10.xsd"

pytestmark = pytest.mark.slow


def git(*args, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def clone(tmp_path) -> Path:
    """A fresh clone of this checkout's committed HEAD, on a branch ``main-base`` (the target) and ``pr``."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(target)], check=True, capture_output=True)
    git("config", "user.email", "ci@example.com", cwd=target)
    git("config", "user.name", "ci", cwd=target)
    git("checkout", "--quiet", "-b", "pr", cwd=target)
    git("branch", "main-base", cwd=target)
    # the clone is its own origin: origin/main-base exists and fetching needs no network
    git("remote", "set-url", "origin", str(target), cwd=target)
    git("fetch", "--quiet", "origin", cwd=target)
    return target


def environment(tmp_path: Path, clone: Path, extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_", "RUNNER_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(clone)
    env.update(extra)
    return env


def expression_free(values: dict | None) -> dict:
    """Workflow ``env:`` values; an expression (a secret, a variable) becomes empty, as when it is unset."""
    return {k: "" if "${{" in str(v) else str(v) for k, v in (values or {}).items()}


def run_github(clone: Path, tmp_path: Path, overrides: dict | None = None) -> tuple[list, dict]:
    """Run the workflow's steps (see the module docstring); ``[(name, outcome)]`` and the runner's paths."""
    workflow = yaml.safe_load((clone / GITHUB).read_text())
    job = next(iter(workflow["jobs"].values()))
    paths = {"RUNNER_TEMP": tmp_path / "runner", "GITHUB_STEP_SUMMARY": tmp_path / "step_summary.md"}
    paths["RUNNER_TEMP"].mkdir()
    runner = {
        **{k: str(v) for k, v in paths.items()},
        "GITHUB_BASE_REF": "main-base",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "example/agent",
        "GITHUB_RUN_ID": "42",
        "GITHUB_WORKSPACE": str(clone),
    }
    env = environment(tmp_path, clone, runner)
    env.update(expression_free(workflow.get("env")))
    env.update(expression_free(job.get("env")))
    env.update(overrides or {})
    outcomes, failed = [], False
    for step in job["steps"]:
        name = step.get("name") or step.get("uses") or step["run"].splitlines()[0]
        if failed and "always()" not in str(step.get("if", "")):
            outcomes.append((name, "not run: an earlier step failed"))
        elif "uses" in step:
            outcomes.append((name, "skipped: needs GitHub"))
            for key in ("path", "report_paths"):
                if key in (step.get("with") or {}):
                    assert (clone / step["with"][key]).exists(), f"{name}: nothing at {step['with'][key]}"
        elif "pip install" in step["run"]:
            outcomes.append((name, "skipped: needs the network (the venv has the packages)"))
        else:
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=clone / step.get("working-directory", "."),
                env={**env, **expression_free(step.get("env"))},
                capture_output=True,
                text=True,
                timeout=300,
            )
            outcomes.append((name, proc.returncode))
            assert "Traceback" not in proc.stderr, proc.stderr
            failed = failed or proc.returncode != 0
    return outcomes, paths


def test_github_workflow_runs_on_an_unchanged_pull_request(clone, tmp_path):
    outcomes, paths = run_github(clone, tmp_path)
    by_name = dict(outcomes)
    assert by_name["Evaluate the target branch (baseline)"] == 0
    assert by_name["Evaluate the pull request"] == 0
    assert by_name["Job summary"] == 0
    assert by_name["Install evalkit"].startswith("skipped")
    assert by_name["Upload report.html and results"].startswith("skipped")
    summary = paths["GITHUB_STEP_SUMMARY"].read_text()
    assert summary.startswith("## evalkit: Contoso HR assistant")
    assert "No significant regression against baseline" in summary
    assert "[report.html](https://github.com/example/agent/actions/runs/42)" in summary
    assert (clone / "results" / "pr" / "report.html").stat().st_size > 0
    schema = etree.XMLSchema(etree.parse(str(XSD)))
    assert schema.validate(etree.parse(str(clone / "results" / "junit.xml")))


def gate_document(path: Path, wrong: set[int]) -> None:
    items = [
        {
            "prompt": f"Question {i}?",
            "expected_response": f"Answer {i}.",
            "response": "No idea." if i in wrong else f"Answer {i}.",
        }
        for i in range(40)
    ]
    doc = {"schemaVersion": "1.11.0", "metadata": {"name": "gate"}, "default_evaluators": {"ExactMatch": {}}}
    path.write_text(json.dumps({**doc, "items": items}))


def commit_document(clone: Path, branch: str, wrong: set[int]) -> None:
    git("checkout", "--quiet", branch, cwd=clone)
    gate_document(clone / "data" / "gate.json", wrong)
    git("add", "data/gate.json", cwd=clone)
    git("commit", "--quiet", "-m", f"gate document on {branch}", cwd=clone)


def test_github_workflow_fails_the_check_on_a_regression_and_still_posts(clone, tmp_path):
    base_wrong = set(random.Random(1).sample(range(40), 4))
    commit_document(clone, "main-base", base_wrong)
    commit_document(clone, "pr", base_wrong | set(range(20, 34)))
    git("fetch", "--quiet", "origin", cwd=clone)
    outcomes, paths = run_github(clone, tmp_path, {"EVAL_DOC": "data/gate.json"})
    by_name = dict(outcomes)
    assert by_name["Evaluate the pull request"] == 1
    assert by_name["Job summary"] == 0  # if: always()
    summary = paths["GITHUB_STEP_SUMMARY"].read_text()
    assert ":x: **Significant regression** against baseline in ExactMatch." in summary
    assert (clone / "results" / "junit.xml").exists()


def test_github_workflow_without_a_baseline_posts_the_summary_and_does_not_gate(clone, tmp_path):
    commit_document(clone, "pr", {1, 2})  # the document is new in the pull request
    git("fetch", "--quiet", "origin", cwd=clone)
    outcomes, paths = run_github(clone, tmp_path, {"EVAL_DOC": "data/gate.json"})
    assert dict(outcomes)["Evaluate the target branch (baseline)"] == 0
    assert dict(outcomes)["Evaluate the pull request"] == 0
    summary = paths["GITHUB_STEP_SUMMARY"].read_text()
    assert summary.startswith("## evalkit: gate") and "Against the baseline" not in summary
    assert "| ExactMatch | 95.0% | 38 | 2 | 0 |" in summary


def test_gitlab_job_runs_its_script_and_after_script(clone, tmp_path):
    job = yaml.safe_load((clone / GITLAB).read_text())["evalkit"]
    env = environment(
        tmp_path,
        clone,
        {
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main-base",
            "CI_BUILDS_DIR": str(tmp_path / "builds"),
            "CI_JOB_URL": "https://gitlab.example.com/group/agent/-/jobs/7",
            "CI_API_V4_URL": "http://127.0.0.1:9/api/v4",  # never called: no EVALKIT_NOTE_TOKEN
        },
    )
    env.pop("EVALKIT_NOTE_TOKEN", None)
    env.update(expression_free(job.get("variables")))
    (tmp_path / "builds").mkdir()
    script = [line for line in job["script"] if "pip install" not in line]
    assert len(script) == len(job["script"]) - 1
    # GitLab runs the script lines in one shell (a variable set by one is seen by the next), after_script in
    # another
    for lines in (script, job["after_script"]):
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", "\n".join(lines)],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, (lines, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
    summary = (clone / "results" / "summary.md").read_text()
    assert "No significant regression against evalkit\\-baseline" in summary
    assert (
        "(https://gitlab.example.com/group/agent/-/jobs/7/artifacts/file/results/pr/report.html)" in summary
    )
    assert (clone / job["artifacts"]["reports"]["junit"]).exists()
    for path in job["artifacts"]["paths"]:
        assert (clone / path).exists()
