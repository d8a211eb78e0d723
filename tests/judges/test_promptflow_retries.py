"""Custom .prompty judges under 429s: promptflow's own retries are off, so every HTTP request is one judge-pool
attempt, the pool's 429 back-off governs them, and promptflow's log lines end up in evalkit's error message
instead of on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import evalkit
from evalkit.judges.pool import JudgeFailure
from evalkit.judges.promptflow_calls import fold, promptflow_call, retry_cells

REPO = Path(__file__).resolve().parents[2]
THROTTLED = "Rate limit is exceeded. Try again later."


def document(n=3):
    return {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"professional_tone": {}},
        "items": [{"prompt": f"Question {i}?", "response": "Happy to help."} for i in range(n)],
    }


def config(server):
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


def judge(project):
    shutil.copytree(REPO / "custom-evaluators/professional_tone", project.custom / "professional_tone")


def run(server, **options):
    options = {"cache": False, "progress": False, **options}
    return evalkit.evaluate(evalkit.load(document()), model_config=config(server), **options)


def test_every_request_is_one_pool_attempt_and_429s_halve_the_limit(model_server, project):
    judge(project)
    model_server.fail_next(4, status=429, retry_after=0, message=THROTTLED)
    scored = run(model_server, concurrency=4, judge_attempts=6)
    assert scored["professional_tone_result"].isin(["pass", "fail"]).all()
    facts = scored.attrs["evalkit"]["judge"]
    # promptflow's loop would have retried each 429 inside the call: 3 calls, 7 requests.
    assert model_server.request_count == facts["calls"] == 3 + 4
    assert facts["throttled"] >= 1  # the pool saw the 429s and backed off


def test_persistent_429_is_the_pools_error_with_status_and_message(model_server, project, capfd):
    judge(project)
    model_server.fail_randomly(1.0, status=429, retry_after=0, message=THROTTLED)
    scored = run(model_server, judge_attempts=3)
    assert (scored["professional_tone_code"] == "judgeRateLimited").all()
    assert scored.loc[0, "professional_tone_error"] == f"HTTP 429: {THROTTLED} (after 3 attempts)"
    assert model_server.request_count == scored.attrs["evalkit"]["judge"]["calls"] == 3 * 3
    assert "promptflow" not in capfd.readouterr().err


def test_promptflow_lines_that_add_something_are_folded_into_the_error(model_server, project, capfd):
    project.evaluator(
        "noisy",
        """
        import logging
        from pathlib import Path
        from promptflow.client import load_flow

        class Noisy:
            def __init__(self, *, model_config, **_):
                config = {**model_config, "type": "openai"}
                self.flow = load_flow(str(Path(__file__).with_suffix(".prompty")), model={"configuration": config})

            def __call__(self, *, response="", **_):
                logging.getLogger("promptflow.core._prompty_utils").warning("Model not found. Using cl100k_base.")
                self.flow(response=response)
                raise RuntimeError("the judge gave up")
        """,
        prompty="---\nname: noisy\nmodel:\n  api: chat\n  parameters:\n    max_tokens: 50\ninputs:\n  response:\n    type: string\n---\n"
        "system:\nGrade.\nuser:\n{{response}}\n",
    )
    doc = {**document(1), "default_evaluators": {"noisy": {}}}
    scored = evalkit.evaluate(
        evalkit.load(doc), model_config=config(model_server), cache=False, progress=False
    )
    assert scored.loc[0, "noisy_error"] == (
        "RuntimeError: the judge gave up (promptflow: WARNING Model not found. Using cl100k_base.)"
    )
    assert "Model not found" not in capfd.readouterr().err


def test_promptflow_outside_evalkit_keeps_its_own_retries(model_server, project):
    judge(project)
    run(model_server)  # evalkit's calls turn the retries off while they run, and back on after
    from promptflow.client import load_flow

    flow = load_flow(
        str(project.custom / "professional_tone/professional_tone.prompty"),
        model={"configuration": {**config(model_server), "type": "openai"}},
    )
    model_server.reset()
    model_server.fail_next(2, status=429, retry_after=0)
    with promptflow_call():  # not nested: the count is back to promptflow's own on the way out
        pass
    flow(user_prompt="Q", response="A")
    assert model_server.request_count == 3
    assert [cell.cell_contents for cell in retry_cells()] == [10, 10]


def test_the_retry_loops_are_found_in_the_installed_promptflow():
    """If an upgrade moves promptflow's retry loop, this names the cause of the count tests failing."""
    assert len(retry_cells()) == 2  # Prompty.__call__ and AsyncPrompty.__call__
    with promptflow_call():
        assert [cell.cell_contents for cell in retry_cells()] == [0, 0]


def test_fold_drops_what_the_error_already_says():
    failure = JudgeFailure(f"HTTP 429: {THROTTLED}", "judgeRateLimited", retryable=True, retry_after=1.0)
    heard = [
        f"ERROR Exception occurs: RateLimitError: Error code: 429 - {THROTTLED}",
        "ERROR RateLimitError reached max retry. Exit retry with user error.",
    ]
    assert fold(failure, heard) is failure
    folded = fold(
        failure, [*heard, "WARNING gpt-4 may update over time.", "WARNING gpt-4 may update over time."]
    )
    assert str(folded) == f"HTTP 429: {THROTTLED} (promptflow: WARNING gpt-4 may update over time.)"
    assert (folded.code, folded.retryable, folded.retry_after) == ("judgeRateLimited", True, 1.0)


def test_a_throttled_cli_run_prints_no_promptflow_lines(model_server, project):
    judge(project)
    (project.root / "doc.json").write_text(json.dumps(document()))
    model_server.fail_randomly(1.0, status=429, retry_after=0, message=THROTTLED)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_"))}
    env = {
        **clean,
        "OPENAI_BASE_URL": model_server.openai_base_url,
        "OPENAI_MODEL": "judge",
        "OPENAI_API_KEY": "k",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", "out", "--no-cache"],
        cwd=project.root, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr
    assert "promptflow" not in proc.stderr and "RateLimitError" not in proc.stderr, proc.stderr
    items = json.loads((project.root / "out/results.json").read_text())["items"]
    assert len(items) == 3
    # The pool's 5 attempts per row, one request each, and the count evalkit reports is the server's.
    assert model_server.request_count == 3 * 5
    assert "15 calls" in proc.stdout
