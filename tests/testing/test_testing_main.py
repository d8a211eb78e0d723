"""``python -m evalkit.testing``: started as a user starts it, its printed lines evaluated by a real shell, a judge
call through the real openai client, then Ctrl-C (SIGINT) and a clean exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import openai
import pytest

from evalkit.judges.judge_answers import read_judge_answer
from evalkit.judges.models import _judge_config, judge_client


def start(*args: str, sigint_ignored: bool = False) -> tuple[subprocess.Popen, list[str]]:
    """The server process and the shell lines it printed (read until its ``unset`` line). ``sigint_ignored``:
    started as a script's ``python -m evalkit.testing &`` is, SIGINT ignored (bash without job control)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "evalkit.testing", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None,
    )
    lines = []
    while not lines or not lines[-1].startswith("unset "):
        line = process.stdout.readline()
        if not line:
            process.kill()
            raise AssertionError(f"the server printed no variables: {process.stderr.read()}")
        lines.append(line.rstrip("\n"))
    return process, lines


def shell_environment(lines: list[str]) -> dict[str, str]:
    """What ``eval "$(python -m evalkit.testing)"`` leaves in a POSIX shell's environment."""
    env = dict(os.environ, AZURE_OPENAI_ENDPOINT="https://stale.example", OPENAI_MODEL="stale")
    done = subprocess.run(
        ["sh", "-c", 'eval "$LINES"; env -0'],
        env={**env, "LINES": "\n".join(lines)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)


def stop(process: subprocess.Popen) -> tuple[int, str]:
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=10)
    return process.returncode, err


def test_openai_variables_a_judge_call_and_ctrl_c():
    process, lines = start()
    try:
        assert [line.split("=")[0] for line in lines] == [
            "export OPENAI_BASE_URL",
            "export OPENAI_API_KEY",
            "export OPENAI_MODEL",
            "unset AZURE_AI_OPENAI_ENDPOINT AZURE_OPENAI_ENDPOINT",
        ]
        port = lines[0].rsplit(":", 1)[1].removesuffix("/v1")
        assert lines[0] == f"export OPENAI_BASE_URL=http://127.0.0.1:{port}/v1"
        assert lines[1:3] == ["export OPENAI_API_KEY=local", "export OPENAI_MODEL=evalkit-model-server"]
        env = shell_environment(lines)
        assert "AZURE_OPENAI_ENDPOINT" not in env  # an Azure endpoint would win over OPENAI_*
        config = _judge_config(env)  # what evalkit's judge configuration reads from that shell
        assert config == {
            "base_url": f"http://127.0.0.1:{port}/v1",
            "model": "evalkit-model-server",
            "api_key": "local",
        }
        client, model = judge_client(config)  # evalkit's own judge client: the real openai.OpenAI
        assert isinstance(client, openai.OpenAI) and model == "evalkit-model-server"
        answer = client.chat.completions.create(
            model=model,
            messages=[
                {
                    "role": "system",
                    "content": 'Grade 1-5. Reply with JSON only: {"score": <1-5>, "reason": "..."}',
                },
                {
                    "role": "user",
                    "content": "# Request\nWhich form starts parental leave?\n\n# Answer\nForm HR-12 starts parental leave.",
                },
            ],
        )
        verdict = read_judge_answer(answer.choices[0].message.content)
        assert verdict["score"] == 5, verdict  # every query word is in the answer: the heuristic judge's 5
    finally:
        code, err = stop(process)
    assert code == 0
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.splitlines() == [
        f"evalkit model server on http://127.0.0.1:{port} (heuristic judge answers); Ctrl-C stops it.",
        "Stopped after 1 request.",
    ]


def test_azure_variables_with_a_required_key(tmp_path):
    process, lines = start("--api", "azure", "--key", "s3cret")
    try:
        port = lines[0].rsplit(":", 1)[1]
        assert lines == [
            f"export AZURE_OPENAI_ENDPOINT=http://127.0.0.1:{port}",
            "export AZURE_OPENAI_API_KEY=s3cret",
            "export AZURE_OPENAI_DEPLOYMENT=evalkit-model-server",
            "export AZURE_AI_API_VERSION=2024-12-01-preview",
            "unset AZURE_AI_OPENAI_ENDPOINT AZURE_AI_MODEL_NAME AZURE_AI_API_KEY",
        ]
        config = _judge_config(shell_environment(lines))
        client = openai.AzureOpenAI(
            azure_endpoint=config["azure_endpoint"],
            api_key=config["api_key"],
            api_version=config["api_version"],
            max_retries=0,
        )
        reply = client.chat.completions.create(
            model=config["azure_deployment"], messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.model == "evalkit-model-server"
        wrong = openai.AzureOpenAI(
            azure_endpoint=config["azure_endpoint"],
            api_key="other",
            api_version="2024-12-01-preview",
            max_retries=0,
        )
        with pytest.raises(openai.AuthenticationError):
            wrong.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    finally:
        code, err = stop(process)
    assert code == 0 and err.splitlines()[-1] == "Stopped after 2 requests."


def test_sigterm_stops_it_cleanly_too_and_a_busy_port_is_an_error():
    process, lines = start()
    port = lines[0].rsplit(":", 1)[1].removesuffix("/v1")
    busy = subprocess.run(
        [sys.executable, "-m", "evalkit.testing", "--port", port], capture_output=True, text=True, timeout=20
    )
    assert busy.returncode == 2 and busy.stdout == ""
    assert busy.stderr.startswith(f"Error: cannot listen on 127.0.0.1:{port}: ")
    assert "Traceback" not in busy.stderr
    process.terminate()
    _, err = process.communicate(timeout=10)
    assert process.returncode == 0 and err.splitlines()[-1] == "Stopped after 0 requests."


def test_fail_rate_answers_429_with_retry_after_and_a_bad_rate_is_refused():
    process, lines = start("--fail-rate", "1")
    try:
        client = openai.OpenAI(base_url=lines[0].split("=", 1)[1], api_key="local", max_retries=0)
        with pytest.raises(openai.RateLimitError) as limited:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert limited.value.response.headers["retry-after"] == "0.5"
    finally:
        code, _ = stop(process)
    assert code == 0
    bad = subprocess.run(
        [sys.executable, "-m", "evalkit.testing", "--fail-rate", "2"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == "Error: --fail-rate 2.0 is not a share between 0 and 1 (e.g. 0.1)\n"


def test_sigint_stops_it_when_started_in_the_background_of_a_script():
    process, _ = start(sigint_ignored=True)
    code, err = stop(process)
    assert code == 0 and err.splitlines()[-1] == "Stopped after 0 requests."
